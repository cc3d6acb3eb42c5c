// GET /api/supplies/order-list (issue 59): the supplies to order (forecast/order-list.ts), soonest
// first, as JSON or as CSV (`format=csv`, api/csv.ts).
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { errorText, sendJson, sendText } from '../respond.js';
import { orderList, type OrderItem } from '../../forecast/order-list.js';
import { fileDate, formatOf, sendCsv, type Cell } from '../csv.js';

export const CSV_HEADER = ['expected_empty_on', 'days_to_empty', 'level_percent', 'supply', 'part_number', 'serial', 'manufacturer', 'model', 'location', 'asset_number', 'reasons'];

export const csvRow = (i: OrderItem): Cell[] => [
  i.expected_empty_on, i.days_to_empty, i.level, i.supply, i.part_number, i.serial, i.manufacturer, i.model, i.location, i.asset_number, i.reasons.join(' '),
];

/** The order list's file name on `ms`'s UTC day (the download's and the weekly e-mail's attachment). */
export const orderListFileName = (ms: number) => `order-list-${fileDate(ms)}.csv`;

export function register(app: App, ctx: AgentContext): void {
  app.all('/api/supplies/order-list', async (req, res) => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      return sendText(res, 405, 'GET only');
    }
    const format = formatOf(req);
    if (format !== 'json' && format !== 'csv') return sendText(res, 400, format);
    const s = ctx.settings.get();
    let items: OrderItem[];
    try {
      // Read whole before the forecasts: better-sqlite3 refuses no read meanwhile, but a write
      // (a polling round) would be refused while a statement iterates across the list's turns.
      const printers = [...ctx.devices.eachSaved(['serial', 'manufacturer', 'model', 'location', 'asset_number', 'printer_info'] as const)];
      items = await orderList(printers, ctx.metrics, s.order_list.within_days, s.alerts.supply_below_percent, ctx.now);
    } catch (err) {
      return sendText(res, 500, `failed to make the order list: ${errorText(err)}`);
    }
    if (format === 'csv') return sendCsv(ctx, res, orderListFileName(ctx.now()), CSV_HEADER, items.map(csvRow));
    sendJson(res, 200, { within_days: s.order_list.within_days, low_mark_percent: s.alerts.supply_below_percent, items });
  });
}
