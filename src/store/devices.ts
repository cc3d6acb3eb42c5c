// Device records in SQLite: one row per serial (columns and codecs: device-rows.ts).
import type { DB } from './db.js';
import type { Device, Snapshot } from '../model/device.js';
import { withPersonsChoices } from '../model/record-fold.js';
import { MetricsStore, type MetricsStoreOptions } from './metrics.js';
import { COLUMNS, LIST_MADE_BY, UPSERT_SQL, fromRow, toRow } from './device-rows.js';
import { DEVICE_RECORD, columnOf, type DeviceField } from '../model/device-fields.js';
import type { Statement } from 'better-sqlite3';
import { BOUND_SERIAL } from './bound.js';
import { newRoundId } from '../model/round.js';

type Row = Record<string, unknown>;

// A device's last_seen is the later of its record's and its newest raw snapshot's (device_latest):
// a poll notes the time there instead of rewriting the whole record (flash wear, migration 3).
const SEEN = 'max(d.last_seen, coalesce(l.ts, d.last_seen)) AS seen';
const FROM_DEVICES = 'FROM devices d LEFT JOIN device_latest l ON l.serial = d.serial';
// The record's columns by name: not d.*, which would read each row's list entry too (LIST_COLUMNS).
const SELECT_DEVICES = `SELECT ${COLUMNS.map((c) => `d.${c}`).join(', ')}, ${SEEN} ${FROM_DEVICES}`;
// A record's printer-uuid as migration 15's index has it (the same expression, or the index is not used).
const PRINTER_UUID_EXPR = "CASE WHEN json_valid(d.printer_info) THEN json_extract(d.printer_info, '$.printer_uuid') END";
const DEVICE_FIELD = Object.fromEntries(DEVICE_RECORD.map((f) => [f.name, f])) as Record<keyof Device, DeviceField>;

/**
 * A saved device's /devices/list entry: its stored pieces (model/views.ts savedEntryParts) and its
 * last_seen, or, where the pieces are missing or another build made them, its record.
 */
export type SavedEntryRow =
  | { serial: string; seen: number; entry: Buffer; head_bytes: number; tail_bytes: number; device?: undefined }
  | { device: Device };

/** A device record read from the printer, and the raw snapshot taken with it. */
export interface Reading {
  device: Device;
  snapshot: Omit<Snapshot, 'id'>;
  /** The record existed when the reading began: if it is gone when the reading is stored, a person deleted it meanwhile. */
  existed?: boolean;
  /**
   * The record's address when the reading began: if the record has another one when the reading is
   * stored, a person confirmed a move meanwhile (POST /devices/confirm-move), and the reading,
   * taken for the old address, is dropped rather than moving the record back.
   */
  fromIp?: string;
  /** The reading round it was taken in (model/round.ts); without one, the write it comes with is its round. */
  round?: number;
}

/** A record written only for its last_seen and printer_info is refreshed at most this often. */
export const RECORD_REFRESH_MS = 86_400_000;

// Columns whose change makes a poll rewrite the record. last_seen goes to device_latest with the
// snapshot, and printer_info's meters change every poll; /devices/list does not promise current
// counters (contract 4.1), and /devices/discovered fills them from the newest snapshot.
const CONTENT_COLUMNS = COLUMNS.filter((c) => !['serial', 'last_seen', 'printer_info'].includes(c));

export interface DiscoveredFilter {
  /** Only devices seen at or after this time (epoch ms). */
  seenSince?: number;
  includeKnown: boolean;
  /** Hidden (not visible) records too: the Discovered page's "Show hidden", where one is unhidden. */
  includeHidden?: boolean;
}

export class DeviceStore {
  private readonly byId;
  private readonly upsertStmt;
  private readonly refreshStmt;
  private readonly savedStmt;
  private readonly savedEntriesStmt;
  private readonly byUuidStmt;
  private readonly byMacStmt;
  private readonly byIpStmt;
  private readonly countUnsavedStmt;
  private readonly countAwaitingStmt;
  private readonly oldestUnsavedStmt;
  private readonly savedProjections = new Map<string, Statement>();
  private readonly metrics: MetricsStore;
  /** `opts` go to the store its readings' snapshots are written through. */
  constructor(private readonly db: DB, opts: MetricsStoreOptions = {}) {
    this.metrics = new MetricsStore(db, opts);
    this.byId = db.prepare(`${SELECT_DEVICES} WHERE d.serial = ${BOUND_SERIAL}`);
    this.upsertStmt = db.prepare(UPSERT_SQL);
    // The same upsert, but an existing record is only rewritten when its content changed or it is a
    // day old: a poll then costs a device no page of its own (docs/performance.md, flash writes).
    this.refreshStmt = db.prepare(
      `${UPSERT_SQL} WHERE NOT (${CONTENT_COLUMNS.map((c) => `devices.${c} IS excluded.${c}`).join(' AND ')})
         OR excluded.last_seen - devices.last_seen >= ${RECORD_REFRESH_MS}`,
    );
    this.savedStmt = db.prepare(`${SELECT_DEVICES} WHERE d.is_saved = 1 ORDER BY d.serial`);
    // Serials first, from devices alone (uuid, MAC): the join's bound-parameter rule (bound.ts) would need a
    // CAST, whose affinity SQLite then applies to the expression, and the index no longer matches.
    this.byUuidStmt = db.prepare(`SELECT d.serial FROM devices d WHERE ${PRINTER_UUID_EXPR} = ? ORDER BY d.serial`).pluck();
    this.byMacStmt = db.prepare('SELECT d.serial FROM devices d WHERE lower(d.mac_address) = ? ORDER BY d.serial').pluck();
    this.byIpStmt = db.prepare(`${SELECT_DEVICES} WHERE d.ip = ${BOUND_SERIAL} ORDER BY d.serial`);
    this.countUnsavedStmt = db.prepare('SELECT count(*) FROM devices WHERE is_saved = 0').pluck();
    this.countAwaitingStmt = db.prepare('SELECT count(*) FROM devices WHERE is_saved = 0 AND visible = 1').pluck();
    this.oldestUnsavedStmt = db.prepare(`SELECT d.serial, ${SEEN} ${FROM_DEVICES} WHERE d.is_saved = 0 ORDER BY seen, d.serial LIMIT ?`).pluck();
    this.savedEntriesStmt = db.prepare(
      `SELECT d.serial, d.list_entry AS entry, d.list_head_bytes AS head_bytes, d.list_tail_bytes AS tail_bytes, d.list_made_by AS made_by, ${SEEN}
       ${FROM_DEVICES} WHERE d.is_saved = 1 ORDER BY d.serial`,
    );
  }

  get(serial: string): Device | undefined {
    const row = this.byId.get(serial) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Inserts or replaces the whole record. */
  put(device: Device): void {
    this.upsertStmt.run(toRow(device));
  }

  /**
   * Stores what a scan or a polling round read, in one transaction (one fsync): every snapshot,
   * and each device record only where its content changed (see refreshStmt). Returns the
   * snapshots' ids; undefined for a device deleted since it was read (`existed`: nothing is stored).
   *
   * A round reads each record before it awaits the printer and writes after: the record is read
   * again here, inside the transaction, so that what a person changed meanwhile (POST
   * /devices/update, save, hide) is kept rather than overwritten with the older copy.
   */
  recordReadings(readings: Reading[]): (number | undefined)[] {
    let round: number | undefined;
    return this.db.transaction(() =>
      readings.map((r) => {
        const current = this.get(r.device.serial);
        if (!current && r.existed) return undefined;
        if (current && r.fromIp !== undefined && current.ip !== r.fromIp) return undefined;
        this.refreshStmt.run(toRow(current ? withPersonsChoices(r.device, current) : r.device));
        return this.metrics.insertRaw(r.snapshot, r.round ?? (round ??= newRoundId()));
      }),
    )();
  }

  /** When the device's newest raw reading was taken (epoch ms), if it had one. */
  latestReadingAt(serial: string): number | undefined {
    return this.metrics.latestRaw(serial)?.ts;
  }

  /** The page count of the device's newest raw reading, if it had one. */
  latestPageCount(serial: string): number | undefined {
    return this.metrics.latestRaw(serial)?.page_count ?? undefined;
  }

  listSaved(): Device[] {
    return (this.savedStmt.all() as Row[]).map(fromRow);
  }

  /**
   * The saved devices, in serial order, with only `fields` (and last_seen) read, one row at a
   * time: for a caller that needs a few fields of every saved device (the alert service, their
   * serials), so that what it builds from each is garbage before the next is read.
   */
  *eachSaved<F extends keyof Device>(fields: readonly F[]): Generator<Pick<Device, F | 'last_seen'>> {
    const key = fields.join(',');
    let stmt = this.savedProjections.get(key);
    if (!stmt) {
      const columns = fields.filter((f) => f !== 'last_seen').map((f) => `d.${columnOf(DEVICE_FIELD[f])}`);
      stmt = this.db.prepare(`SELECT ${[...columns, SEEN].join(', ')} ${FROM_DEVICES} WHERE d.is_saved = 1 ORDER BY d.serial`);
      this.savedProjections.set(key, stmt);
    }
    for (const row of stmt.iterate() as IterableIterator<Row>) yield fromRow(row) as Pick<Device, F | 'last_seen'>;
  }

  /**
   * The saved devices' /devices/list entries, in serial order, one row at a time: bytes as stored
   * (held outside V8's heap), so a list of 2,000 costs little more than reading them.
   */
  *eachSavedEntry(): Generator<SavedEntryRow> {
    for (const row of this.savedEntriesStmt.iterate() as IterableIterator<Row>) {
      if (row.made_by === LIST_MADE_BY && row.entry) yield row as unknown as SavedEntryRow;
      else {
        const device = this.get(row.serial as string);
        if (device) yield { device };
      }
    }
  }

  listDiscovered(f: DiscoveredFilter): Device[] {
    const where = f.includeHidden ? [] : ['d.visible = 1'];
    const params: unknown[] = [];
    // A saved printer with a pending move is listed too: a person has to look at it.
    if (!f.includeKnown) where.push("(d.is_saved = 0 OR CASE WHEN json_valid(d.trust) THEN json_extract(d.trust, '$.pending_move') END IS NOT NULL)");
    if (f.seenSince !== undefined) {
      where.push('seen >= ?');
      params.push(f.seenSince);
    }
    const sql = `${SELECT_DEVICES} WHERE ${where.length ? where.join(' AND ') : '1'} ORDER BY d.serial`;
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
      this.metrics.deleteDevice(serial);
      // docs/decisions/0009-durable-writes-and-deletes.md: a delete removes every row that refers
      // to the device, its billing reads too.
      this.db.prepare('DELETE FROM meter_reads WHERE serial = ?').run(serial);
      return this.db.prepare('DELETE FROM devices WHERE serial = ?').run(serial).changes > 0;
    })();
  }

  /**
   * The records whose printer_info carries this printer-uuid, in serial order: one index seek
   * (migration 15), not a read of every record, so an announced read costs the same at 10 records or 2,000.
   */
  withPrinterUuid(uuid: string): Device[] {
    return (this.byUuidStmt.all(uuid) as string[]).flatMap((serial) => this.get(serial) ?? []);
  }

  /** The records with this MAC address (any case), in serial order: one index seek (migration 15). */
  withMac(mac: string): Device[] {
    return (this.byMacStmt.all(mac.toLowerCase()) as string[]).flatMap((serial) => this.get(serial) ?? []);
  }

  /** The records at this address, in serial order: one index seek (migration 15). */
  atAddress(ip: string): Device[] {
    return (this.byIpStmt.all(ip) as Row[]).map(fromRow);
  }

  /** How many visible records are not saved (the Discovered page's, awaiting a person's Save): one seek in the listing index. */
  countAwaitingSave(): number {
    return this.countAwaitingStmt.get() as number;
  }

  /** How many records are not saved (discovered only): counted from the listing index. */
  countUnsaved(): number {
    return this.countUnsavedStmt.get() as number;
  }

  /** The serials of the `limit` unsaved records seen longest ago (last_seen as listed), oldest first. */
  oldestUnsaved(limit: number): string[] {
    return this.oldestUnsavedStmt.all(limit) as string[];
  }

  listAll(): Device[] {
    return (this.db.prepare(`${SELECT_DEVICES} ORDER BY d.serial`).all() as Row[]).map(fromRow);
  }

  count(): number {
    return this.db.prepare('SELECT count(*) FROM devices').pluck().get() as number;
  }
}
