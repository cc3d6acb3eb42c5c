// A hostile printer's names, then the box's own backup: every backup the box writes restores.
// Two printers on loopback name their supplies like a prototype's properties: one answers SNMP
// (a real recording with such supplies and trays, served by snmpsim), the other only IPP on 631
// (marker-names and marker-types such names; found by the scan's port probe, as a printer that
// announced itself would be read). A real agent scans them (nothing is saved), its readings are
// rolled up (`printbox-agent rollup`), and its backup (GET /backup) is restored into a fresh agent
// (POST /restore) and imported into another (`printbox-agent import`): restored, with the renamed
// supplies and their levels. The restored box's own backup restores again. Nothing leaves 127/8.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { exportNdjson, expectJson, importNdjson, runCli, startAgent, writeConfig, type Agent } from '../../kit/agent.js';
import { ensureSnmpsim, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { until } from '../../kit/until.js';
import { findInheritedKey } from '../../../src/model/inherited-keys.js';
import { HOSTILE_IPP_MARKERS, HOSTILE_SNMP_SUPPLIES, hostileIppReply, writeHostileRecording } from '../../kit/hostile-names.js';

const SNMP_ADDRESS = '127.0.9.81';
const IPP_ADDRESS = '127.0.9.82';
const SNMP_SERIAL = 'HOSTILE-SNMP-81';
const IPP_SERIAL = 'HOSTILE-IPP-82';
const skipReason = ensureSnmpsim() ?? (typeof process.getuid === 'function' && process.getuid() !== 0 ? 'port 631 needs root' : null);

type Json = Record<string, any>;
let sim: SnmpSim;
let ipp: http.Server;
let tmp: string;
const agents: Agent[] = [];

const post = (a: Agent, path: string, body: unknown) =>
  a.request(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });
const restore = (a: Agent, body: string) => a.request('/restore', { method: 'POST', body, headers: { 'Content-Type': 'application/x-ndjson', Accept: 'application/json' } });
const latestLevels = async (a: Agent, serial: string): Promise<Json> => {
  const profile = expectJson(await a.get(`/api/devices/profile?serial=${serial}`)) as Json;
  return profile.latest_metrics?.toner_levels ?? {};
};

/** The renamed supplies, with their levels, in the agent's latest reading of each printer. */
async function assertRenamedLevels(a: Agent, what: string): Promise<void> {
  const snmp = await latestLevels(a, SNMP_SERIAL);
  for (const s of HOSTILE_SNMP_SUPPLIES) assert.equal(snmp[s.key], s.level, `${what}: ${SNMP_SERIAL} ${s.key} ${JSON.stringify(snmp)}`);
  const viaIpp = await latestLevels(a, IPP_SERIAL);
  for (const m of HOSTILE_IPP_MARKERS) assert.equal(viaIpp[m.key], m.level, `${what}: ${IPP_SERIAL} ${m.key} ${JSON.stringify(viaIpp)}`);
  for (const levels of [snmp, viaIpp]) for (const k of ['constructor', 'prototype', '__proto__', 'undefined']) assert.ok(!Object.hasOwn(levels, k), `${what}: no ${k} key`);
}

before(async () => {
  if (skipReason) return;
  tmp = mkdtempSync(join(os.tmpdir(), 'printbox-hostile-backup-'));
  sim = await startSnmpSim({ endpoints: [{ address: SNMP_ADDRESS, recording: writeHostileRecording(tmp, SNMP_SERIAL) }] });
  const reply = hostileIppReply(IPP_SERIAL);
  ipp = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/ipp', 'Content-Length': reply.length }).end(reply));
  });
  await new Promise<void>((resolve, reject) => ipp.once('error', reject).listen(631, IPP_ADDRESS, resolve));
});

after(async () => {
  for (const a of agents) await a.stop();
  await sim?.stop();
  await new Promise((r) => (ipp ? ipp.close(r) : r(undefined)));
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('a scan of hostile printers, roll-ups, then backup and restore, import and a second round trip', { skip: skipReason ?? false }, async () => {
  const source = await startAgent();
  agents.push(source);
  expectJson(
    await post(source, '/settings', {
      discovery: { manual_ranges: true, ranges_text: `${SNMP_ADDRESS}-${IPP_ADDRESS.split('.').pop()}`, allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 1500 },
      snmp: { port: sim.port, communities: ['public'] },
    }),
  );
  expectJson(await post(source, '/discover', {}), 202);
  await until('both printers read', async () => {
    const s = expectJson(await source.get('/discover')) as Json;
    if (s.state === 'running') return undefined;
    const found = (expectJson(await source.get('/devices/discovered')) as Json[]).map((d) => d.serial);
    return found.includes(SNMP_SERIAL) && found.includes(IPP_SERIAL) ? true : undefined;
  });
  await assertRenamedLevels(source, 'read');

  // Roll-ups over those readings: the hour they are in has ended two hours later.
  const rolled = await runCli(['rollup', '--now', new Date(Date.now() + 2 * 3600_000).toISOString()], { configPath: source.configPath });
  assert.equal(rolled.code, 0, rolled.stderr);
  const backup = await source.request('/backup');
  assert.equal(backup.status, 200);
  const lines = backup.body.trim().split('\n').map((l) => JSON.parse(l) as Json);
  const hourly = lines.filter((l) => l.kind === 'metrics' && l.tier === 'hourly' && l.serial === SNMP_SERIAL);
  assert.ok(hourly.length >= 1, 'the readings were rolled up');
  assert.equal(hourly[0].toner_levels.supply_constructor, 5, JSON.stringify(hourly[0]));
  // The names are still there as values (a tray called `constructor`), never as keys.
  assert.ok(backup.body.includes('"constructor"'), 'the printer\'s names are kept as values');
  for (const [i, l] of lines.entries()) assert.equal(findInheritedKey(l), undefined, `line ${i + 1}: ${JSON.stringify(l).slice(0, 300)}`);

  // POST /restore into a fresh agent.
  const restored = await startAgent();
  agents.push(restored);
  const r = await restore(restored, backup.body);
  assert.equal(r.status, 200, r.body);
  assert.equal((JSON.parse(r.body) as Json).devices, 2);
  await assertRenamedLevels(restored, 'restored');

  // `printbox-agent import` of the same backup into another fresh box (the agent not running).
  const imported = await writeConfig();
  const cli = await importNdjson(imported.configPath, backup.body);
  assert.equal(cli.code, 0, cli.stderr);
  const importedLines = await exportNdjson(imported.configPath);
  const raw = importedLines.find((l) => l.kind === 'metrics' && l.tier === 'raw' && l.serial === IPP_SERIAL) as Json;
  assert.equal(raw.toner_levels.supply_constructor, 5, JSON.stringify(raw));
  assert.equal(raw.toner_levels.drum, 70);

  // The restored box's own backup restores again (into the first box, over what it has).
  const again = await restored.request('/backup');
  assert.equal(again.status, 200);
  const second = await restore(source, again.body);
  assert.equal(second.status, 200, second.body);
  const third = await importNdjson(imported.configPath, again.body);
  assert.equal(third.code, 0, third.stderr);
});
