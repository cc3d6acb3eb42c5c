// Builders for NDJSON seed files in the backup format of docs/decisions/0011-ndjson-backup.md:
//   {"kind":"device", ...Device fields (contract 2.2)}
//   {"kind":"metrics","tier":"raw|hourly|daily|monthly", ...MetricsSnapshot fields (contract 2.3)}
// Timestamps are built relative to a fixed `now` (epoch ms) that the test chooses, and printed the way
// the agent must print them (RFC 3339 UTC, `Z`, fraction only when non-zero, trailing zeros trimmed).

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export type Tier = 'raw' | 'hourly' | 'daily' | 'monthly';

/** RFC 3339 UTC as the agent emits it: `2026-03-01T10:00:00Z`, `2026-03-01T10:00:00.5Z`. */
export function rfc3339(ms: number): string {
  const s = new Date(ms).toISOString(); // 2026-03-01T10:00:00.500Z
  return s.replace(/\.(\d{3})Z$/, (_m, frac: string) => {
    const t = frac.replace(/0+$/, '');
    return t ? `.${t}Z` : 'Z';
  });
}

/** `now` rounded down to a whole second, so that seeded timestamps print without fractions. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / SECOND) * SECOND;
}

/** Start of the UTC hour / day / month containing ms. */
export function hourStart(ms: number): number {
  return Math.floor(ms / HOUR) * HOUR;
}
export function dayStart(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}
export function monthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
/** Bucket start of `ms` for an aggregated tier (raw: unchanged). */
export function bucketStart(tier: Tier, ms: number): number {
  if (tier === 'hourly') return hourStart(ms);
  if (tier === 'daily') return dayStart(ms);
  if (tier === 'monthly') return monthStart(ms);
  return ms;
}

export interface DeviceLine {
  kind: 'device';
  serial: string;
  ip: string;
  last_seen: string;
  created_at: string;
  first_seen: string;
  is_saved: boolean;
  visible: boolean;
  [field: string]: unknown;
}

export interface MetricsLine {
  kind: 'metrics';
  tier: Tier;
  serial: string;
  timestamp: string;
  [field: string]: unknown;
}

/**
 * A device line. Two forms:
 *   device(serial, ip, now, fields?)   times relative to `now` (epoch ms)
 *   device(serial, fields?)            now = Date.now(); ip from fields.ip (default "192.0.2.200")
 * Defaults: last_seen = now-1min, first_seen = created_at = now-10d, discovered (is_saved false,
 * visible true), source_type "import", device_type "network". Override anything; time fields may be
 * given as epoch ms numbers (converted) or strings (kept).
 */
export function device(serial: string, fields?: Record<string, unknown>): DeviceLine;
export function device(serial: string, ip: string, now: number, fields?: Record<string, unknown>): DeviceLine;
export function device(
  serial: string,
  ipOrFields: string | Record<string, unknown> = {},
  nowArg?: number,
  fieldsArg: Record<string, unknown> = {},
): DeviceLine {
  const fields = typeof ipOrFields === 'string' ? fieldsArg : ipOrFields;
  const ip = typeof ipOrFields === 'string' ? ipOrFields : String(fields.ip ?? '192.0.2.200');
  const now = nowArg ?? Date.now();
  const out: Record<string, unknown> = {
    kind: 'device',
    serial,
    ip,
    last_seen: rfc3339(now - MINUTE),
    created_at: rfc3339(now - 10 * DAY),
    first_seen: rfc3339(now - 10 * DAY),
    is_saved: false,
    visible: true,
    device_type: 'network',
    source_type: 'import',
  };
  for (const [k, v] of Object.entries(fields)) {
    out[k] = (k === 'last_seen' || k === 'created_at' || k === 'first_seen') && typeof v === 'number' ? rfc3339(v) : v;
  }
  return out as DeviceLine;
}

/** A metrics line at epoch ms `ts` (printed as given: align aggregated rows with bucketStart). */
export function metrics(serial: string, tier: Tier, ts: number, fields: Record<string, unknown> = {}): MetricsLine {
  return { kind: 'metrics', tier, serial, timestamp: rfc3339(ts), ...fields };
}

export const HEADER = { kind: 'header', format: 'printbox-ndjson', version: 1 } as const;

/** Joins lines into NDJSON (header first unless withHeader is false), with a final newline. */
export function ndjson(lines: object[], withHeader = true): string {
  const all = withHeader ? [HEADER, ...lines] : lines;
  return all.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

/** The Device JSON the agent should serve for a seeded line: the line without `kind`. */
export function asDevice(line: DeviceLine): Record<string, unknown> {
  const { kind: _k, ...rest } = line;
  return rest;
}

/**
 * The MetricsSnapshot the agent should serve for a seeded metrics line, without its `id`
 * (compare with `withoutId(served)`). keepTier: true for history rows, false for latest.
 */
export function asSnapshot(line: MetricsLine, keepTier: boolean): Record<string, unknown> {
  const { kind: _k, tier, ...rest } = line;
  return keepTier ? { ...rest, tier } : rest;
}

export function withoutId(row: unknown): Record<string, unknown> {
  const { id: _id, ...rest } = row as Record<string, unknown>;
  return rest;
}

/** Deterministic pseudo-random integers (tests must be reproducible). */
export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** One cartridge life of a seeded supply: installed at `start`, its true level reached 0 at `empty`. */
export interface SupplyLife {
  serial: string;
  supply: string;
  start: number;
  empty: number;
}

export interface SupplyFleetDevice {
  serial: string;
  /** How it reports: levels in steps of `step` points, weekend use or none, unknown (-3) readings. */
  step: number;
  weekdaysOnly: boolean;
  unknownShare: number;
  readings: { ts: number; page_count: number; toner_levels: Record<string, number> }[];
}

/**
 * A fleet whose supplies drain and are replaced (the forecast benchmark's fleet): `days` days up
 * to `now`, a reading every `everyHours`. Each printer prints a random volume each day (none at
 * weekends for some), each page uses a random share of a cartridge's yield; a cartridge that
 * reaches 0 is replaced 0-3 days later (reported 0 meanwhile). Levels are reported rounded to the
 * printer's step (1 or 10 points) with ±1 point of noise on fine ones, and some printers answer
 * -3 ("some left") at random. Returns the readings and every life's true start and empty time.
 */
export function supplyFleet(now: number, opts: { devices?: number; days?: number; everyHours?: number; seed?: number } = {}): { devices: SupplyFleetDevice[]; lives: SupplyLife[] } {
  const rnd = lcg(opts.seed ?? 36);
  const days = opts.days ?? 730;
  const every = (opts.everyHours ?? 6) * HOUR;
  const start = dayStart(now - days * DAY);
  const devices: SupplyFleetDevice[] = [];
  const lives: SupplyLife[] = [];
  const SUPPLIES: Record<string, number> = { black: 1, cyan: 0.6, magenta: 0.5, yellow: 0.4 }; // share of pages using each
  for (let i = 0; i < (opts.devices ?? 20); i++) {
    const serial = `FLEET-${String(i).padStart(3, '0')}`;
    const dev: SupplyFleetDevice = { serial, step: i % 3 === 0 ? 10 : 1, weekdaysOnly: i % 2 === 0, unknownShare: i % 5 === 0 ? 0.1 : 0, readings: [] };
    const pagesPerDay = 40 + rnd() * 400;
    const yieldPages = 3000 + rnd() * 9000;
    // per supply: true level, replacement pending until, start of its life
    const state = Object.fromEntries(Object.keys(SUPPLIES).map((k) => [k, { level: 30 + rnd() * 70, replaceAt: 0, lifeStart: NaN }]));
    let pages = Math.round(rnd() * 100_000);
    let dayPages = 0;
    let day = -1;
    for (let t = start; t <= now; t += every) {
      const d = Math.floor(t / DAY);
      if (d !== day) {
        day = d;
        const weekday = (new Date(t).getUTCDay() + 6) % 7; // 0 = Monday
        dayPages = weekday >= 5 && dev.weekdaysOnly ? 0 : pagesPerDay * (0.5 + rnd()) * (weekday >= 5 ? 0.3 : 1);
      }
      const printed = dayPages * (every / DAY);
      pages += printed;
      const levels: Record<string, number> = {};
      for (const [k, share] of Object.entries(SUPPLIES)) {
        const s = state[k];
        if (s.level <= 0 && s.replaceAt && t >= s.replaceAt) Object.assign(s, { level: 100, replaceAt: 0, lifeStart: t });
        if (s.level > 0) {
          s.level -= (100 * printed * share * (0.7 + rnd() * 0.6)) / yieldPages;
          if (s.level <= 0) {
            s.level = 0;
            s.replaceAt = t + rnd() * 3 * DAY;
            if (!Number.isNaN(s.lifeStart)) lives.push({ serial, supply: k, start: s.lifeStart, empty: t });
          }
        }
        const noisy = dev.step === 1 ? s.level + (rnd() - 0.5) * 2 : s.level;
        // a coarse printer says 10 % until the cartridge is out, as the panels do
        const reported = Math.max(0, Math.min(100, dev.step === 1 ? Math.round(noisy) : Math.ceil(noisy / dev.step) * dev.step));
        levels[k] = rnd() < dev.unknownShare ? -3 : s.level <= 0 ? 0 : Math.max(reported, 1);
      }
      dev.readings.push({ ts: t, page_count: Math.round(pages), toner_levels: levels });
    }
    devices.push(dev);
  }
  return { devices, lives };
}
