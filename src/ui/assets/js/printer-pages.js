// @ts-check
// One printer's pages per day, week or month (GET /api/devices/page-counts): bars (uPlot) beside the
// cumulative meter chart, the period totals, and the same numbers as a table (the chart's
// alternative for a screen reader, and for anyone who wants the figures). Periods are counted in
// this browser's time zone for now (the box-wide display zone will replace it).
import { get } from './api.js';
import { errorText, fmtInt, h } from './dom.js';
import uPlot from './uplot.js';
import { onLeave } from './view.js';

/** @typedef {import('./types').Schemas} S */
/** @typedef {S['PageCounts']['period']} Kind */

/** @type {[Kind, string, string][]} */
const KINDS = [['day', 'Days', 'day'], ['week', 'Weeks', 'week'], ['month', 'Months', 'month']];

/**
 * A period's name for people, in the zone it was counted in.
 * @param {Kind} kind @param {S['PeriodPages']} p @param {string} tz
 */
function periodName(kind, p, tz) {
  const start = new Date(p.start);
  if (kind === 'month') return start.toLocaleDateString(undefined, { timeZone: tz, month: 'long', year: 'numeric' });
  const date = start.toLocaleDateString(undefined, { timeZone: tz, weekday: 'short', day: 'numeric', month: 'short' });
  if (kind === 'day') return date;
  return 'Week ' + Number(p.label.slice(-2)) + ' (from ' + date + ')';
}

/** @param {number | null} v */
const cell = (v) => (v === null ? '–' : fmtInt(v));

/**
 * A period's notes: unknown, partial (readings do not cover it), a reset, today so far.
 * @param {S['PeriodPages']} p
 */
function notes(p) {
  const out = [];
  if (p.pages === null) out.push('no readings: unknown');
  else {
    if (Date.parse(p.end) > Date.now()) out.push('so far');
    else if (p.coverage < 0.999) out.push('readings cover ' + Math.round(p.coverage * 100) + '%: at least this many');
    if (p.reset) out.push('counter reset (new board): pages around it not counted');
  }
  return out.join('; ');
}

/**
 * The section content for one printer; `reload()` reads the periods again (after a new reading).
 * @param {string} serial
 */
export function pagesPerPeriod(serial) {
  // The box's zone (display.time_zone): the API counts in it when asked without `tz`, and says which.
  let tz = '';
  const buttons = KINDS.map(([k, label]) =>
    h('button', { type: 'button', 'data-kind': k, 'aria-pressed': k === 'day' ? 'true' : 'false', text: label }));
  const totals = h('p', { id: 'period-totals', role: 'status', 'aria-live': 'polite' });
  const chartBox = h('div', { class: 'chart', id: 'pages-chart', role: 'img', 'aria-label': 'Pages per period, bars' });
  const tableBox = h('div', { id: 'pages-table' });
  const csv = h('a', { id: 'pages-csv', text: 'Download CSV', download: '' });
  const content = [
    h('div', { class: 'periods', role: 'group', 'aria-label': 'Count pages per' }, buttons),
    totals, chartBox,
    h('details', { class: 'pages-details' }, h('summary', { text: 'The numbers as a table' }), tableBox),
    h('p', { class: 'muted' }, h('span', { id: 'pages-zone' }), 'Weeks start on Monday. ', csv),
  ];
  /** @type {Kind} */
  let kind = 'day';
  /** @type {uPlot | null} */
  let chart = null;
  const destroy = () => {
    chart?.destroy();
    chart = null;
  };
  onLeave(destroy);

  /** @param {S['PageCounts']} r */
  function draw(r) {
    tz = r.tz;
    const zone = document.getElementById('pages-zone');
    if (zone) zone.textContent = 'Counted in the box\'s time zone, ' + tz + ' (Settings → Polling and alerts). ';
    const unit = KINDS.find(([k]) => k === kind)?.[2] ?? kind;
    // Unknown periods before the first known one are before the printer's history: left out.
    const firstKnown = r.periods.findIndex((p) => p.pages !== null);
    const periods = firstKnown < 0 ? [] : r.periods.slice(firstKnown);
    const colour = periods.some((p) => p.color_pages !== null);
    const mono = periods.some((p) => p.mono_pages !== null);
    const t = r.totals;
    if (!periods.length) {
      totals.textContent = 'No pages counted yet: the printer has no readings in these ' + unit + 's.';
    } else {
      const parts = [fmtInt(t.pages ?? 0) + ' pages in ' + periods.length + ' ' + unit + (periods.length === 1 ? '' : 's')];
      if (mono && t.mono_pages !== null) parts.push(fmtInt(t.mono_pages) + ' mono');
      if (colour && t.color_pages !== null) parts.push(fmtInt(t.color_pages) + ' colour');
      const unknown = periods.filter((p) => p.pages === null).length;
      totals.textContent = 'Total: ' + parts.join(', ') + '.'
        + (unknown ? ' ' + unknown + ' ' + unit + (unknown === 1 ? '' : 's') + ' without readings not included.' : '');
    }
    chartBox.setAttribute('aria-label', 'Pages per ' + unit + ', bars; the table below lists the same numbers. ' + totals.textContent);
    chartBox.dataset.periods = String(periods.length);
    chartBox.dataset.kind = kind;
    csv.href = '/api/devices/page-counts?' + new URLSearchParams({ serial, period: kind, tz, format: 'csv' }).toString();

    const head = ['Period', 'Pages', ...(mono ? ['Mono'] : []), ...(colour ? ['Colour'] : []), 'Note'];
    // No scrolling box: the table fits a phone by itself (its notes and names wrap).
    tableBox.replaceChildren(h('table', { class: 'pages-table' },
      h('caption', { class: 'sr-only', text: 'Pages per ' + unit + ', newest first' }),
      h('thead', {}, h('tr', {}, head.map((x) => h('th', { scope: 'col', text: x })))),
      h('tbody', {}, [...periods].reverse().map((p) => h('tr', {},
        h('th', { scope: 'row', text: periodName(kind, p, tz) }),
        h('td', { class: 'num', text: cell(p.pages) }),
        mono ? h('td', { class: 'num', text: cell(p.mono_pages) }) : null,
        colour ? h('td', { class: 'num', text: cell(p.color_pages) }) : null,
        h('td', { class: 'note', text: notes(p) }))))));

    destroy();
    chartBox.replaceChildren();
    if (!periods.length) return;
    const width = Math.max(260, chartBox.clientWidth || 600);
    const xs = periods.map((p) => Date.parse(p.start) / 1000);
    const bars = uPlot.paths.bars ? uPlot.paths.bars({ size: [0.7, 40], align: 1 }) : undefined;
    // With colour: the colour bar in front of the total's, so each bar shows how much of it was colour.
    /** @type {[string, (number | null)[], string][]} */
    const all = [['Total', periods.map((p) => p.pages), '#1f5fbf'],
      ...(colour ? /** @type {[string, (number | null)[], string][]} */ ([['Colour', periods.map((p) => p.color_pages), '#c2187a']]) : [])];
    chart = new uPlot({
      width, height: window.innerWidth < 640 ? 180 : 220,
      // Bars start at 0; each period's bar sits at its start.
      // The x scale ends with the last period's end: its bar (drawn from its start) is whole.
      scales: {
        x: { time: true, range: () => [xs[0], Date.parse(periods[periods.length - 1].end) / 1000] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      // The legend names the period under the cursor; a period without readings says so.
      series: [{
        label: 'Period',
        value: (/** @type {uPlot} */ _u, /** @type {number} */ _v, /** @type {number} */ _s, /** @type {number | null} */ i) =>
          (i === null || !periods[i] ? '–' : periodName(kind, periods[i], tz)),
      }, ...all.map(([label, , fill]) => ({
        label, fill, stroke: fill, paths: bars, points: { show: false },
        value: (/** @type {uPlot} */ _u, /** @type {number | null} */ v, /** @type {number} */ _s, /** @type {number | null} */ i) =>
          (i === null ? '–' : v === null ? 'unknown' : fmtInt(v)),
      }))],
      axes: [{}, { size: 52, values: (/** @type {uPlot} */ _u, /** @type {number[]} */ vals) => vals.map((v) => fmtInt(v)) }],
      cursor: { drag: { x: false } },
      legend: { show: true },
    }, [xs, ...all.map(([, v]) => v)], chartBox);
  }

  // Only the answer to the last choice is drawn (a slow earlier one may come after it).
  let asked = 0;
  async function load() {
    const mine = ++asked;
    totals.textContent = 'Loading…';
    try {
      const r = await get('/api/devices/page-counts', { serial, period: kind });
      if (mine === asked) draw(r);
    } catch (err) {
      if (mine === asked) totals.textContent = 'Could not count the pages: ' + errorText(err);
    }
  }
  for (const b of buttons) {
    b.onclick = () => {
      kind = /** @type {Kind} */ (b.dataset.kind);
      for (const x of buttons) x.setAttribute('aria-pressed', String(x === b));
      load();
    };
  }
  let lastWidth = 0;
  const onResize = () => {
    const w = chartBox.clientWidth;
    if (chart && Math.abs(w - lastWidth) > 20) {
      lastWidth = w;
      chart.setSize({ width: w, height: chart.height });
    }
  };
  window.addEventListener('resize', onResize);
  onLeave(() => window.removeEventListener('resize', onResize));
  return { content, start: load, reload: load };
}
