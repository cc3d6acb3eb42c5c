// @ts-check
// A printer's meter history as a CSV file (GET /api/devices/meter-history?format=csv):
// the range the charts show, from the tier chosen beside the Download button. The tier follows
// the range until someone picks one: raw readings for a day or a week (raw is kept 7 days),
// hourly for a month, daily beyond.
import { h } from './dom.js';
import { csvLink } from './csv-link.js';

const TIERS = /** @type {const} */ ([['raw', 'Every reading'], ['hourly', 'Hourly'], ['daily', 'Daily'], ['monthly', 'Monthly']]);
/** @typedef {typeof TIERS[number][0]} Tier */
const DAY = 86_400_000;
/** @type {Record<string, number>} */
const PERIOD_DAYS = { day: 1, week: 7, month: 30, year: 365 };

/** @param {number} ms @returns {Tier} */
const tierFor = (ms) => (ms <= 7 * DAY ? 'raw' : ms <= 31 * DAY ? 'hourly' : 'daily');

/** @param {string} serial */
export function meterExport(serial) {
  const tier = h('select', { id: 'history-tier', 'aria-label': 'Rows in the CSV file' },
    TIERS.map(([value, text]) => h('option', { value, text })));
  const link = csvLink('history-csv', '/api/devices/meter-history', { serial }, 'this printer\'s meter history');
  let chosen = false;
  /** @type {[string, string]} */
  let range = [new Date(Date.now() - 30 * DAY).toISOString(), new Date().toISOString()];
  const update = () => link.set({ serial, tier: /** @type {Tier} */ (tier.value), since: range[0], until: range[1] });
  tier.onchange = () => {
    chosen = true;
    update();
  };
  return {
    node: h('div', { class: 'toolbar', id: 'history-export' }, h('label', { for: 'history-tier', text: 'CSV rows' }), tier, link.a),
    /**
     * Points the download at what the charts show: a period ending now, or a range of dates.
     * @param {string} period @param {[string, string]} [custom]
     */
    show(period, custom) {
      const now = Date.now();
      range = custom || [new Date(now - (PERIOD_DAYS[period] || 30) * DAY).toISOString(), new Date(now).toISOString()];
      if (!chosen) tier.value = tierFor(Date.parse(range[1]) - Date.parse(range[0]));
      update();
    },
  };
}
