// Backup and restore as NDJSON (docs/decisions/0011-ndjson-backup.md, docs/backup-format.md): one
// object a line, a header, devices, metrics by tier, billing meter reads, and (version 2) a trailer
// with the record counts and a checksum.
// Import is one transaction: the first bad line rejects the whole file, naming the line, and a
// version 2 file is only committed once its trailer has been read and checked.
import { createHash } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import type { DB } from './db.js';
import { DeviceStore } from './devices.js';
import { MetricsStore } from './metrics.js';
import { MeterReadStore, READ_COUNTERS, READ_SOURCES, type MeterRead, type ReadSource } from './meter-reads.js';
import { TIERS, type Device, type Tier } from '../model/device.js';
import { DEVICE_BACKUP_FIELDS } from '../model/device-fields.js';
import { liftTrust, trustInRawData } from '../model/trust.js';
import { METRICS_COUNTERS, METRICS_EXTRA_COUNTERS, serialize, type Field } from '../model/serialize.js';
import { formatTime, parseTime } from '../model/time.js';
import { snapshotJson } from '../model/views.js';
import { inheritedKeyProblem, withStorableKeys } from '../model/inherited-keys.js';
import { errorText } from '../shared/error-text.js';

export const FORMAT = 'printbox-ndjson';
/** The version export writes. Import reads 1 (no trailer) and 2. */
export const VERSION = 2;
export const HEADER = { kind: 'header', format: FORMAT, version: VERSION } as const;
export const MAX_SERIAL_LENGTH = 256;

export class ImportError extends Error {
  /** `whole`: the message is about the file, not one line (it names the line itself). */
  constructor(readonly line: number, message: string, whole = false) {
    super(whole ? message : `line ${line}: ${message}`);
  }
}

/** Lines of each kind in a backup: the trailer's `records`. */
export interface RecordCounts {
  device: number;
  metrics: Record<Tier, number>;
  /**
   * Billing meter reads. In the trailer only when there are some: a box without reads
   * writes the bytes it wrote before reads were backed up, which an older agent still imports.
   */
  meter_read: number;
}

const noRecords = (): RecordCounts => ({ device: 0, metrics: Object.fromEntries(TIERS.map((t) => [t, 0])) as Record<Tier, number>, meter_read: 0 });

// The checksum is SHA-256 of every byte before the trailer line. A hash is updated line by line, so
// export computes it while writing and import while reading, neither holding the file nor reading
// it twice (stdin cannot be re-read). SHA-256 rather than a CRC: `head -n -1 backup.ndjson |
// sha256sum` checks a backup without the agent, with a tool every system has; it costs about 0.1 s
// for 28 MB (200,000 rows), beside some 12 s of parsing and SQLite writes.
const CHECKSUM = 'sha256';
const HEX64 = /^[0-9a-f]{64}$/;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkField(f: Field, v: unknown): unknown {
  switch (f.kind) {
    case 'string':
      if (typeof v !== 'string') throw new Error(`field ${f.name} must be a string`);
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw new Error(`field ${f.name} must be true or false`);
      return v;
    case 'int':
      if (!Number.isSafeInteger(v)) throw new Error(`field ${f.name} must be an integer`);
      return v;
    case 'time': {
      const t = typeof v === 'string' ? parseTime(v) : null;
      if (t === null) throw new Error(`field ${f.name} must be an RFC 3339 date-time`);
      return t;
    }
    case 'array':
      if (!Array.isArray(v)) throw new Error(`field ${f.name} must be an array`);
      return v;
    case 'object':
      if (!isObject(v)) throw new Error(`field ${f.name} must be an object`);
      return v;
    default:
      return v;
  }
}

function checkSerial(v: unknown): string {
  if (typeof v !== 'string' || v === '') throw new Error('field serial must be a non-empty string');
  if (v.length > MAX_SERIAL_LENGTH) throw new Error(`field serial is longer than ${MAX_SERIAL_LENGTH} characters`);
  return v;
}

const DEVICE_FIELD = new Map(DEVICE_BACKUP_FIELDS.map((f) => [f.name, f]));

function parseDevice(obj: Obj): Device {
  const d: Obj = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'kind') continue;
    const f = DEVICE_FIELD.get(k);
    if (!f) throw new Error(`unknown device field ${k}`);
    if (v === null) continue;
    d[k] = checkField(f, v);
  }
  for (const f of DEVICE_BACKUP_FIELDS) {
    if (f.required && d[f.name] === undefined) throw new Error(`missing required field ${f.name}`);
  }
  checkSerial(d.serial);
  d.device_type ||= d.is_usb ? 'usb' : 'network';
  d.source_type ||= 'import';
  for (const f of DEVICE_BACKUP_FIELDS) if (f.kind === 'bool') d[f.name] ??= false;
  // The line shows the trust state inside raw_data (as the API does): the record keeps it apart.
  return liftTrust(d as unknown as Device);
}

interface ParsedMetrics {
  tier: Tier;
  serial: string;
  ts: number;
  counters: Partial<Record<(typeof METRICS_COUNTERS)[number], number>>;
  extra: Record<string, number>;
  toner_levels?: Obj;
}

const COUNTER_SET = new Set<string>(METRICS_COUNTERS);
const EXTRA_SET = new Set<string>(METRICS_EXTRA_COUNTERS);

function parseMetrics(obj: Obj): ParsedMetrics {
  if (typeof obj.tier !== 'string' || !(TIERS as readonly string[]).includes(obj.tier)) {
    throw new Error(`field tier must be one of ${TIERS.join(', ')}`);
  }
  const m: ParsedMetrics = {
    tier: obj.tier as Tier,
    serial: checkSerial(obj.serial),
    ts: checkField({ name: 'timestamp', kind: 'time' }, obj.timestamp) as number,
    counters: {},
    extra: {},
  };
  for (const [k, v] of Object.entries(obj)) {
    if (['kind', 'tier', 'serial', 'timestamp', 'id', 'paper_trays'].includes(k)) continue;
    if (COUNTER_SET.has(k) || EXTRA_SET.has(k)) {
      if (!Number.isSafeInteger(v) || (v as number) < 0) throw new Error(`field ${k} must be a non-negative integer`);
      if (COUNTER_SET.has(k)) m.counters[k as (typeof METRICS_COUNTERS)[number]] = v as number;
      else m.extra[k] = v as number;
    } else if (k === 'toner_levels') {
      if (!isObject(v)) throw new Error('field toner_levels must be an object');
      m.toner_levels = v;
    } else {
      throw new Error(`unknown metrics field ${k}`);
    }
  }
  return m;
}

const PERIOD = /^\d{4}-(0[1-9]|1[0-2])$/;
const METER_READ_FIELDS = new Set(['kind', 'serial', 'period', 'billing_time', 'read_at', 'source', 'attempts']);
const READ_COUNTER_SET = new Set<string>(READ_COUNTERS);

/**
 * A meter read line (store/meter-reads.ts): `read_at` is the reading's own time, absent for a
 * `missing` read and required otherwise; counters are the four columns and the category counters.
 */
function parseMeterRead(obj: Obj): MeterRead {
  const serial = checkSerial(obj.serial);
  if (typeof obj.period !== 'string' || !PERIOD.test(obj.period)) throw new Error('field period must be a month as YYYY-MM');
  const due = checkField({ name: 'billing_time', kind: 'time' }, obj.billing_time) as number;
  if (typeof obj.source !== 'string' || !(READ_SOURCES as readonly string[]).includes(obj.source)) {
    throw new Error(`field source must be one of ${READ_SOURCES.join(', ')}`);
  }
  const source = obj.source as ReadSource;
  const readAt = obj.read_at === undefined || obj.read_at === null ? null : (checkField({ name: 'read_at', kind: 'time' }, obj.read_at) as number);
  if (source === 'missing' && readAt !== null) throw new Error('field read_at must be absent for a missing read (no reading was found)');
  if (source !== 'missing' && readAt === null) throw new Error(`field read_at is required for a ${source} read (the reading's own time)`);
  const attempts = obj.attempts ?? 0;
  if (!Number.isSafeInteger(attempts) || (attempts as number) < 0) throw new Error('field attempts must be a non-negative integer');
  const read: MeterRead = { serial, period: obj.period, due_at: due, read_at: readAt, source, counters: {}, attempts: attempts as number };
  const extra: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (METER_READ_FIELDS.has(k)) continue;
    if (!READ_COUNTER_SET.has(k) && !EXTRA_SET.has(k)) throw new Error(`unknown meter_read field ${k}`);
    if (!Number.isSafeInteger(v) || (v as number) < 0) throw new Error(`field ${k} must be a non-negative integer`);
    if (READ_COUNTER_SET.has(k)) read.counters[k as (typeof READ_COUNTERS)[number]] = v as number;
    else extra[k] = v as number;
  }
  if (source === 'missing' && (Object.keys(read.counters).length || Object.keys(extra).length)) throw new Error('a missing read has no counters');
  if (Object.keys(extra).length) read.extra = extra;
  return read;
}

/** A meter read as its backup line. */
function meterReadLine(r: MeterRead): Obj {
  return {
    kind: 'meter_read', serial: r.serial, period: r.period, billing_time: formatTime(r.due_at),
    ...(r.read_at === null ? {} : { read_at: formatTime(r.read_at) }), source: r.source, attempts: r.attempts, ...r.counters, ...(r.extra ?? {}),
  };
}

export interface ImportResult {
  devices: number;
  /** Metric rows written. */
  metrics: number;
  /** Billing meter reads written. */
  meter_reads: number;
  /**
   * Meter reads not written because the printer has a read for that period already: a period's
   * first read is the one billed (store/meter-reads.ts), so a restore never replaces it.
   */
  meter_reads_skipped: number;
  /**
   * Raw rows not written because the device already has a reading at that time (migration 7):
   * a backup imported twice, or over the database it came from. Aggregated rows are keyed by
   * (serial, ts) too (keys.ts): a second import of a backup writes them with the values they have.
   */
  skipped: number;
  /** The file's format version: 1 when the header says so or there is none. */
  version: 1 | 2;
  /** Set when the file could not be checked for truncation (version 1): for the command to print. */
  warning?: string;
}

/**
 * The input's lines as bytes, each with its "\n" (the last may have none). The checksum covers the
 * exact bytes, which readline cannot give (it decodes and drops the line ends).
 */
async function* byteLines(input: Readable): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      const piece = buf.subarray(start, nl + 1);
      yield pending.length ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      start = nl + 1;
    }
    if (start < buf.length) pending.push(buf.subarray(start));
  }
  if (pending.length) yield Buffer.concat(pending);
}

/** A line's text without its "\n" or "\r\n". */
function lineText(raw: Buffer): string {
  let end = raw.length;
  if (raw[end - 1] === 0x0a) end--;
  if (raw[end - 1] === 0x0d) end--;
  return raw.toString('utf8', 0, end);
}

function checkCount(name: string, v: unknown): number {
  if (!Number.isSafeInteger(v) || (v as number) < 0) throw new Error(`trailer field ${name} must be a non-negative integer`);
  return v as number;
}

function parseTrailer(obj: Obj): { records: RecordCounts; sha256: string } {
  for (const k of Object.keys(obj)) if (!['kind', 'records', CHECKSUM].includes(k)) throw new Error(`unknown trailer field ${k}`);
  const r = obj.records;
  if (!isObject(r)) throw new Error('trailer field records must be an object');
  for (const k of Object.keys(r)) if (k !== 'device' && k !== 'metrics' && k !== 'meter_read') throw new Error(`unknown trailer field records.${k}`);
  const m = r.metrics;
  if (!isObject(m)) throw new Error('trailer field records.metrics must be an object');
  for (const k of Object.keys(m)) if (!(TIERS as readonly string[]).includes(k)) throw new Error(`unknown trailer field records.metrics.${k}`);
  const records = noRecords();
  records.device = checkCount('records.device', r.device);
  for (const t of TIERS) records.metrics[t] = checkCount(`records.metrics.${t}`, m[t]);
  // Absent in a backup written before meter reads were backed up, and in one without reads.
  records.meter_read = r.meter_read === undefined ? 0 : checkCount('records.meter_read', r.meter_read);
  const sha256 = obj[CHECKSUM];
  if (typeof sha256 !== 'string' || !HEX64.test(sha256)) throw new Error(`trailer field ${CHECKSUM} must be 64 lowercase hex digits`);
  return { records, sha256 };
}

/** What differs between the trailer's counts and the file's, in words; '' when they agree. */
function countDifferences(trailer: RecordCounts, file: RecordCounts): string {
  const out: string[] = [];
  const say = (what: string, want: number, got: number) => {
    if (want !== got) out.push(`${got} ${what} line${got === 1 ? '' : 's'} in the file, ${want} in the trailer`);
  };
  say('device', trailer.device, file.device);
  for (const t of TIERS) say(`${t} metrics`, trailer.metrics[t], file.metrics[t]);
  say('meter_read', trailer.meter_read, file.meter_read);
  return out.join(', ');
}

/** Reads NDJSON from `input` into the database, all or nothing. */
export async function importNdjson(db: DB, input: Readable): Promise<ImportResult> {
  const devices = new DeviceStore(db);
  const metrics = new MetricsStore(db);
  const reads = new MeterReadStore(db);
  const result: ImportResult = { devices: 0, metrics: 0, meter_reads: 0, meter_reads_skipped: 0, skipped: 0, version: 1 };
  const counts = noRecords();
  const hash = createHash(CHECKSUM);
  let hasHeader = false;
  let trailerLine = 0;
  let n = 0;
  db.exec('BEGIN IMMEDIATE');
  try {
    for await (const raw of byteLines(input)) {
      n++;
      // "The last line is the trailer": anything after it (a second backup appended, a stray line)
      // means the file is not what export wrote.
      if (trailerLine) throw new ImportError(n, `a line after the trailer (line ${trailerLine}); a version 2 backup ends with its trailer`);
      const text = lineText(raw);
      if (text.trim() === '') {
        hash.update(raw);
        continue;
      }
      let obj: unknown;
      try {
        obj = JSON.parse(text);
      } catch (err) {
        // A last line cut short is what a backup cut mid-line looks like: say so.
        const cut = raw[raw.length - 1] !== 0x0a ? ' at the end of the file, without a newline: the backup is truncated' : '';
        throw new ImportError(n, `invalid JSON${cut} (${errorText(err)})`);
      }
      try {
        if (!isObject(obj)) throw new Error('expected a JSON object');
        const inherited = inheritedKeyProblem(obj);
        if (inherited) throw new Error(inherited);
        if (obj.kind === 'trailer') {
          if (result.version !== 2) throw new Error(`a trailer belongs to a version 2 backup; this one is version 1${hasHeader ? '' : ' (no header)'}`);
          const trailer = parseTrailer(obj);
          const diff = countDifferences(trailer.records, counts);
          if (diff) throw new Error(`the record counts do not match the trailer: ${diff}`);
          const got = hash.digest('hex');
          if (got !== trailer.sha256) {
            throw new Error(`checksum mismatch: the bytes before the trailer hash to ${CHECKSUM} ${got}, the trailer says ${trailer.sha256}; the backup was changed or damaged after export`);
          }
          trailerLine = n;
          continue;
        }
        hash.update(raw);
        if (obj.kind === 'header') {
          if (n !== 1) throw new Error('the header must be the first line');
          if (obj.format !== FORMAT || (obj.version !== 1 && obj.version !== 2)) {
            throw new Error(`unsupported format ${JSON.stringify(obj.format)} version ${JSON.stringify(obj.version)} (this agent reads ${FORMAT} versions 1 and 2)`);
          }
          hasHeader = true;
          result.version = obj.version;
        } else if (obj.kind === 'device') {
          devices.put(parseDevice(obj));
          counts.device++;
          result.devices++;
        } else if (obj.kind === 'metrics') {
          const m = parseMetrics(obj);
          if (!devices.get(m.serial)) throw new Error(`metrics for unknown device ${JSON.stringify(m.serial)}`);
          counts.metrics[m.tier]++;
          if (m.tier === 'raw') {
            const id = metrics.insertRawIfNew({ serial: m.serial, ts: m.ts, ...m.counters, toner_levels: m.toner_levels, extra: m.extra });
            result[id === undefined ? 'skipped' : 'metrics']++;
          } else {
            const counters: Record<string, { min: number; max: number; avg: number }> = {};
            for (const [k, v] of Object.entries(m.counters)) counters[k] = { min: v, max: v, avg: v };
            metrics.upsertAggregate(m.tier, {
              serial: m.serial,
              ts: m.ts,
              // The backup format carries served values only: a restored bucket counts as one sample.
              sample_count: 1,
              counters,
              toner_last: m.toner_levels,
              toner_avg: m.toner_levels,
              extra_max: m.extra,
            });
            result.metrics++;
          }
        } else if (obj.kind === 'meter_read') {
          const r = parseMeterRead(obj);
          // Devices come first in a backup, and deleting a printer deletes its reads (store/devices.ts).
          if (!devices.get(r.serial)) throw new Error(`meter_read for unknown device ${JSON.stringify(r.serial)}`);
          counts.meter_read++;
          result[reads.insert(r, Date.now()) ? 'meter_reads' : 'meter_reads_skipped']++;
        } else {
          throw new Error(`unknown kind ${JSON.stringify(obj.kind)} (expected header, device, metrics, meter_read or trailer)`);
        }
      } catch (err) {
        throw err instanceof ImportError ? err : new ImportError(n, errorText(err));
      }
    }
    // Checked before COMMIT: a version 2 file cut at a line boundary parses line by line like a
    // smaller backup, and only the missing trailer tells it apart.
    if (result.version === 2 && !trailerLine) {
      throw new ImportError(n, `backup is truncated: no trailer after line ${n} (a version 2 backup ends with one)`, true);
    }
    db.exec('COMMIT');
  } catch (err) {
    // SQLite has already rolled back on some errors (SQLITE_FULL): a second ROLLBACK would throw
    // "no transaction is active" and hide the real cause.
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
  if (result.version === 1) {
    result.warning = `${hasHeader ? 'format version 1' : 'no header line: read as format version 1, which'} has no trailer, so the file cannot be checked for truncation`;
  }
  return result;
}

/**
 * Writes the whole database as NDJSON version 2, in a stable order (devices, then raw, hourly,
 * daily, monthly, then the billing meter reads), then the trailer.
 */
export async function exportNdjson(db: DB, out: Writable): Promise<void> {
  const devices = new DeviceStore(db);
  const metrics = new MetricsStore(db);
  const reads = new MeterReadStore(db);
  const records = noRecords();
  const hash = createHash(CHECKSUM);
  const write = async (obj: unknown, hashed = true) => {
    // A name stored before the producers renamed the ones the import refuses (a supply called
    // `constructor`) is renamed the same way here: every backup the box writes, it restores.
    const bytes = Buffer.from(JSON.stringify(withStorableKeys(obj)) + '\n');
    if (hashed) hash.update(bytes);
    if (!out.write(bytes)) await new Promise((r) => out.once('drain', r));
  };
  // One read transaction: the export is a consistent snapshot even while the agent writes.
  db.exec('BEGIN');
  try {
    await write(HEADER);
    for (const d of devices.listAll()) {
      await write({ kind: 'device', ...serialize(DEVICE_BACKUP_FIELDS, trustInRawData(d) as unknown as Obj) });
      records.device++;
    }
    for (const tier of TIERS) {
      for (const s of metrics.iterateTier(tier)) {
        const { tier: _t, ...json } = snapshotJson(s);
        const line: Obj = { kind: 'metrics', tier, ...json, ...(s.extra ?? {}) };
        await write(line);
        records.metrics[tier]++;
      }
    }
    for (const r of reads.iterateAll()) {
      await write(meterReadLine(r));
      records.meter_read++;
    }
    const { meter_read, ...trailerRecords } = records;
    await write({ kind: 'trailer', records: meter_read ? records : trailerRecords, [CHECKSUM]: hash.digest('hex') }, false);
  } finally {
    db.exec('COMMIT');
  }
}
