// The Printers page's list (GET /api/printers): one page of the saved printers with their
// newest reading, searched, filtered and counted in one statement. The newest reading is found
// through device_latest (one row per device, migration 3) and read by metrics_raw's rowid: no
// metrics table is scanned, whatever the size of the history (test/agent/api/printers-list.test.ts
// checks the plan).
import type { Statement } from 'better-sqlite3';
import type { DB } from './db.js';

/** What the Printers page's filter offers (the select in src/ui/assets/js/printers.js). */
export const PRINTER_FILTERS = ['shown', 'alerts', 'hidden', 'all'] as const;
export type PrinterFilter = (typeof PRINTER_FILTERS)[number];

/** A supply at or under this level (percent) counts as low: the UI's LOW mark. */
export const LOW_SUPPLY = 15;

/**
 * The columns the Printers page sorts by (a header's button), each an expression over the devices
 * row `d` and, for the meters and the time seen, the newest reading `r` / `l`. Nulls sort last
 * whichever the direction: a printer with no reading is not the "highest".
 */
export const PRINTER_SORTS = {
  name: "lower(coalesce(nullif(d.description, ''), nullif(d.model, ''), d.serial))",
  last_seen: 'max(d.last_seen, coalesce(l.ts, d.last_seen))',
  total: "coalesce(nullif(r.page_count, 0), CASE WHEN r.mono_pages IS NOT NULL OR r.color_pages IS NOT NULL THEN coalesce(r.mono_pages, 0) + coalesce(r.color_pages, 0) END)",
  mono: 'r.mono_pages',
  colour: 'r.color_pages',
} as const;
export type PrinterSort = keyof typeof PRINTER_SORTS;
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];
const NEEDS_READING: readonly PrinterSort[] = ['last_seen', 'total', 'mono', 'colour'];

export interface PrinterQuery {
  /** Text searched, ASCII letters without regard to case (SQLite's lower()), in serial, model, manufacturer, address, hostname, location, asset number, description. */
  search: string;
  filter: PrinterFilter;
  offset: number;
  limit: number;
  /** None: serial order (the list's own, and the statement the plan test reads). */
  sort?: PrinterSort;
  order?: SortOrder;
}

/** One row as read: the devices columns the page shows and the newest raw reading's. */
export type PrinterRow = Record<string, unknown>;

const SEARCHED = ['serial', 'model', 'manufacturer', 'ip', 'hostname', 'location', 'asset_number', 'description'];

// The alert rule the UI applied to every row itself: a status message, a toner alert the printer
// reported, or a supply at or under LOW_SUPPLY in its newest reading.
const ALERTS = `(json_array_length(coalesce(d.status_messages, '[]')) > 0
  OR json_array_length(coalesce(d.printer_info -> '$.toner_alerts', '[]')) > 0
  OR EXISTS (SELECT 1 FROM json_each(r.toner_levels) t WHERE t.type IN ('integer', 'real') AND t.value <= ${LOW_SUPPLY}))`;

const WHERE_FILTER: Record<PrinterFilter, string> = {
  shown: 'd.visible = 1',
  hidden: 'd.visible = 0',
  all: '1',
  // hidden ones too, as the page's own filter had it
  alerts: ALERTS,
};

/**
 * The statement of one filter. The page's serials are chosen first, reading only what the search
 * and filter need (the devices row's short columns; the reading only for `alerts`), with
 * count(*) OVER (), the number of matches before LIMIT: the page and the total come from one pass.
 * Only the page's printers are then read whole: a devices row carries its PrinterInfo (1-3 KiB of
 * JSON), which read for every match cost 2,000 printers 18 ms a page (docs/performance.md). The
 * reading is joined by rowid (device_latest.raw_id), one seek into metrics_raw per printer; a
 * reading that retention removed joins nothing.
 */
function statementSql(filter: PrinterFilter, sort?: PrinterSort, order: SortOrder = 'asc'): string {
  const search = SEARCHED.map((c) => `instr(lower(coalesce(d.${c}, '')), lower(@q)) > 0`).join(' OR ');
  const reading = 'LEFT JOIN device_latest l ON l.serial = d.serial LEFT JOIN metrics_raw r ON r.id = l.raw_id';
  const joined = filter === 'alerts' || (sort !== undefined && NEEDS_READING.includes(sort));
  // A sorted page keeps its place (rn) for the outer select; the serial breaks ties, so paging is stable.
  const by = sort ? `(${PRINTER_SORTS[sort]}) IS NULL, ${PRINTER_SORTS[sort]} ${order.toUpperCase()}, d.serial` : 'd.serial';
  return `WITH page AS (
      SELECT d.serial, count(*) OVER () AS total${sort ? `, row_number() OVER (ORDER BY ${by}) AS rn` : ''}
      FROM devices d ${joined ? reading : ''}
      WHERE d.is_saved = 1 AND (${WHERE_FILTER[filter]}) AND (@q = '' OR ${search})
      ORDER BY ${by}
      LIMIT @limit OFFSET @offset)
    SELECT d.serial, d.ip, d.manufacturer, d.model, d.hostname, d.location, d.asset_number, d.description,
      d.visible, d.status_messages, d.printer_info -> '$.toner_alerts' AS toner_alerts,
      (d.is_usb = 0 AND (coalesce(d.web_ui_url, '') <> ''
        OR EXISTS (SELECT 1 FROM json_each(d.printer_info -> '$.open_ports') o WHERE o.value IN (80, 443)))) AS web_page,
      d.mac_address, d.printer_info -> '$.supply_part_numbers' AS part_numbers, r.scan_count,
      max(d.last_seen, coalesce(l.ts, d.last_seen)) AS seen,
      r.ts AS reading_ts, r.page_count, r.mono_pages, r.color_pages, r.toner_levels, p.total
    FROM page p JOIN devices d ON d.serial = p.serial ${reading}
    ORDER BY ${sort ? 'p.rn' : 'p.serial'}`;
}

export class PrinterListStore {
  private readonly stmts = new Map<string, Statement>();
  constructor(private readonly db: DB) {}

  private stmt(filter: PrinterFilter, sort?: PrinterSort, order?: SortOrder): Statement {
    const key = `${filter} ${sort ?? ''} ${order ?? ''}`;
    let s = this.stmts.get(key);
    if (!s) {
      s = this.db.prepare(statementSql(filter, sort, order));
      this.stmts.set(key, s);
    }
    return s;
  }

  /** One page and the number of matches in all. */
  page(q: PrinterQuery): { total: number; rows: PrinterRow[] } {
    const p = { q: q.search, limit: q.limit, offset: q.offset };
    const rows = this.stmt(q.filter, q.sort, q.order).all(p) as PrinterRow[];
    if (rows.length || q.offset === 0) return { total: rows.length ? (rows[0].total as number) : 0, rows };
    // Past the end: no row carries the total, so it is counted (the same filter, no page).
    const n = this.stmt(q.filter, q.sort, q.order).all({ ...p, limit: 1, offset: 0 }) as PrinterRow[];
    return { total: n.length ? (n[0].total as number) : 0, rows };
  }

  /** Every match of a search and filter, in serial order, one row at a time (the CSV export). */
  *iterate(q: Pick<PrinterQuery, 'search' | 'filter'>): Generator<PrinterRow> {
    yield* this.stmt(q.filter).iterate({ q: q.search, limit: -1, offset: 0 }) as IterableIterator<PrinterRow>;
  }

  /** The supply names in the saved printers' newest readings, sorted: the CSV's supply columns. */
  supplyNames(): string[] {
    return this.db.prepare(`SELECT DISTINCT t.key FROM devices d JOIN device_latest l ON l.serial = d.serial
      JOIN metrics_raw r ON r.id = l.raw_id, json_each(r.toner_levels) t WHERE d.is_saved = 1 ORDER BY t.key`).pluck().all() as string[];
  }

  /** EXPLAIN QUERY PLAN of a filter's statement, one detail line each: what the test reads. */
  plan(filter: PrinterFilter): string[] {
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${statementSql(filter)}`).all({ q: 'x', limit: 1, offset: 0 }) as { detail: string }[])
      .map((r) => r.detail);
  }
}
