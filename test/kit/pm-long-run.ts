// A long run of the box against PrintMaster's own server, shared by
// test/agent/server/long-run.test.ts and scripts/bench/server-long-run.ts: three printers (snmpsim
// serving recordings) polled at a 1-minute interval for `minutes`, with the server stopped for
// `outageRounds` of the box's rounds during the run and started again on the same data and port.
// What it gives back is observed, not judged: the readings on both sides, the server's Last Seen
// sampled throughout, and when the first heartbeat and the channel came back after the outage.
//
//   longRun(opts) -> LongRun (below); the caller asserts on it (the test) or prints figures (the bench)
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startAgent, stopAll, type Agent } from './agent.js';
import { startPrintmaster, type PmServer } from './printmaster.js';
import { fixturePath, startSnmpSim, type SnmpSim } from './snmpsim.js';
import { boxReadings, linkOf, pmTime, postJson, serverReadings, until, type Json } from './pm-checks.js';
import { connectedAgentId } from './pm-agent.js';

export const LONG_RUN_PRINTERS = [
  { address: '127.0.57.1', file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' },
  { address: '127.0.57.2', file: 'printmaster/brother.snmprec', serial: 'U64641E7J134163' },
  { address: '127.0.57.3', file: 'printmaster/epson_cw.snmprec', serial: 'X7F4008528' },
];
export const INTERVAL_MS = 60_000;

export type Phase = 'up' | 'down' | 'back';

/** One look at the server's Last Seen (epoch ms) of the agent and of each printer. */
export interface Sample {
  at: number;
  phase: Phase;
  agentSeen: number;
  deviceSeen: Record<string, number>;
}

export interface LongRun {
  /** The window the readings are counted in: [start, end). */
  start: number;
  end: number;
  /** Per printer: reading times on the box and on the server, ascending, from the start of the run to the window's end. */
  box: Record<string, number[]>;
  server: Record<string, number[]>;
  /** Per printer: the box's reading round of each of its readings (metrics_raw.round), by reading time. */
  rounds: Record<string, Map<number, number | null>>;
  samples: Sample[];
  /** The outage: the server stopped, started again, its first heartbeat answered after, the channel connected after. */
  stoppedAt: number;
  startedAt: number;
  heartbeatAt: number;
  channelAt: number;
}

export interface LongRunOptions {
  minutes: number;
  /** Box rounds taken while the server is down. */
  outageRounds: number;
  /** Server rounds before the outage begins. */
  roundsBefore: number;
  log?: (line: string) => void;
}

function boxRounds(agent: Agent, serial: string): Map<number, number | null> {
  const db = new Database(join(agent.dataDir, 'printbox.db'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const rows = db.prepare('SELECT ts, round FROM metrics_raw WHERE serial = ?').all(serial) as { ts: number; round: number | null }[];
    return new Map(rows.map((r) => [r.ts, r.round]));
  } finally {
    db.close();
  }
}

function lastSeen(pm: PmServer, agentId: string): { agentSeen: number; deviceSeen: Record<string, number> } {
  const agentRow = pm.query<{ last_seen: string }>('SELECT last_seen FROM agents WHERE agent_id = ?', agentId)[0];
  const deviceSeen: Record<string, number> = {};
  for (const d of pm.query<{ serial: string; last_seen: string }>('SELECT serial, last_seen FROM devices')) deviceSeen[d.serial] = pmTime(d.last_seen);
  return { agentSeen: agentRow ? pmTime(agentRow.last_seen) : 0, deviceSeen };
}

/** Starts everything, runs, stops everything; throws (after cleaning up) when a step never happens. */
export async function longRun(o: LongRunOptions): Promise<LongRun> {
  const log = o.log ?? (() => {});
  let pm: PmServer | undefined;
  let sim: SnmpSim | undefined;
  let sampling = false;
  let sampler: Promise<void> = Promise.resolve();
  try {
    [pm, sim] = await Promise.all([
      startPrintmaster(),
      startSnmpSim({ endpoints: LONG_RUN_PRINTERS.map((p) => ({ address: p.address, recording: fixturePath(p.file) })) }),
    ]);
    const server = pm;
    const agent = await startAgent({ serverUrl: server.url, server: { enrollment_token: server.token, ca_file: server.caFile } });
    // Registration applies the server's managed settings: the box's own come after them.
    await until('the box registered', async () => (await linkOf(agent)).registered === true);
    const set = await postJson(agent, '/settings', {
      discovery: { manual_ranges: true, ranges_text: '127.0.57.1-3', allowed_ranges: ['127.0.57.0/29'], snmp_timeout_ms: 2000, auto_discover: false },
      snmp: { port: sim.port },
      collection: { interval_minutes: INTERVAL_MS / 60_000 },
    });
    assert.equal(set.status, 200, set.body);
    for (let attempt = 0; ; attempt++) {
      assert.equal((await postJson(agent, '/discover', {})).status, 202);
      const st = await until('the scan to end', async () => {
        const s = JSON.parse((await agent.get('/discover')).body) as { state: string; found: number };
        return s.state !== 'running' ? s : undefined;
      });
      if (st.found >= LONG_RUN_PRINTERS.length || attempt >= 2) break; // a loaded machine's simulator may be slow
    }
    for (const p of LONG_RUN_PRINTERS) {
      const saved = await postJson(agent, '/devices/save', { serial: p.serial });
      assert.equal(saved.status, 200, `discovery found ${p.serial}: ${saved.body}`);
    }
    const saved = Date.now();
    const agentId = await connectedAgentId(server);
    await until('every printer on the server', () => {
      const have = new Set(server.query<{ serial: string }>('SELECT serial FROM devices').map((d) => d.serial));
      return LONG_RUN_PRINTERS.every((p) => have.has(p.serial));
    });
    // The schedule takes the new interval at its next minute tick and polls one interval later:
    // the window begins half an interval before that first round, so it holds `minutes` rounds.
    const firstRound = await until('the first polling round', () => {
      const first = LONG_RUN_PRINTERS.map((p) => boxReadings(agent, p.serial).find((t) => t >= saved));
      return first.every((t) => t !== undefined) ? Math.min(...(first as number[])) : undefined;
    }, 3 * INTERVAL_MS);
    const start = firstRound - INTERVAL_MS / 2;
    const end = start + o.minutes * 60_000;
    log(`run from ${new Date(start).toISOString()} to ${new Date(end).toISOString()}`);
    let phase = 'up' as Phase;
    const samples: Sample[] = [];
    sampling = true;
    sampler = (async () => {
      while (sampling) {
        if (phase !== 'down') samples.push({ at: Date.now(), phase, ...lastSeen(server, agentId) });
        await new Promise((r) => setTimeout(r, 2_000));
      }
    })();
    const serverCount = () => Math.min(...LONG_RUN_PRINTERS.map((p) => serverReadings(server, p.serial).filter((t) => t >= start).length));
    const boxCount = () => Math.min(...LONG_RUN_PRINTERS.map((p) => boxReadings(agent, p.serial).filter((t) => t >= start).length));

    await until(`${o.roundsBefore} rounds on the server`, () => serverCount() >= o.roundsBefore, (o.roundsBefore + 2) * INTERVAL_MS);
    phase = 'down';
    const stoppedAt = Date.now();
    await server.stop();
    log(`server stopped at ${new Date(stoppedAt).toISOString()}`);
    const taken = boxCount();
    await until(`${o.outageRounds} rounds on the box while the server is down`, () => boxCount() >= taken + o.outageRounds, (o.outageRounds + 2) * INTERVAL_MS);
    await server.start();
    const startedAt = Date.now();
    phase = 'back';
    log(`server started at ${new Date(startedAt).toISOString()}`);
    // The first heartbeat the server answers, and the channel, each as soon as the box has it.
    let heartbeatAt = 0;
    let channelAt = 0;
    await until('the first heartbeat answered and the channel connected', async () => {
      const l = await linkOf(agent);
      const hb = typeof l.last_heartbeat_at === 'string' ? Date.parse(l.last_heartbeat_at) : 0;
      if (!heartbeatAt && hb >= startedAt) heartbeatAt = hb;
      if (!channelAt && l.channel_connected === true) channelAt = Date.now();
      return heartbeatAt > 0 && channelAt > 0;
    }, 10 * INTERVAL_MS);
    log(`first heartbeat ${new Date(heartbeatAt).toISOString()}, channel ${new Date(channelAt).toISOString()}`);
    await until('the backlog sent', async () => (await linkOf(agent)).backlog === 0, 5 * INTERVAL_MS);
    phase = 'up';

    // The window ends half an interval after its last round: then every reading of it is sent.
    await until('the end of the window', () => Date.now() >= end, end - Date.now() + INTERVAL_MS);
    await until('the backlog sent', async () => (await linkOf(agent)).backlog === 0);
    sampling = false;
    await sampler;
    const box: Record<string, number[]> = {};
    const srv: Record<string, number[]> = {};
    const rounds: Record<string, Map<number, number | null>> = {};
    // Everything before the window's end (a round after it may be under way on the box).
    for (const p of LONG_RUN_PRINTERS) {
      box[p.serial] = boxReadings(agent, p.serial).filter((t) => t < end);
      srv[p.serial] = serverReadings(server, p.serial).filter((t) => t < end);
      rounds[p.serial] = boxRounds(agent, p.serial);
    }
    return { start, end, box, server: srv, rounds, samples, stoppedAt, startedAt, heartbeatAt, channelAt };
  } finally {
    sampling = false;
    await sampler;
    await stopAll();
    await Promise.all([pm?.kill(), sim?.stop()]);
  }
}

/** Readings of `times` within [start, end). */
export function within(times: number[], start: number, end: number): number[] {
  return times.filter((t) => t >= start && t < end);
}

export type { Json };
