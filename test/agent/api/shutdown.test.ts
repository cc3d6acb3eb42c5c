// Bounded shutdown: SIGTERM ends the real agent at once whatever the network does. A
// polling round of 100 saved printers that never answer (loopback addresses nothing listens on),
// with the longest SNMP timeout the settings allow (60 s) and 2 reads at a time, would take 50
// minutes; a scan of 100 such addresses the same. The agent must exit by itself with code 0, every
// part ending because it was told to stop, not by a timeout: the round and the scan say in the log
// that they were stopped with every read cut short or never started and no address given up on
// (no elapsed time is asserted: the measured times are in docs/performance.md, from
// scripts/bench/shutdown.ts), leave an intact database holding every snapshot it acknowledged,
// and mark no device "not responding" for a read that shutdown cut short.
// Only 127.0.0.0/8 is contacted: the live printer is snmpsim on 127.0.21.201.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { exportNdjson, expectJson, startAgent, type Agent } from '../../kit/agent.js';
import { device, ndjson } from '../../kit/seed.js';
import { checkMetricsIntegrity, type CommittedSnapshot } from '../../kit/integrity.js';
import { fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { startServerPeer, type ServerPeer } from '../../kit/server-peer.js';

/** The settings' maximum: far beyond the agent's 4.5 s shutdown deadline, so waiting for one would show. */
const SNMP_TIMEOUT_MS = 60_000;
const SILENT = Array.from({ length: 100 }, (_, i) => ({ serial: `SILENT-21-${String(i + 1).padStart(3, '0')}`, ip: `127.0.21.${i + 1}` }));
const LIVE = { address: '127.0.21.201', file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let sim: SnmpSim;
const cleanup: (() => Promise<unknown>)[] = [];

before(async () => {
  sim = await startSnmpSim({ endpoints: [{ address: LIVE.address, recording: fixturePath(LIVE.file) }] });
});

after(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  await sim?.stop();
});

function post(agent: Agent, path: string, body: unknown) {
  return agent.request(path, {
    method: 'POST',
    timeoutMs: 15_000,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
}

async function configure(agent: Agent): Promise<void> {
  expectJson(
    await post(agent, '/settings', {
      discovery: {
        allowed_ranges: ['127.0.0.0/8'],
        snmp_timeout_ms: SNMP_TIMEOUT_MS,
        discover_concurrency: 2,
        manual_ranges: true,
        ranges_text: '127.0.21.1-100',
      },
      snmp: { port: sim.port, communities: ['public'] },
    }),
  );
}

async function waitForLog(agent: Agent, text: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!agent.stdout().includes(text)) {
    if (Date.now() > end) throw new Error(`no log line "${text}" within ${ms} ms\n${agent.stdout().slice(-3000)}`);
    await sleep(25);
  }
}

/** The agent's JSON log line with this message (the last one), parsed. */
function logLine(agent: Agent, msg: string): Record<string, unknown> | undefined {
  const lines = agent.stdout().split('\n').filter((l) => l.includes(`"${msg}"`));
  return lines.length ? (JSON.parse(lines[lines.length - 1]) as Record<string, unknown>) : undefined;
}

/** Sends SIGTERM; resolves the exit code, signal and when it exited (SIGKILL after 120 s, as a backstop: only a give-up). */
async function terminate(agent: Agent): Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }> {
  const p = agent.proc;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((r) =>
    p.once('exit', (code, signal) => r({ code, signal, at: Date.now() })),
  );
  p.kill('SIGTERM');
  const backstop = setTimeout(() => p.kill('SIGKILL'), 120_000);
  const out = await exited;
  clearTimeout(backstop);
  return out;
}

function snapshotOf(body: string): CommittedSnapshot {
  const s = JSON.parse(body) as { id: number; serial: string; timestamp: string };
  return { id: s.id, serial: s.serial, ts: Date.parse(s.timestamp) };
}

test('SIGTERM during a polling round of 100 silent saved printers: exit 0 without waiting for any SNMP timeout, nothing lost or torn', { timeout: 300_000 }, async (t) => {
  const peer: ServerPeer = await startServerPeer();
  cleanup.push(() => peer.stop());
  const agent = await startAgent({
    serverUrl: peer.url,
    server: { enrollment_token: peer.enrollmentToken, ca_file: peer.caFile },
    seed: ndjson([
      ...SILENT.map((d) => device(d.serial, { ip: d.ip, is_saved: true })),
      device(LIVE.serial, { ip: LIVE.address, is_saved: true }),
    ]),
  });
  cleanup.push(() => agent.stop());
  await peer.waitForAgentSocket(20_000);
  await configure(agent);

  // Snapshots the agent acknowledges, before and up to the signal.
  const acknowledged: CommittedSnapshot[] = [];
  const collectLive = async () => {
    const r = await post(agent, '/devices/metrics/collect', { serial: LIVE.serial });
    if (r.status === 200) acknowledged.push(snapshotOf(r.body));
    return r;
  };
  for (let i = 0; i < 3; i++) assert.equal((await collectLive()).status, 200, 'the live printer answers');
  let writing = true;
  const writer = (async () => {
    while (writing) {
      try {
        await collectLive();
      } catch {
        return; // the connection was cut by the shutdown: never acknowledged
      }
    }
  })();

  // The polling round, as the server's `collect` command starts it (the schedule's round).
  const sent = Date.now();
  const command = peer.command('collect', {}).catch((e: Error) => e);
  await waitForLog(agent, '"polling round started"');
  await sleep(500); // well inside the round: 2 reads in flight, 98+ waiting
  assert.ok(agent.alive());
  const exit = await terminate(agent);
  writing = false;
  await writer;
  await command;

  t.diagnostic(`exited ${exit.at - sent} ms after the round was asked for`);
  assert.equal(exit.signal, null, `exited by itself, not killed\n${agent.stdout().slice(-3000)}`);
  assert.equal(exit.code, 0, agent.stderr());
  const out = agent.stdout();
  assert.doesNotMatch(out, /shutdown deadline reached/, 'every part ended by itself');
  assert.doesNotMatch(out, /"polling round done"/);
  // The round ended because it was stopped: its 2 reads in flight cut short, the other silent
  // printers (and the live one, last) never started; none was heard out to its timeout (it would
  // have been marked "not responding": checked below). Counts, not times.
  const stopped = logLine(agent, 'polling round stopped');
  assert.ok(stopped, `no "polling round stopped" line\n${out.slice(-3000)}`);
  assert.deepEqual(
    { read: stopped.read, cut_short: stopped.cut_short, not_started: stopped.not_started },
    { read: 0, cut_short: 2, not_started: SILENT.length + 1 - 2 },
    JSON.stringify(stopped),
  );

  assert.ok(acknowledged.length >= 3);
  await agent.stop({ keepDir: true });
  try {
    const report = checkMetricsIntegrity(join(agent.dataDir, 'printbox.db'), acknowledged);
    assert.deepEqual(report.problems, [], 'integrity_check ok, every acknowledged snapshot there');
    assert.equal(report.raw, acknowledged.length);
    // No read was heard out, so no silent printer may be marked as not responding.
    const lines = await exportNdjson(agent.configPath);
    const silent = new Set(SILENT.map((d) => d.serial));
    const marked = lines.filter(
      (l) => l.kind === 'device' && silent.has(l.serial as string) && ((l.status_messages as string[] | undefined) ?? []).some((m) => m.startsWith('not answering since')),
    );
    assert.deepEqual(marked.map((l) => l.serial), [], 'no device marked "not responding" by a read the shutdown cut short');
  } finally {
    rmSync(agent.dir, { recursive: true, force: true });
  }
});

test('SIGTERM during a scan of 100 silent addresses and single reads of silent printers: exit 0 without waiting for any SNMP timeout', { timeout: 300_000 }, async (t) => {
  const agent = await startAgent({ seed: ndjson(SILENT.slice(0, 3).map((d) => device(d.serial, { ip: d.ip, is_saved: true }))) });
  cleanup.push(() => agent.stop());
  await configure(agent);
  const sent = Date.now();
  const started = expectJson(await post(agent, '/discover', {}), 202) as { state: string; total: number };
  assert.equal(started.state, 'running');
  // Single reads (POST /devices/metrics/collect) of silent printers, in flight at the signal.
  const reads = SILENT.slice(0, 3).map((d) => post(agent, '/devices/metrics/collect', { serial: d.serial }).catch((e: Error) => e));
  await sleep(500);
  const state = expectJson(await agent.get('/discover')) as { state: string; total: number; scanned: number };
  assert.equal(state.state, 'running');
  assert.equal(state.total, 100);
  assert.equal(state.scanned, 0, 'no address answered or timed out yet');
  const exit = await terminate(agent);
  const results = await Promise.all(reads);

  t.diagnostic(`exited ${exit.at - sent} ms after the scan was asked for`);
  assert.equal(exit.signal, null, `exited by itself, not killed\n${agent.stdout().slice(-3000)}`);
  assert.equal(exit.code, 0, agent.stderr());
  assert.ok(results.every((r) => r instanceof Error), 'no single read was answered (its connection was closed)');
  const out = agent.stdout();
  assert.doesNotMatch(out, /shutdown deadline reached/);
  // The scan ended because it was stopped, with no address given up on (each would have cost a
  // 60 s timeout, then its worker would have taken the next): scanned counts only the 2 reads in
  // flight (discover_concurrency), ended by the stop. Counts, not times.
  const stopped = logLine(agent, 'discovery stopped');
  assert.ok(stopped, `no "discovery stopped" line\n${out.slice(-3000)}`);
  assert.deepEqual({ total: stopped.total, found: stopped.found }, { total: 100, found: 0 }, JSON.stringify(stopped));
  assert.ok((stopped.scanned as number) <= 2, `only the reads in flight ended: ${JSON.stringify(stopped)}`);
  await agent.stop({ keepDir: true });
  try {
    assert.deepEqual(checkMetricsIntegrity(join(agent.dataDir, 'printbox.db'), []).problems, []);
  } finally {
    rmSync(agent.dir, { recursive: true, force: true });
  }
});
