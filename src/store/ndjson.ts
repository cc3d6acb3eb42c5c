// Backup and restore as NDJSON (decisions.md): one object a line, devices then metrics by tier.
// Import is one transaction: the first bad line rejects the whole file, naming the line.
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { DB } from './db.js';
import { DeviceStore } from './devices.js';
import { MetricsStore } from './metrics.js';
import { TIERS, type Device, type Tier } from '../model/device.js';
import { DEVICE_BACKUP_FIELDS } from '../model/device-fields.js';
import { METRICS_COUNTERS, METRICS_EXTRA_COUNTERS, serialize, type Field } from '../model/serialize.js';
import { parseTime } from '../model/time.js';
import { snapshotJson } from '../model/views.js';

export const HEADER = { kind: 'header', format: 'printbox-ndjson', version: 1 } as const;
export const MAX_SERIAL_LENGTH = 256;

export class ImportError extends Error {
  constructor(readonly line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

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
  return d as unknown as Device;
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

export interface ImportResult {
  devices: number;
  /** Metric rows written. */
  metrics: number;
  /**
   * Raw rows not written because the device already has a reading at that time (migration 7):
   * a backup imported twice, or over the database it came from. Aggregated rows are keyed by
   * (serial, ts) too (keys.ts): a second import of a backup writes them with the values they have.
   */
  skipped: number;
}

/** Reads NDJSON from `input` into the database, all or nothing. */
export async function importNdjson(db: DB, input: Readable): Promise<ImportResult> {
  const devices = new DeviceStore(db);
  const metrics = new MetricsStore(db);
  const result: ImportResult = { devices: 0, metrics: 0, skipped: 0 };
  const lines = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  db.exec('BEGIN IMMEDIATE');
  try {
    for await (const text of lines) {
      n++;
      if (text.trim() === '') continue;
      let obj: unknown;
      try {
        obj = JSON.parse(text);
      } catch (err) {
        throw new ImportError(n, `invalid JSON: ${(err as Error).message}`);
      }
      try {
        if (!isObject(obj)) throw new Error('expected a JSON object');
        if (obj.kind === 'header') {
          if (n !== 1) throw new Error('the header must be the first line');
          if (obj.format !== HEADER.format || obj.version !== HEADER.version) {
            throw new Error(`unsupported format ${JSON.stringify(obj.format)} version ${JSON.stringify(obj.version)}`);
          }
        } else if (obj.kind === 'device') {
          devices.put(parseDevice(obj));
          result.devices++;
        } else if (obj.kind === 'metrics') {
          const m = parseMetrics(obj);
          if (!devices.get(m.serial)) throw new Error(`metrics for unknown device ${JSON.stringify(m.serial)}`);
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
            });
            result.metrics++;
          }
        } else {
          throw new Error(`unknown kind ${JSON.stringify(obj.kind)} (expected header, device or metrics)`);
        }
      } catch (err) {
        throw err instanceof ImportError ? err : new ImportError(n, (err as Error).message);
      }
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
  return result;
}

/** Writes the whole database as NDJSON, in a stable order (devices, then raw, hourly, daily, monthly). */
export async function exportNdjson(db: DB, out: Writable): Promise<void> {
  const devices = new DeviceStore(db);
  const metrics = new MetricsStore(db);
  const write = async (obj: unknown) => {
    if (!out.write(JSON.stringify(obj) + '\n')) await new Promise((r) => out.once('drain', r));
  };
  // One read transaction: the export is a consistent snapshot even while the agent writes.
  db.exec('BEGIN');
  try {
    await write(HEADER);
    for (const d of devices.listAll()) {
      await write({ kind: 'device', ...serialize(DEVICE_BACKUP_FIELDS, d as unknown as Obj) });
    }
    for (const tier of TIERS) {
      for (const s of metrics.iterateTier(tier)) {
        const { tier: _t, ...json } = snapshotJson(s);
        const line: Obj = { kind: 'metrics', tier, ...json, ...(s.extra ?? {}) };
        await write(line);
      }
    }
  } finally {
    db.exec('COMMIT');
  }
}
