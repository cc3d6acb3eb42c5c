// Device records in SQLite: one row per serial, arrays and objects kept as JSON text.
import type { DB } from './db.js';
import type { Device } from '../model/device.js';

const JSON_COLUMNS = ['consumables', 'status_messages', 'raw_data', 'dns_servers', 'locked_fields', 'printer_info'] as const;
const BOOL_COLUMNS = ['is_usb', 'is_default', 'is_shared', 'usb_webui_available', 'is_saved', 'visible'] as const;
const COLUMNS = [
  'serial', 'ip', 'manufacturer', 'model', 'hostname', 'firmware', 'mac_address', 'subnet_mask', 'gateway',
  'consumables', 'status_messages', 'last_seen', 'created_at', 'first_seen', 'discovery_method', 'asset_number',
  'location', 'description', 'web_ui_url', 'raw_data', 'device_type', 'source_type', 'port_name', 'driver_name',
  'spooler_status', 'is_usb', 'is_default', 'is_shared', 'usb_webui_available', 'initial_page_count', 'dns_servers',
  'dhcp_server', 'is_saved', 'visible', 'walk_filename', 'last_scan_id', 'locked_fields', 'printer_info',
] as const;

type Row = Record<string, unknown>;

function fromRow(row: Row): Device {
  const d: Row = {};
  for (const col of COLUMNS) {
    const v = row[col];
    if (v === null || v === undefined) continue;
    if ((JSON_COLUMNS as readonly string[]).includes(col)) d[col] = JSON.parse(v as string);
    else if ((BOOL_COLUMNS as readonly string[]).includes(col)) d[col] = v === 1;
    else d[col] = v;
  }
  for (const col of BOOL_COLUMNS) d[col] ??= false;
  return d as unknown as Device;
}

function toRow(d: Device): Row {
  const row: Row = {};
  const rec = d as unknown as Row;
  for (const col of COLUMNS) {
    const v = rec[col];
    if (v === undefined || v === null) row[col] = null;
    else if ((JSON_COLUMNS as readonly string[]).includes(col)) row[col] = JSON.stringify(v);
    else if ((BOOL_COLUMNS as readonly string[]).includes(col)) row[col] = v ? 1 : 0;
    else row[col] = v;
  }
  return row;
}

export interface DiscoveredFilter {
  /** Only devices seen at or after this time (epoch ms). */
  seenSince?: number;
  includeKnown: boolean;
}

export class DeviceStore {
  private readonly byId;
  private readonly upsertStmt;
  private readonly savedStmt;
  constructor(private readonly db: DB) {
    this.byId = db.prepare('SELECT * FROM devices WHERE serial = ?');
    this.upsertStmt = db.prepare(
      `INSERT INTO devices (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => '@' + c).join(', ')})
       ON CONFLICT (serial) DO UPDATE SET ${COLUMNS.filter((c) => c !== 'serial').map((c) => `${c} = excluded.${c}`).join(', ')}`,
    );
    this.savedStmt = db.prepare('SELECT * FROM devices WHERE is_saved = 1 ORDER BY serial');
  }

  get(serial: string): Device | undefined {
    const row = this.byId.get(serial) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Inserts or replaces the whole record. */
  put(device: Device): void {
    this.upsertStmt.run(toRow(device));
  }

  listSaved(): Device[] {
    return (this.savedStmt.all() as Row[]).map(fromRow);
  }

  listDiscovered(f: DiscoveredFilter): Device[] {
    const where = ['visible = 1'];
    const params: unknown[] = [];
    if (!f.includeKnown) where.push('is_saved = 0');
    if (f.seenSince !== undefined) {
      where.push('last_seen >= ?');
      params.push(f.seenSince);
    }
    const sql = `SELECT * FROM devices WHERE ${where.join(' AND ')} ORDER BY serial`;
    return (this.db.prepare(sql).all(...params) as Row[]).map(fromRow);
  }

  /** Marks a device saved; false when there is no such device. */
  save(serial: string): boolean {
    return this.db.prepare('UPDATE devices SET is_saved = 1 WHERE serial = ?').run(serial).changes > 0;
  }

  /** Saves every visible discovered device; returns their serials. */
  saveAll(): string[] {
    const rows = this.db
      .prepare('UPDATE devices SET is_saved = 1 WHERE is_saved = 0 AND visible = 1 RETURNING serial')
      .all() as { serial: string }[];
    return rows.map((r) => r.serial).sort();
  }

  /**
   * Removes the device and every row that refers to it, in all tiers, in one transaction.
   * Explicit deletes: nothing relies on foreign-key cascades.
   */
  delete(serial: string): boolean {
    return this.db.transaction(() => {
      for (const t of ['metrics_raw', 'metrics_hourly', 'metrics_daily', 'metrics_monthly']) {
        this.db.prepare(`DELETE FROM ${t} WHERE serial = ?`).run(serial);
      }
      return this.db.prepare('DELETE FROM devices WHERE serial = ?').run(serial).changes > 0;
    })();
  }

  listAll(): Device[] {
    return (this.db.prepare('SELECT * FROM devices ORDER BY serial').all() as Row[]).map(fromRow);
  }
}
