// Checks a metrics database after crashes (kill -9 / power cut): SQLite integrity, every committed
// snapshot still accounted for (raw row, or a rolled-up bucket whose sample_count covers it), and no
// half-written roll-up. Reusable by any crash test that knows which snapshots were committed.
import Database from 'better-sqlite3';
import { TIER_DEFS, type AggTier } from '../../src/store/tier-buckets.js';

export interface CommittedSnapshot {
  id: number;
  serial: string;
  ts: number;
}

export interface IntegrityReport {
  ok: boolean;
  problems: string[];
  raw: number;
  accountedByBucket: number;
}

const TIERS: AggTier[] = ['hourly', 'daily', 'monthly'];

/** Opens `file` read-only-in-spirit (it may replay the WAL) and checks it. */
export function checkMetricsIntegrity(file: string, committed: CommittedSnapshot[]): IntegrityReport {
  const db = new Database(file);
  const problems: string[] = [];
  try {
    const ic = db.pragma('integrity_check', { simple: true });
    if (ic !== 'ok') problems.push(`integrity_check: ${ic}`);

    // 1. Every committed snapshot: raw row with the same id, serial and ts, or a bucket covering it.
    const rawById = db.prepare('SELECT serial, ts FROM metrics_raw WHERE id = ?');
    const bucket: Record<AggTier, import('better-sqlite3').Statement> = Object.fromEntries(
      TIERS.map((t) => [t, db.prepare(`SELECT sample_count FROM ${TIER_DEFS[t].table} WHERE serial = ? AND ts = ?`)]),
    ) as never;
    const missing: CommittedSnapshot[] = [];
    let raw = 0;
    for (const c of committed) {
      const r = rawById.get(c.id) as { serial: string; ts: number } | undefined;
      if (r && r.serial === c.serial && r.ts === c.ts) raw++;
      else missing.push(c);
    }
    // Group the missing ones by the finest bucket that exists for them; that bucket's sample_count
    // must cover every committed snapshot in its period.
    const need = new Map<string, { tier: AggTier; serial: string; start: number; have: number }>();
    let accounted = 0;
    for (const c of missing) {
      let found = false;
      for (const t of TIERS) {
        const start = TIER_DEFS[t].start(c.ts);
        const row = bucket[t].get(c.serial, start) as { sample_count: number } | undefined;
        if (!row) continue;
        found = true;
        const key = `${t}|${c.serial}|${start}`;
        if (!need.has(key)) need.set(key, { tier: t, serial: c.serial, start, have: row.sample_count });
        break;
      }
      if (found) accounted++;
      else problems.push(`lost snapshot id=${c.id} serial=${c.serial} ts=${new Date(c.ts).toISOString()}`);
    }
    for (const n of need.values()) {
      const end = TIER_DEFS[n.tier].next(n.start);
      const expected = committed.filter((c) => c.serial === n.serial && c.ts >= n.start && c.ts < end).length;
      if (n.have < expected) {
        problems.push(`${n.tier} bucket ${n.serial} ${new Date(n.start).toISOString()} counts ${n.have} < ${expected} committed`);
      }
    }

    // 2. No half-done roll-up: every bucket whose source rows are all still there equals its source
    // (buckets are written whole, in one transaction); every closed bucket below the watermark that
    // has source rows exists.
    for (const t of TIERS) {
      const def = TIER_DEFS[t];
      const firstSrc = db.prepare(`SELECT min(ts) FROM ${def.source}`).pluck().get() as number | null;
      if (firstSrc === null) continue;
      // The bucket holding the oldest source row may have been thinned by retention; skip it.
      const intact = def.next(def.start(firstSrc));
      const srcCount = def.source === 'metrics_raw' ? 'count(*)' : 'sum(sample_count)';
      const sums = db.prepare(`SELECT ${srcCount} FROM ${def.source} WHERE serial = ? AND ts >= ? AND ts < ?`).pluck();
      const rows = db.prepare(`SELECT serial, ts, sample_count FROM ${def.table} WHERE ts >= ?`).all(intact) as {
        serial: string; ts: number; sample_count: number;
      }[];
      for (const b of rows) {
        const s = sums.get(b.serial, b.ts, def.next(b.ts)) as number | null;
        if (s !== null && s !== b.sample_count) {
          problems.push(`${t} bucket ${b.serial} ${new Date(b.ts).toISOString()} has ${b.sample_count} samples, source has ${s}`);
        }
      }
      const wm = db.prepare('SELECT done_until FROM rollup_state WHERE tier = ?').pluck().get(t) as number | undefined;
      if (wm !== undefined) {
        const srcBuckets = db
          .prepare(`SELECT DISTINCT serial, ts FROM ${def.source} WHERE ts >= ? AND ts < ?`)
          .all(intact, wm) as { serial: string; ts: number }[];
        const has = db.prepare(`SELECT 1 FROM ${def.table} WHERE serial = ? AND ts = ?`).pluck();
        const seen = new Set<string>();
        for (const r of srcBuckets) {
          const start = def.start(r.ts);
          const key = `${r.serial}|${start}`;
          if (seen.has(key)) continue;
          seen.add(key);
          if (def.next(start) > wm) continue;
          if (!has.get(r.serial, start)) problems.push(`${t} bucket ${r.serial} ${new Date(start).toISOString()} missing below watermark`);
        }
      }
    }
    return { ok: problems.length === 0, problems, raw, accountedByBucket: accounted };
  } finally {
    db.close();
  }
}
