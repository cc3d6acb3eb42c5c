// Checks shared by the tests against PrintMaster's own server (test/agent/server): the box's
// readings (its own database) against the server's `metrics_history`, the link's status, and
// waiting for progress.
//
//   pmTime(text)                  -> epoch ms of a time the server stored ("2026-11-26 00:00:00.5+00:00")
//   boxReadings(agent, serial)    -> the box's raw reading times for serial, ascending (its own database)
//   serverReadings(pm, serial)    -> the server's reading times for serial, ascending
//   assertSameReadings(box, srv)  -> one server row per box reading, each within 60 s of it
//   primaryAddress()              -> the address the box registers (its first non-internal IPv4)
//   linkOf(agent)                 -> GET /settings' server.link
//   until(what, probe, ms)        -> poll probe until it gives a value (no fixed sleeps)
import assert from 'node:assert/strict';
import os from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Agent } from './agent.js';
import type { PmServer } from './printmaster.js';
import { until } from './until.js';

export type Json = Record<string, unknown>;

/** The server keeps Go's time.Time through its SQLite driver: "2006-01-02 15:04:05.999999999-07:00". */
export function pmTime(text: string): number {
  const m = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$/.exec(text.trim());
  assert.ok(m, `a server time: ${text}`);
  const ms = Date.parse(`${m[1]}T${m[2]}.${(m[3] ?? '0').padEnd(3, '0').slice(0, 3)}${m[4] ?? 'Z'}`);
  assert.ok(Number.isFinite(ms), `a server time: ${text}`);
  return ms;
}

export function boxReadings(agent: Agent, serial: string): number[] {
  const db = new Database(join(agent.dataDir, 'printbox.db'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return (db.prepare('SELECT ts FROM metrics_raw WHERE serial = ? ORDER BY ts').all(serial) as { ts: number }[]).map((r) => r.ts);
  } finally {
    db.close();
  }
}

export function serverReadings(pm: PmServer, serial: string): number[] {
  return pm
    .query<{ timestamp: string }>('SELECT timestamp FROM metrics_history WHERE serial = ?', serial)
    .map((r) => pmTime(r.timestamp))
    .sort((a, b) => a - b);
}

export const TIME_SLACK_MS = 60_000;

/**
 * Every box reading has its own row on the server, once, at its own time (within a minute: the
 * server stamps a batch's readings with the batch's time). Both lists ascending: the i-th box
 * reading is the i-th server row, since a minute's move cannot reorder readings.
 */
export function assertSameReadings(serial: string, box: number[], server: number[]): void {
  const iso = (l: number[]) => l.map((t) => new Date(t).toISOString()).join(', ');
  assert.equal(server.length, box.length, `${serial}: ${server.length} rows on the server (${iso(server)}) for ${box.length} readings on the box (${iso(box)})`);
  for (let i = 0; i < box.length; i++) {
    const off = Math.abs(server[i] - box[i]);
    assert.ok(off <= TIME_SLACK_MS, `${serial}: the reading of ${new Date(box[i]).toISOString()} is at ${new Date(server[i]).toISOString()} on the server (${off} ms off)`);
  }
}

/** What the box registers as its address: its first non-internal IPv4 address. */
export function primaryAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '';
}

export async function linkOf(agent: Agent): Promise<Json> {
  const r = await agent.get('/settings');
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { server: { link: Json } }).server.link;
}

export { until };

/** POST JSON to the agent's API. */
export function postJson(agent: Agent, path: string, body: unknown) {
  return agent.request(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });
}

/** Server log lines that an agent's frame or upload went wrong. */
export function protocolComplaints(log: string): string[] {
  return log.split('\n').filter((l) => /unknown (websocket )?message type|Invalid JSON|Failed to parse WebSocket message|Failed to store metrics/i.test(l));
}

/** Points the agent's discovery at one simulated printer, scans (twice at most: a loaded machine's simulator may be slow) and saves it. */
export async function findAndSave(agent: Agent, simPort: number, address: string, serial: string): Promise<void> {
  const s = await postJson(agent, '/settings', {
    discovery: { manual_ranges: true, ranges_text: address, allowed_ranges: [`${address}/32`], snmp_timeout_ms: 2000 },
    snmp: { port: simPort },
  });
  assert.equal(s.status, 200, s.body);
  for (let attempt = 0; attempt < 2; attempt++) {
    const d = await postJson(agent, '/discover', {});
    assert.equal(d.status, 202, d.body);
    const state = await until('the scan to end', async () => {
      const st = JSON.parse((await agent.get('/discover')).body) as { state: string; found: number };
      return st.state !== 'running' ? st : undefined;
    }, 60_000);
    if (state.found >= 1) break;
  }
  const saved = await postJson(agent, '/devices/save', { serial });
  assert.equal(saved.status, 200, `discovery found ${serial}: ${saved.body}`);
}
