// GET /api/printers: the Printers page in one request. Not the contract's: /devices/list
// stays as PrintMaster has it; this is the box's own page of saved printers with each one's newest
// reading, searched, filtered and paged by the store (store/printer-list.ts), one statement a page.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendJsonBody, sendText } from '../respond.js';
import { parseInteger, queryOf } from '../query.js';
import { PRINTER_FILTERS, PRINTER_SORTS, PrinterListStore, SORT_ORDERS, type PrinterFilter, type PrinterRow, type PrinterSort, type SortOrder } from '../../store/printer-list.js';
import { formatTime } from '../../model/time.js';
import { readForecast } from '../../forecast/read.js';
import type { SupplyForecast } from '../../forecast/supply-forecast.js';
import { partNumbersOf } from '../../forecast/order-list.js';
import { exportConnection, formatOf, sendCsv } from '../csv.js';
import { fileDate, type Cell } from '../../shared/csv-file.js';
import { errorText } from '../../shared/error-text.js';

export const LIMIT_DEFAULT = 200;
export const LIMIT_MAX = 1000;
const SEARCH_MAX = 200;
/**
 * A page with forecasts is at most this long: a forecast reads 90 days of one printer's history
 * (about 4 ms, docs/performance.md), so 200 of them hold the event loop for most of a second.
 */
export const FORECAST_LIMIT_MAX = 100;

const json = (text: unknown) => (typeof text === 'string' ? text : 'null');
const num = (v: unknown) => (typeof v === 'number' ? String(v) : 'null');

/**
 * One printer as JSON text, made from the row's own JSON columns without parsing them (they are
 * arrays and objects the store wrote). The total meter is page_count, else mono + colour (some
 * printers report only those two), as the UI has always shown it.
 */
function printerText(r: PrinterRow, soonest?: SupplyForecast | null): string {
  const mono = r.mono_pages as number | null;
  const colour = r.color_pages as number | null;
  let total = r.page_count as number | null;
  if (!total && (mono || colour)) total = (mono ?? 0) + (colour ?? 0);
  return `{"serial":${JSON.stringify(r.serial)},"ip":${JSON.stringify(r.ip)}`
    + `,"manufacturer":${JSON.stringify(r.manufacturer ?? null)},"model":${JSON.stringify(r.model ?? null)}`
    + `,"hostname":${JSON.stringify(r.hostname ?? null)},"location":${JSON.stringify(r.location ?? null)}`
    + `,"asset_number":${JSON.stringify(r.asset_number ?? null)},"description":${JSON.stringify(r.description ?? null)}`
    + `,"hidden":${r.visible === 0},"web_page":${r.web_page === 1},"status_messages":${r.status_messages ?? '[]'},"toner_alerts":${r.toner_alerts ?? '[]'}`
    + `,"last_seen":"${formatTime(r.seen as number)}"`
    + `,"last_reading":${r.reading_ts === null ? 'null' : `"${formatTime(r.reading_ts as number)}"`}`
    + `,"meters":{"total":${num(total)},"mono":${num(mono)},"colour":${num(colour)}}`
    + `,"toner_levels":${json(r.toner_levels)}`
    + (soonest === undefined ? '}' : `,"soonest_empty":${JSON.stringify(soonest)}}`);
}

/** The supply that empties first, of those with a forecast; null when none has one. */
function soonestOf(supplies: SupplyForecast[]): SupplyForecast | null {
  let first: SupplyForecast | null = null;
  for (const f of supplies) if (f.days_to_empty !== null && (first === null || f.days_to_empty < first.days_to_empty!)) first = f;
  return first;
}

/** A paging parameter: absent = `dflt`, else a whole number in [min, max], or the 400's message. */
function intParam(q: URLSearchParams, name: string, dflt: number, min: number, max: number): number | string {
  const text = q.get(name);
  if (text === null || text === '') return dflt;
  const n = parseInteger(text);
  if (n === undefined || n < min || n > max) return `invalid ${name} parameter: a whole number from ${min} to ${max}`;
  return n;
}

const IDENTITY = ['serial', 'manufacturer', 'model', 'hostname', 'ip', 'mac_address', 'location', 'asset_number', 'description'] as const;
const COUNTERS = ['page_count', 'mono_pages', 'color_pages', 'scan_count'] as const;

/** The printers list as CSV rows: identity, location, the newest reading's counters and supply levels. */
function* printerCsvRows(rows: Iterable<PrinterRow>, supplies: string[]): Generator<Cell[]> {
  for (const r of rows) {
    const levels = typeof r.toner_levels === 'string' ? (JSON.parse(r.toner_levels) as Record<string, unknown>) : {};
    const parts = partNumbersOf(typeof r.part_numbers === 'string' ? { supply_part_numbers: JSON.parse(r.part_numbers) as unknown } : undefined);
    yield [
      ...IDENTITY.map((c) => r[c] as Cell),
      r.visible === 0,
      formatTime(r.seen as number),
      r.reading_ts === null ? null : formatTime(r.reading_ts as number),
      ...COUNTERS.map((c) => r[c] as Cell),
      ...supplies.map((k) => (typeof levels[k] === 'number' ? (levels[k] as number) : null)),
      [...parts].map(([k, pn]) => `${k}: ${pn}`).join('; '),
    ];
  }
}

export function register(app: App, ctx: AgentContext): void {
  let store: PrinterListStore | undefined;

  app.all('/api/printers', async (req, res) => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      return sendText(res, 405, 'GET only');
    }
    const q = queryOf(req);
    const search = (q.get('search') ?? '').trim();
    if (search.length > SEARCH_MAX) return sendText(res, 400, `invalid search parameter: at most ${SEARCH_MAX} characters`);
    const filterText = q.get('filter') || 'shown';
    if (!(PRINTER_FILTERS as readonly string[]).includes(filterText)) {
      return sendText(res, 400, `invalid filter parameter: one of ${PRINTER_FILTERS.join(', ')}`);
    }
    const format = formatOf(req);
    if (format !== 'json' && format !== 'csv') return sendText(res, 400, format);
    if (format === 'csv') {
      // Every match (no paging), read on a connection of the request's own as the file streams.
      const db = exportConnection(ctx, res);
      if (!db) return;
      try {
        const list = new PrinterListStore(db);
        const supplies = list.supplyNames();
        const header = [...IDENTITY, 'hidden', 'last_seen', 'last_reading', ...COUNTERS, ...supplies.map((k) => `supply_${k}_percent`), 'supply_part_numbers'];
        await sendCsv(ctx, res, `printers-${fileDate(ctx.now())}.csv`, header, printerCsvRows(list.iterate({ search, filter: filterText as PrinterFilter }), supplies));
      } catch (err) {
        if (!res.headersSent) sendText(res, 500, `failed to list printers: ${errorText(err)}`);
      } finally {
        db.close();
      }
      return;
    }
    const offset = intParam(q, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
    if (typeof offset === 'string') return sendText(res, 400, offset);
    const limit = intParam(q, 'limit', LIMIT_DEFAULT, 1, LIMIT_MAX);
    if (typeof limit === 'string') return sendText(res, 400, limit);
    const sortText = q.get('sort') || undefined;
    if (sortText !== undefined && !Object.hasOwn(PRINTER_SORTS, sortText)) {
      return sendText(res, 400, `invalid sort parameter: one of ${Object.keys(PRINTER_SORTS).join(', ')}`);
    }
    const orderText = q.get('order') || 'asc';
    if (!(SORT_ORDERS as readonly string[]).includes(orderText)) return sendText(res, 400, `invalid order parameter: one of ${SORT_ORDERS.join(', ')}`);
    const forecastText = q.get('forecast') ?? 'false';
    if (forecastText !== 'true' && forecastText !== 'false') return sendText(res, 400, 'invalid forecast parameter: true or false');
    const forecast = forecastText === 'true';
    if (forecast && limit > FORECAST_LIMIT_MAX) {
      return sendText(res, 400, `invalid limit parameter: at most ${FORECAST_LIMIT_MAX} with forecast=true`);
    }
    let page;
    try {
      store ??= new PrinterListStore(ctx.db);
      page = store.page({ search, filter: filterText as PrinterFilter, offset, limit, sort: sortText as PrinterSort | undefined, order: orderText as SortOrder });
    } catch (err) {
      return sendText(res, 500, `failed to list printers: ${errorText(err)}`);
    }
    let items = '';
    try {
      const now = ctx.now();
      for (const r of page.rows) {
        const soonest = forecast ? soonestOf(readForecast(ctx.metrics, r.serial as string, now).supplies) : undefined;
        items += (items ? ',' : '') + printerText(r, soonest);
      }
    } catch (err) {
      return sendText(res, 500, `failed to get metrics history: ${errorText(err)}`);
    }
    sendJsonBody(res, 200, `{"total":${page.total},"offset":${offset},"limit":${limit},"printers":[${items}]}\n`);
  });
}
