// @ts-check
// Sortable column headers: a header a list can be sorted by holds a button (reached by
// Tab, pressed by Enter or Space) and says how the list is sorted through aria-sort on its th; the
// others say "none". The header is built once and kept while the rows change under it, so the
// keyboard's focus stays on the button pressed and the order survives live updates. Pressing the
// sorted column's button again turns the order round. On a phone (app.css, table.cards.sortable)
// the same buttons are the row of "sort by" controls above the cards.
import { h } from './dom.js';

/** @typedef {'asc' | 'desc'} SortDir */
/** @typedef {{ key?: string, dir: SortDir }} SortState */
/** @typedef {string | { label: string, key: string, first?: SortDir }} Column */

const ARIA = { asc: 'ascending', desc: 'descending' };

/**
 * A thead for `columns` (a plain label: not sortable), following and changing `state`; `onSort`
 * after each change. `update()` shows `state` again (when it was set from elsewhere).
 * @param {Column[]} columns @param {SortState} state @param {() => void} onSort
 */
export function sortableHead(columns, state, onSort) {
  /** @type {{ th: HTMLElement, mark: HTMLElement, key: string }[]} */
  const sortable = [];
  const ths = columns.map((c) => {
    if (typeof c === 'string') return h('th', { scope: 'col', text: c });
    const mark = h('span', { class: 'sort-mark', 'aria-hidden': 'true' });
    const th = h('th', { scope: 'col', 'data-sort': c.key },
      h('button', {
        type: 'button', class: 'sort', 'data-sort-key': c.key,
        onclick: () => {
          state.dir = state.key === c.key ? (state.dir === 'asc' ? 'desc' : 'asc') : c.first ?? 'asc';
          state.key = c.key;
          update();
          onSort();
        },
      }, c.label, mark));
    sortable.push({ th, mark, key: c.key });
    return th;
  });
  function update() {
    for (const s of sortable) {
      const on = s.key === state.key;
      s.th.setAttribute('aria-sort', on ? ARIA[state.dir] : 'none');
      s.mark.textContent = on ? (state.dir === 'asc' ? ' ▲' : ' ▼') : '';
    }
  }
  update();
  const row = h('tr', {}, ths);
  return { el: h('thead', {}, row), row, update };
}

const COLLATE = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/**
 * `list` sorted by `state` (a copy), each item's value taken by `values[state.key]`: numbers by
 * size, text by the reader's language (numbers inside text by value: "10.0.0.9" before "10.0.0.10").
 * Missing values come last in either order; ties keep the list's own order.
 * @template T
 * @param {T[]} list @param {SortState} state @param {Record<string, (t: T) => string | number | undefined>} values
 * @returns {T[]}
 */
export function sortRows(list, state, values) {
  const of = state.key ? values[state.key] : undefined;
  if (!of) return list;
  const sign = state.dir === 'desc' ? -1 : 1;
  return list.map((t, i) => ({ t, i, v: of(t) })).sort((a, b) => {
    const am = a.v === undefined || a.v === '';
    const bm = b.v === undefined || b.v === '';
    if (am || bm) return am === bm ? a.i - b.i : am ? 1 : -1;
    const c = typeof a.v === 'number' && typeof b.v === 'number' ? a.v - b.v : COLLATE.compare(String(a.v), String(b.v));
    return c ? sign * c : a.i - b.i;
  }).map((x) => x.t);
}
