// Hostile SNMP soak: a real agent scans, again and again, a range where real printers
// (snmpsim, real recordings) sit beside hostile responders (test/kit/hostile-snmp.ts:
// malformed, truncated, oversized, wrong-type, non-increasing-OID, flood and stray replies) and
// silent addresses, until the hostile responders have sent N replies. Reported: replies sent,
// scans, agent crashes (must be 0), the agent's RSS before/after, the slowest /api/version
// answer during the scans, and whether every printer read in every scan equals what a clean
// scan (printers only) read first.
//   npm run build && node dist/scripts/soak/hostile-snmp.js [--replies 10000] [--flood 40] [--max-scans 200]
// Needs Debian's snmpsim (bash scripts/setup-test-deps.sh). Only 127.0.223.0/24 is used.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { startAgent, type Agent } from '../../test/kit/agent.js';
import { startHostileSnmp, type HostileResponder } from '../../test/kit/hostile-snmp.js';
import { fixturePath, startSnmpSim, type SnmpSim } from '../../test/kit/snmpsim.js';
import { unitEnvironment, unitNodeFlags } from '../bench/process.js';
import { isMain, machineLine, numberArg } from './cli.js';

const NET = '127.0.223';
export const SOAK_PRINTERS = [
  { address: `${NET}.1`, file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' },
  { address: `${NET}.2`, file: 'printmaster/kyocera_cs4053.snmprec', serial: 'RH28Y00024' },
  { address: `${NET}.3`, file: 'printmaster/brother.snmprec', serial: 'U64641E7J134163' },
  { address: `${NET}.4`, file: 'printmaster/epson_cw.snmprec', serial: 'X7F4008528' },
  { address: `${NET}.5`, file: 'printmaster/epson_sc.snmprec', serial: 'X8G9000415' },
];
/** Hostile responders on .11-.42; .50-.59 stay silent. */
const HOSTILE = Array.from({ length: 32 }, (_, i) => `${NET}.${11 + i}`);
const LAST = 59;
/**
 * Short, so that a scan's silent and hostile hosts cost little, yet not so short that a printer's
 * answer on a loaded machine is taken for silence (800 ms lost walks in CI beside a VM and the Pi
 * card's build).
 */
const TIMEOUT_MS = 2000;
/** The clean scan also warms snmpsim up (it indexes a recording at its first request). */
const CLEAN_TIMEOUT_MS = 5000;
/**
 * The agent's RSS may grow this much over the hostile scans (V8 and malloc settle in) and no more:
 * ~10,000 replies are ~100 MiB, and an agent that kept them grew by 113 MiB (tried: every
 * datagram pushed to an array in client.ts).
 */
export const RSS_GROWTH_BOUND_MIB = 48;

export interface HostileSoakOptions {
  /** Stop once the hostile responders have sent at least this many replies. */
  replies: number;
  /** Datagrams per flood reply (default 40). */
  floodSize?: number;
  /** Give up after this many scans even if `replies` was not reached (default 200). */
  maxScans?: number;
  log?: (line: string) => void;
}

export interface HostileSoakResult {
  replies: number;
  /** Bytes of those replies. */
  bytes: number;
  requests: number;
  /** Replies per hostile mode. */
  byMode: Record<string, number>;
  /** Scans with hostile responders (the clean reference scan not counted). */
  scans: number;
  /** Scans that did not end in state "done" with every target scanned. */
  incompleteScans: number;
  /** Times the agent process was found dead (0: it never crashed). */
  crashes: number;
  /** RSS of the agent after the clean scan, after the last hostile scan, and the highest seen (sampled every ~100 ms), MiB. */
  rssBeforeMiB: number;
  rssAfterMiB: number;
  rssPeakMiB: number;
  /** The slowest GET /api/version while hostile scans ran (ms). */
  apiMaxMs: number;
  /** Printer readings (one per printer per scan) equal to the clean scan's. */
  printerReadsOk: number;
  /** What differed, first few (empty when every printer was read correctly in every scan). */
  mismatches: string[];
  seconds: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/**
 * One HTTPS request to the agent on loopback (its self-signed certificate accepted). Plain
 * node:https rather than the test helper's request: a soak measures robustness, and must not stop
 * on a contract check of a field another change is adding.
 */
function call(agent: Agent, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = { Accept: 'application/json' };
    if (data) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
    const req = https.request({ host: '127.0.0.1', port: agent.httpsPort, path, method, rejectUnauthorized: false, agent: false, headers, timeout: 30_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(data);
  });
}

async function json(agent: Agent, path: string): Promise<any> {
  const r = await call(agent, 'GET', path);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
  return JSON.parse(r.text);
}

async function post(agent: Agent, path: string, body: unknown): Promise<any> {
  const r = await call(agent, 'POST', path, body);
  if (r.status >= 300) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
  return JSON.parse(r.text);
}

/** Runs one discovery and waits for its end; returns its final state. */
async function discover(agent: Agent): Promise<{ state: string; scanned: number; total: number; found: number }> {
  const started = await post(agent, '/discover', {});
  for (;;) {
    await sleep(200);
    const s = await json(agent, '/discover');
    if (s.scan_id !== started.scan_id || s.state !== 'running') return s;
  }
}

/**
 * What a scan read from a printer, without what changes from one reading to the next (times,
 * ids, the scan's number): two correct readings of the same recording are equal.
 */
async function printerReading(agent: Agent, serial: string): Promise<{ text: string; ts: string }> {
  const p = await json(agent, `/api/devices/profile?serial=${encodeURIComponent(serial)}`);
  const { last_seen, created_at, first_seen, last_scan_id, ...device } = p.device;
  const { id, timestamp, ...metrics } = p.latest_metrics ?? {};
  void last_seen, created_at, first_seen, last_scan_id, id;
  return { text: JSON.stringify({ device, metrics }), ts: String(timestamp) };
}

export async function runHostileSoak(opts: HostileSoakOptions): Promise<HostileSoakResult> {
  const log = opts.log ?? (() => {});
  const t0 = Date.now();
  let sim: SnmpSim | undefined;
  let hostile: HostileResponder | undefined;
  let agent: Agent | undefined;
  try {
    sim = await startSnmpSim({ endpoints: SOAK_PRINTERS.map((p) => ({ address: p.address, recording: fixturePath(p.file) })) });
    hostile = await startHostileSnmp({ addresses: HOSTILE, port: sim.port, floodSize: opts.floodSize ?? 40, lateMs: TIMEOUT_MS * 3 });
    // The agent runs with the unit's Node flags (a 96 MiB old space), as on the box: decoded
    // replies it kept would end in an out-of-memory crash; Buffers it kept (outside the V8 heap)
    // would show in the RSS.
    agent = await startAgent({ nodeFlags: unitNodeFlags(), env: unitEnvironment() });
    const settings = (ranges: string, timeoutMs: number) =>
      post(agent!, '/settings', {
        discovery: { manual_ranges: true, ranges_text: ranges, allowed_ranges: [`${NET}.0/24`], snmp_timeout_ms: timeoutMs, discover_concurrency: 64 },
        snmp: { port: sim!.port, communities: ['public'] },
      });

    // The reference: a clean scan of the printers alone.
    await settings(`${NET}.1-5`, CLEAN_TIMEOUT_MS);
    const clean = await discover(agent);
    if (clean.state !== 'done' || clean.found !== SOAK_PRINTERS.length) throw new Error(`clean scan: ${JSON.stringify(clean)}`);
    const reference = new Map<string, { text: string; ts: string }>();
    for (const p of SOAK_PRINTERS) reference.set(p.serial, await printerReading(agent, p.serial));
    const pid = agent.proc.pid!;
    const rssBeforeMiB = rssMiB(pid);
    let rssPeakMiB = rssBeforeMiB;
    log(`clean scan: ${clean.found} printers; agent RSS ${rssBeforeMiB.toFixed(1)} MiB`);

    await settings(`${NET}.1-${LAST}`, TIMEOUT_MS);
    const result = { scans: 0, incompleteScans: 0, crashes: 0, printerReadsOk: 0, mismatches: [] as string[], apiMaxMs: 0 };
    const maxScans = opts.maxScans ?? 200;
    while (hostile.stats.replies < opts.replies && result.scans < maxScans) {
      // /api/version is timed while the scan runs: a reply that stalls the event loop shows here.
      let scanning = true;
      const probeApi = (async () => {
        while (scanning) {
          const t = Date.now();
          await call(agent!, 'GET', '/api/version').catch(() => undefined);
          result.apiMaxMs = Math.max(result.apiMaxMs, Date.now() - t);
          rssPeakMiB = Math.max(rssPeakMiB, rssMiB(pid));
          await sleep(100);
        }
      })();
      let state;
      try {
        state = await discover(agent);
      } catch (e) {
        if (agent.alive()) throw e;
        state = undefined; // the agent died: reported below, with its last words
      } finally {
        scanning = false;
        await probeApi;
      }
      result.scans++;
      if (!state || !agent.alive()) {
        result.crashes++;
        throw new Error(`the agent died during scan ${result.scans}:\n${agent.stderr().slice(-3000)}`);
      }
      if (state.state !== 'done' || state.scanned !== state.total || state.total !== LAST) result.incompleteScans++;
      for (const p of SOAK_PRINTERS) {
        const now = await printerReading(agent, p.serial);
        const ref = reference.get(p.serial)!;
        if (now.text === ref.text && now.ts !== ref.ts) result.printerReadsOk++;
        else if (result.mismatches.length < 10) {
          result.mismatches.push(now.ts === ref.ts ? `scan ${result.scans}: ${p.serial} not read (no new reading)` : `scan ${result.scans}: ${p.serial} read ${now.text} instead of ${ref.text}`);
        }
        ref.ts = now.ts; // the next scan must bring a newer reading again
      }
      const rss = rssMiB(pid);
      rssPeakMiB = Math.max(rssPeakMiB, rss);
      log(`scan ${result.scans}: ${state.state} ${state.scanned}/${state.total}, found ${state.found}; hostile replies ${hostile.stats.replies}; RSS ${rss.toFixed(1)} MiB`);
    }
    const rssAfterMiB = rssMiB(pid);
    if (!agent.alive()) result.crashes++;
    return {
      replies: hostile.stats.replies,
      bytes: hostile.stats.bytes,
      requests: hostile.stats.requests,
      byMode: Object.fromEntries([...hostile.stats.byMode].sort()),
      ...result,
      rssBeforeMiB,
      rssAfterMiB,
      rssPeakMiB,
      seconds: (Date.now() - t0) / 1000,
    };
  } finally {
    await agent?.stop();
    await hostile?.stop();
    await sim?.stop();
  }
}

if (isMain(import.meta.url)) {
  const replies = numberArg('replies', 10_000);
  console.log(`hostile SNMP soak: ${machineLine()}`);
  console.log(`${SOAK_PRINTERS.length} printers (snmpsim), ${HOSTILE.length} hostile responders, ${LAST - 5 - HOSTILE.length} silent addresses; until ${replies} hostile replies`);
  console.log(`agent Node flags (the unit's): ${unitNodeFlags().join(' ') || 'none'}`);
  const r = await runHostileSoak({ replies, floodSize: numberArg('flood', 40), maxScans: numberArg('max-scans', 200), log: (l) => console.log(`  ${l}`) });
  console.log(`hostile replies sent: ${r.replies} (${(r.bytes / 2 ** 20).toFixed(1)} MiB, answering ${r.requests} requests)`);
  console.log(`replies per mode: ${Object.entries(r.byMode).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(`scans: ${r.scans} (incomplete: ${r.incompleteScans})`);
  console.log(`agent crashes: ${r.crashes}`);
  const grew = r.rssAfterMiB - r.rssBeforeMiB;
  console.log(`agent RSS: before ${r.rssBeforeMiB.toFixed(1)} MiB, after ${r.rssAfterMiB.toFixed(1)} MiB, peak ${r.rssPeakMiB.toFixed(1)} MiB (grew ${grew.toFixed(1)}; bound ${RSS_GROWTH_BOUND_MIB})`);
  console.log(`slowest /api/version during the scans: ${r.apiMaxMs} ms`);
  console.log(`printers read correctly: ${r.printerReadsOk} of ${r.scans * SOAK_PRINTERS.length} readings${r.mismatches.length ? `\n  ${r.mismatches.join('\n  ')}` : ''}`);
  console.log(`time: ${r.seconds.toFixed(0)} s`);
  const ok = r.crashes === 0 && r.mismatches.length === 0 && r.incompleteScans === 0 && r.replies >= replies && grew < RSS_GROWTH_BOUND_MIB;
  console.log(ok ? 'PASS' : 'FAIL');
  process.exitCode = ok ? 0 : 1;
}
