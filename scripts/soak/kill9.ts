// kill -9 soak: a real agent under mixed write load is killed with SIGKILL at random
// moments, N times; after each restart every write it acknowledged must still be there and the
// database must pass PRAGMA integrity_check. The same approach as test/agent/api/durability.test.ts
// (real SNMP polls of snmpsim printers on loopback, SIGKILL, restart), with more kinds of write:
//   - polls:    POST /devices/metrics/collect (a snapshot with its id, from a real SNMP read)
//   - updates:  POST /devices/update, a location numbered in sending order per device, in turn on
//               the polled printers (a poll that overlapped an update used to write back the
//               location it had read: docs/reliability.md, Findings) and on devices nothing polls
//   - settings: POST /settings, snmp.communities carrying a sequence number
//   - imports:  `printbox-agent import` (the CLI, another process) of a new device and 3 snapshots,
//               run beside the agent while it writes
//   - saves:    POST /devices/save of devices those imports brought
// A write counts as acknowledged when its answer (200, or import exit 0) arrived before the kill.
// A numbered write may be found newer than the last acknowledged one (the request in flight at the
// kill may have committed without its answer getting out), never older.
//   npm run build && node dist/scripts/soak/kill9.js [--cycles 1000] [--seed N]
// Needs Debian's snmpsim (bash scripts/setup-test-deps.sh). Only 127.0.0.0/8 is used.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { startAgent, importNdjson, type Agent } from '../../test/kit/agent.js';
import { startSnmpSim, fixturePath, type SnmpSim } from '../../test/kit/snmpsim.js';
import { checkMetricsIntegrity, type CommittedSnapshot } from '../../test/kit/integrity.js';
import { device, metrics, ndjson, lcg, MINUTE } from '../../test/kit/seed.js';
import { isMain, machineLine, numberArg } from './cli.js';
import { communityNumber } from './settings-writer.js';

const PRINTERS = [
  { address: '127.0.2.1', file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' },
  { address: '127.0.2.2', file: 'printmaster/epson_sc.snmprec', serial: 'X8G9000415' },
  { address: '127.0.2.3', file: 'printmaster/epson_cw.snmprec', serial: 'X7F4008528' },
];
/** Imported at set-up, discovered but not saved: nothing polls them, only the update writer writes them. */
const UNPOLLED = ['SOAKUPD1', 'SOAKUPD2', 'SOAKUPD3'];
const UPDATED = [...PRINTERS.map((p) => p.serial), ...UNPOLLED];
const POLL_WRITERS = 2;
const IMPORTED_SNAPSHOTS = 3;

export interface Kill9Options {
  cycles: number;
  /** Seed of the kill moments (a run can be repeated). */
  seed?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface Kill9Result {
  cycles: number;
  acknowledged: { polls: number; updates: number; settings: number; imports: number; saves: number; total: number };
  lost: number;
  integrityErrors: number;
  /** The first problems found (lost writes, integrity_check output), for the report. */
  problems: string[];
  seconds: number;
}

/** What the agent acknowledged so far, and what a later check must find. */
class Ledger {
  snapshots: CommittedSnapshot[] = [];
  /** Per printer: the last acknowledged location number. */
  updates = new Map<string, number>();
  updateCount = 0;
  lastSetting = -1;
  settingCount = 0;
  /** Imported serials (import exited 0), and those POST /devices/save acknowledged. */
  imported: string[] = [];
  saved = new Set<string>();
}

/** Runs the cycles; resolves with the figures (throws only when the set-up itself fails). */
export async function runKill9(opts: Kill9Options): Promise<Kill9Result> {
  const log = opts.log ?? (() => {});
  const random = lcg(opts.seed ?? 21);
  const t0 = Date.now();
  const ledger = new Ledger();
  const problems: string[] = [];
  let lost = 0;
  let integrityErrors = 0;
  let sim: SnmpSim | undefined;
  let agent: Agent | undefined;
  try {
    sim = await startSnmpSim({ endpoints: PRINTERS.map((p) => ({ address: p.address, recording: fixturePath(p.file) })) });
    agent = await startAgent();
    await savePrinters(agent, sim.port);
    const seeded = await importNdjson(agent.configPath, ndjson(UNPOLLED.map((serial, i) => device(serial, `127.0.4.${i + 1}`, Date.now()))));
    if (seeded.code !== 0) throw new Error(`import of the updated devices failed: ${seeded.stderr}`);
    const dbFile = join(agent.dataDir, 'printbox.db');

    for (let cycle = 1; cycle <= opts.cycles; cycle++) {
      const stop = { now: false };
      const a = agent;
      const writers = [
        ...Array.from({ length: POLL_WRITERS }, (_, w) => pollWriter(a, ledger, stop, w)),
        updateWriter(a, ledger, stop),
        settingsWriter(a, ledger, stop),
        saveWriter(a, ledger, stop),
        importOnce(a, ledger, cycle),
      ];
      // Mostly 0.2-1.2 s into the load; one cycle in ten within 100 ms of the writers starting
      // (just after the restart and its checks), while the start-up roll-up catch-up may still run.
      // Until every kind of write has been acknowledged once in the run, that moment is counted
      // from when the last missing kind was: on a loaded machine a poll (a real SNMP read) can
      // take longer than any of the moments, and a run that never killed the agent after one
      // would not have tested it.
      const early = random() < 0.1;
      const delay = Math.floor(early ? random() * 100 : 200 + random() * 1000);
      await untilAcknowledged(ledger, a, PROGRESS_WAIT_MS);
      await sleep(delay);
      const exited = new Promise((r) => a.proc.once('exit', r));
      a.proc.kill('SIGKILL');
      await exited;
      stop.now = true;
      await Promise.all(writers);
      await a.restart();

      const cycleProblems = [...checkLedger(dbFile, ledger), ...(await checkLedgerOverApi(a, ledger))];
      for (const p of cycleProblems) {
        // SQLite's own check and the roll-up's consistency; anything else is a write gone missing.
        if (p.startsWith('integrity_check') || p.includes('source has') || p.includes('missing below watermark')) integrityErrors++;
        else lost++;
        if (problems.length < 50) problems.push(`cycle ${cycle}: ${p}`);
      }
      if (cycle % 10 === 0 || cycleProblems.length > 0 || cycle === opts.cycles) {
        log(`cycle ${cycle}/${opts.cycles}: killed after ${delay} ms; acknowledged ${total(ledger)}; lost ${lost}; integrity errors ${integrityErrors}; ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      }
    }
  } finally {
    await agent?.stop();
    await sim?.stop();
  }
  return {
    cycles: opts.cycles,
    acknowledged: {
      polls: ledger.snapshots.length,
      updates: ledger.updateCount,
      settings: ledger.settingCount,
      imports: ledger.imported.length,
      saves: ledger.saved.size,
      total: total(ledger),
    },
    lost,
    integrityErrors,
    problems,
    seconds: (Date.now() - t0) / 1000,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The longest a cycle waits for a kind of write not yet acknowledged in the run. */
const PROGRESS_WAIT_MS = 120_000;

/** The kinds of write the test asserts, not yet acknowledged in the run. */
function unacknowledged(ledger: Ledger): string[] {
  const count: Record<string, number> = {
    polls: ledger.snapshots.length,
    updates: ledger.updateCount,
    settings: ledger.settingCount,
    imports: ledger.imported.length,
  };
  return Object.keys(count).filter((k) => count[k] === 0);
}

/** Waits until every kind has been acknowledged once, the agent has exited, or limitMs. */
async function untilAcknowledged(ledger: Ledger, agent: Agent, limitMs: number): Promise<void> {
  if (unacknowledged(ledger).length === 0) return;
  let exited = agent.proc.exitCode !== null || agent.proc.signalCode !== null;
  agent.proc.once('exit', () => (exited = true));
  const t0 = Date.now();
  while (!exited && Date.now() - t0 < limitMs && unacknowledged(ledger).length > 0) await sleep(20);
}

const total = (l: Ledger) => l.snapshots.length + l.updateCount + l.settingCount + l.imported.length + l.saved.size;

function post(agent: Agent, path: string, body: unknown) {
  return agent.request(path, {
    method: 'POST',
    timeoutMs: 5000,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
}

/** A request to an agent being killed: undefined when the connection died with it (never acknowledged). */
async function tryPost(agent: Agent, path: string, body: unknown): Promise<{ status: number; body: string } | undefined> {
  try {
    return await post(agent, path, body);
  } catch (e) {
    // The helper throws AssertionError for an answer docs/openapi.yaml does not describe: that is
    // a finding, not a dead connection.
    if ((e as Error).name === 'AssertionError') throw e;
    return undefined;
  }
}

/** Discovery of the simulated printers, then all saved (as durability.test.ts does). */
async function savePrinters(agent: Agent, snmpPort: number): Promise<void> {
  const settings = await post(agent, '/settings', {
    discovery: { manual_ranges: true, ranges_text: '127.0.2.1-3', allowed_ranges: ['127.0.2.0/24'], snmp_timeout_ms: 2000 },
    snmp: { port: snmpPort },
  });
  if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.body}`);
  for (let attempt = 0; attempt < 3; attempt++) {
    await post(agent, '/discover', {});
    let state = { state: 'running', found: 0 };
    for (let i = 0; i < 300 && state.state === 'running'; i++) {
      await sleep(100);
      state = JSON.parse((await agent.get('/discover')).body) as typeof state;
    }
    if (state.found === PRINTERS.length) break;
  }
  const saved = JSON.parse((await post(agent, '/devices/save/all', {})).body) as { serials: string[] };
  if (saved.serials.length !== PRINTERS.length) throw new Error(`discovery found ${saved.serials.join(', ')}, not the ${PRINTERS.length} printers`);
}

async function pollWriter(agent: Agent, ledger: Ledger, stop: { now: boolean }, w: number): Promise<void> {
  for (let i = 0; !stop.now; i++) {
    const serial = PRINTERS[(w + i) % PRINTERS.length].serial;
    const r = await tryPost(agent, '/devices/metrics/collect', { serial });
    if (r?.status === 200) {
      const s = JSON.parse(r.body) as { id: number; serial: string; timestamp: string };
      ledger.snapshots.push({ id: s.id, serial: s.serial, ts: Date.parse(s.timestamp) });
    } else if (!r) return; // the agent is gone
  }
}

/** The location's number, from "soak <n>". */
const locationNumber = (location: unknown) => (typeof location === 'string' ? Number(/^soak (\d+)$/.exec(location)?.[1] ?? -1) : -1);

async function updateWriter(agent: Agent, ledger: Ledger, stop: { now: boolean }): Promise<void> {
  for (let i = 0; !stop.now; i++) {
    const serial = UPDATED[i % UPDATED.length];
    const n = (ledger.updates.get(serial) ?? 0) + 1;
    const r = await tryPost(agent, '/devices/update', { serial, location: `soak ${n}` });
    if (r?.status === 200) {
      ledger.updates.set(serial, n);
      ledger.updateCount++;
    } else if (!r) return;
  }
}

async function settingsWriter(agent: Agent, ledger: Ledger, stop: { now: boolean }): Promise<void> {
  while (!stop.now) {
    const n = ledger.lastSetting + 1;
    const r = await tryPost(agent, '/settings', { snmp: { communities: ['public', `soak-${n}`] } });
    if (r?.status === 200) {
      ledger.lastSetting = n;
      ledger.settingCount++;
    } else if (!r) return;
    await sleep(20); // settings are rare writes: keep them from crowding out the others
  }
}

async function saveWriter(agent: Agent, ledger: Ledger, stop: { now: boolean }): Promise<void> {
  while (!stop.now) {
    const serial = ledger.imported.find((s) => !ledger.saved.has(s));
    if (!serial) {
      await sleep(50);
      continue;
    }
    const r = await tryPost(agent, '/devices/save', { serial });
    if (r?.status === 200) ledger.saved.add(serial);
    else if (!r) return;
  }
}

/** One CLI import beside the running agent: a new device (not saved) and its snapshots. */
async function importOnce(agent: Agent, ledger: Ledger, cycle: number): Promise<void> {
  const serial = `SOAK${String(cycle).padStart(6, '0')}`;
  const now = Date.now();
  const lines = [
    device(serial, `127.0.3.${(cycle % 250) + 1}`, now),
    ...Array.from({ length: IMPORTED_SNAPSHOTS }, (_, i) => metrics(serial, 'raw', now - (i + 1) * MINUTE, { page_count: 1000 + i })),
  ];
  const r = await importNdjson(agent.configPath, ndjson(lines));
  if (r.code === 0) ledger.imported.push(serial);
}

/** Integrity and the acknowledged snapshots, devices and saves, from the database file. */
function checkLedger(dbFile: string, ledger: Ledger): string[] {
  const report = checkMetricsIntegrity(dbFile, ledger.snapshots);
  const problems = [...report.problems];
  const db = new Database(dbFile, { readonly: true });
  try {
    const saved = db.prepare('SELECT is_saved FROM devices WHERE serial = ?').pluck();
    const raw = db.prepare('SELECT count(*) FROM metrics_raw WHERE serial = ?').pluck();
    for (const serial of ledger.imported) {
      const isSaved = saved.get(serial) as number | undefined;
      if (isSaved === undefined) problems.push(`imported device ${serial} missing`);
      else if (ledger.saved.has(serial) && isSaved !== 1) problems.push(`saved device ${serial} not saved`);
      const n = raw.get(serial) as number;
      if (n !== IMPORTED_SNAPSHOTS) problems.push(`imported device ${serial} has ${n} snapshots, not ${IMPORTED_SNAPSHOTS}`);
    }
  } finally {
    db.close();
  }
  return problems;
}

/** The numbered writes, as the restarted agent serves them. */
async function checkLedgerOverApi(agent: Agent, ledger: Ledger): Promise<string[]> {
  const problems: string[] = [];
  const settings = JSON.parse((await agent.get('/settings')).body) as { snmp: { communities: string[] } };
  const n = communityNumber(settings.snmp.communities);
  if (ledger.lastSetting >= 0 && n < ledger.lastSetting) problems.push(`settings: soak-${n} served, soak-${ledger.lastSetting} was acknowledged`);
  for (const [serial, acked] of ledger.updates) {
    const { device: d } = JSON.parse((await agent.get(`/api/devices/profile?serial=${serial}`)).body) as { device: { location?: string } };
    const got = locationNumber(d.location);
    if (got < acked) problems.push(`update: ${serial} location ${JSON.stringify(d.location)}, "soak ${acked}" was acknowledged`);
  }
  return problems;
}

export function formatKill9(r: Kill9Result): string {
  const a = r.acknowledged;
  return [
    `kill -9 soak: ${machineLine()}`,
    `cycles:              ${r.cycles}`,
    `acknowledged writes: ${a.total} (polls ${a.polls}, updates ${a.updates}, settings ${a.settings}, imports ${a.imports}, saves ${a.saves})`,
    `lost:                ${r.lost}`,
    `integrity errors:    ${r.integrityErrors}`,
    `time:                ${r.seconds.toFixed(0)} s`,
    ...r.problems.map((p) => `  ${p}`),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const result = await runKill9({
    cycles: numberArg('cycles', 1000),
    seed: numberArg('seed', 21),
    log: (line) => console.log(line),
  });
  console.log(formatKill9(result));
  process.exitCode = result.lost === 0 && result.integrityErrors === 0 ? 0 : 1;
}
