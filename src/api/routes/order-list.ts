// GET /api/supplies/order-list: the supplies to order (forecast/order-list.ts), soonest
// first, as JSON or as CSV (`format=csv`, api/csv.ts).
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendJson, sendText } from '../respond.js';
import { orderList, type OrderItem } from '../../forecast/order-list.js';
import { formatOf, sendCsv } from '../csv.js';
import { CSV_HEADER, csvRow, orderListFileName } from '../../forecast/order-list-csv.js';
import { errorText } from '../../shared/error-text.js';

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
