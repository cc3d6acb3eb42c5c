// @ts-check
// Tables as lists of cards on a phone (app.css, below 640 px): each cell shows its column's name
// from its `data-label`. A view may set it on each cell itself; a cell made without one gets the
// text of its column's header here, so that any table a view draws (now or later) reads as a card
// without each view knowing about phones. Cells are labelled as they are added to the view.
/** @param {Element} table */
function labelTable(table) {
  const head = table.querySelector(':scope > thead > tr:last-child');
  if (!head) return;
  /** @type {string[]} */
  const names = [];
  for (const th of head.children) {
    const span = th instanceof HTMLTableCellElement ? th.colSpan : 1;
    for (let i = 0; i < span; i++) names.push((th.textContent || '').trim());
  }
  for (const tr of table.querySelectorAll(':scope > tbody > tr')) {
    let col = 0;
    for (const cell of tr.children) {
      if (!cell.hasAttribute('data-label') && names[col] !== undefined) cell.setAttribute('data-label', names[col]);
      col += cell instanceof HTMLTableCellElement ? cell.colSpan : 1;
    }
  }
}

/** Labels the cells of every table under `root`, now and whenever rows are added. @param {HTMLElement} root */
export function labelCells(root) {
  /** @param {Node} n */
  const tablesOf = (n) => {
    if (!(n instanceof Element)) return [];
    const own = n.closest('table');
    return own ? [own] : [...n.querySelectorAll('table')];
  };
  for (const t of root.querySelectorAll('table')) labelTable(t);
  new MutationObserver((records) => {
    /** @type {Set<Element>} */
    const tables = new Set();
    for (const r of records) for (const n of r.addedNodes) for (const t of tablesOf(n)) tables.add(t);
    for (const t of tables) labelTable(t);
  }).observe(root, { childList: true, subtree: true });
}
