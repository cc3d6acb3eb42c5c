// @ts-check
// One printer's meters and supplies over time (uPlot): a period (day, week, month, year) or a
// range of dates within the printer's history, redrawn on a change and on a resize.
import { get } from './api.js';
import { fmtInt, h, when } from './dom.js';
import { meterExport } from './meter-export.js';
import { meters, supplyColour } from './printer-parts.js';
import uPlot from './uplot.js';
import { onLeave } from './view.js';

/** @typedef {import('./types').Schemas} S */

const PERIODS = /** @type {const} */ ([['day', 'Day'], ['week', 'Week'], ['month', 'Month'], ['year', 'Year']]);

/**
 * The charts' section content for one printer; `reload()` reads its history's bounds again and
 * redraws (after a new reading).
 * @param {string} serial
 */
export function historyCharts(serial) {
  const chartBox = h('div', { class: 'chart', id: 'meter-chart', role: 'img', 'aria-label': 'Page meters over time' });
  const supplyBox = h('div', {
    class: 'chart', id: 'supply-chart', role: 'img', 'aria-label': 'Supply levels over time',
  });
  const chartMsg = h('p', { class: 'muted', id: 'chart-msg', role: 'status', 'aria-live': 'polite' });
  const periodBtns = PERIODS.map(([p, label]) =>
    h('button', { type: 'button', 'data-period': p, 'aria-pressed': p === 'month' ? 'true' : 'false', text: label }));
  const since = h('input', { type: 'date', id: 'since', 'aria-label': 'From' });
  const until = h('input', { type: 'date', id: 'until', 'aria-label': 'To' });
  const customBtn = h('button', { type: 'button', id: 'custom-go', text: 'Show range' });
  const exporter = meterExport(serial);
  const content = [
    h('div', { class: 'periods', role: 'group', 'aria-label': 'Period' }, periodBtns,
      h('span', { class: 'custom' }, since, h('span', { 'aria-hidden': 'true', text: '–' }), until, customBtn)),
    exporter.node, chartMsg, chartBox, h('h3', { text: 'Supplies over time' }), supplyBox,
  ];

  /** @type {uPlot[]} */
  let charts = [];
  /** @type {import('./types').GetQuery<'/api/devices/metrics/history'>['period']} */
  let period = 'month';
  /** @type {S['MetricsBounds'] | null} */
  let bounds = null;
  function destroyCharts() {
    for (const c of charts) c.destroy();
    charts = [];
  }
  onLeave(destroyCharts);
  async function loadBounds() {
    bounds = await get('/api/devices/metrics/bounds', { serial }).catch(() => null);
    if (bounds) {
      const d0 = bounds.min_timestamp.slice(0, 10);
      const d1 = new Date().toISOString().slice(0, 10);
      for (const el of [since, until]) {
        el.min = d0;
        el.max = d1;
      }
      if (!since.value) {
        since.value = d0;
        until.value = d1;
      }
    }
  }
  /** @param {[string, string]} [range] */
  async function drawChart(range) {
    const width = Math.max(280, chartBox.clientWidth || 600);
    // About a point per 2 px: more would not show. LTTB on the agent keeps the shape.
    const maxPoints = Math.max(150, Math.min(600, Math.round(width / 2)));
    chartMsg.textContent = 'Loading…';
    exporter.show(period || 'month', range);
    const rows = (await get('/api/devices/metrics/history', range
      ? { serial, maxPoints, since: range[0], until: range[1] }
      : { serial, maxPoints, period })) || [];
    rows.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
    destroyCharts();
    chartBox.replaceChildren();
    supplyBox.replaceChildren();
    if (!rows.length) {
      chartMsg.textContent = bounds
        ? 'No readings in this period: choose a longer one (readings from ' + when(bounds.min_timestamp) + ').'
        : 'No readings yet: press Read now.';
      chartBox.dataset.points = '0';
      return;
    }
    const first = when(rows[0].timestamp);
    const last = when(rows[rows.length - 1].timestamp);
    chartMsg.textContent = rows.length + ' readings from ' + first + ' to ' + last + '.';
    const xs = rows.map((r) => Date.parse(r.timestamp) / 1000);
    const ms = rows.map(meters);
    /** @type {[string, (number | null)[], string][]} */
    const all = [
      ['Total', ms.map((m) => m.total ?? null), '#1f5fbf'],
      ['Mono', ms.map((m) => m.mono ?? null), '#333'],
      ['Colour', ms.map((m) => m.colour ?? null), '#c2187a'],
    ];
    const series = all.filter(([, v]) => v.some((x) => x !== null));
    const height = window.innerWidth < 640 ? 200 : 260;
    /** @param {uPlot} u @param {number[]} vals */
    const fmtAxis = (u, vals) =>
      vals.map((v) => (v >= 1e6 ? (v / 1e6).toFixed(1) + 'M' : v >= 1e4 ? Math.round(v / 1e3) + 'k' : fmtInt(v)));
    // A series' value under the cursor is null in a gap (uPlot's declarations say number).
    charts.push(new uPlot({
      width, height,
      series: [{}, ...series.map(([label, , stroke]) => ({
        label, stroke, width: 2, spanGaps: true,
        value: (/** @type {uPlot} */ u, /** @type {number | null} */ v) => fmtInt(v),
      }))],
      axes: [{}, { values: fmtAxis, size: 52 }],
      cursor: { drag: { x: false } },
    }, [xs, ...series.map(([, v]) => v)], chartBox));
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r.toner_levels || {})))];
    /** @param {string} k */
    const levels = (k) => rows.map((r) => {
      const v = r.toner_levels && r.toner_levels[k];
      // Negative: Printer-MIB's unknown (-2) or some remaining (-3), no level to plot.
      return typeof v === 'number' && v >= 0 ? v : null;
    });
    if (keys.length) {
      charts.push(new uPlot({
        width, height: Math.round(height * 0.7), scales: { y: { range: [0, 100] } },
        series: [{}, ...keys.map((k) => ({
          label: k, stroke: supplyColour(k), width: 2, spanGaps: true,
          value: (/** @type {uPlot} */ u, /** @type {number | null} */ v) => (v === null ? '' : v + '%'),
        }))],
        axes: [{}, {
          values: (/** @type {uPlot} */ u, /** @type {number[]} */ vals) => vals.map((v) => v + '%'), size: 52,
        }],
      }, [xs, ...keys.map(levels)], supplyBox));
    } else supplyBox.append(h('p', { class: 'muted', text: 'No supply levels in this period.' }));
    chartBox.dataset.points = String(rows.length);
    chartBox.dataset.period = range ? 'custom' : period;
  }
  /** @param {Error} err */
  function chartError(err) {
    chartMsg.textContent = 'Could not load the history: ' + err.message;
  }
  for (const b of periodBtns) {
    b.onclick = () => {
      period = /** @type {typeof period} */ (b.dataset.period);
      for (const x of periodBtns) x.setAttribute('aria-pressed', String(x === b));
      drawChart().catch(chartError);
    };
  }
  customBtn.onclick = () => {
    if (!since.value || !until.value) {
      chartMsg.textContent = 'Choose both dates.';
      return;
    }
    for (const x of periodBtns) x.setAttribute('aria-pressed', 'false');
    const a = new Date(since.value + 'T00:00:00');
    const b = new Date(until.value + 'T23:59:59.999');
    drawChart([a.toISOString(), b.toISOString()]).catch(chartError);
  };
  let lastWidth = 0;
  const onResize = () => {
    const w = chartBox.clientWidth;
    if (charts.length && Math.abs(w - lastWidth) > 20) {
      lastWidth = w;
      for (const c of charts) c.setSize({ width: w, height: c.height });
    }
  };
  window.addEventListener('resize', onResize);
  onLeave(() => window.removeEventListener('resize', onResize));

  return {
    content,
    /** How many readings the printer has stored (for the delete dialog). */
    points: () => (bounds ? bounds.points : 0),
    /** The first drawing. */
    async start() {
      await loadBounds();
      await drawChart().catch(chartError);
    },
    /** Again after a new reading. */
    async reload() {
      await loadBounds();
      await drawChart();
    },
  };
}
