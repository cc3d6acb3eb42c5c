// What PrintMaster's own server (../shared/tools/printmaster-server) shows of the box's printers'
// health and supplies: its dashboard calls a device "jam" when the uploaded device's
// `paper_jam` is true and "error" when its `error` is a non-empty string (server/main.go
// deriveDeviceStatus), and it shows the newest reading's toner_levels, where PrintMaster's agent
// reports a supply at "some remaining" (Printer-MIB -3) as 10 %. Three printers served by snmpsim:
// a Kyocera recording as it is (its waste toner box is at -3), and two copies of it, one jammed and
// one with its door open (test/fixtures/snmp-status). Then a managed setting the box leaves as it
// was, reported where that server shows an agent's report: its log, as its UI's Logs page lists it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot, startAgent, stopAll, type Agent } from '../../kit/agent.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { findAndSave, linkOf, until, type Json } from '../../kit/pm-checks.js';

const why = printmasterUnavailable() ?? ensureSnmpsim();

const PRINTERS = {
  ready: { address: '127.0.5.1', recording: fixturePath('printmaster/kyocera_p2040.snmprec'), serial: 'VD21457943' },
  jam: { address: '127.0.5.2', recording: join(repoRoot, 'test/fixtures/snmp-status/kyocera_p2040-jam.snmprec'), serial: 'VD2145JAM1' },
  door: { address: '127.0.5.3', recording: join(repoRoot, 'test/fixtures/snmp-status/kyocera_p2040-door.snmprec'), serial: 'VD2145DOOR' },
};

/** Every object with a `serial` in the server's dashboard tree (tenants, sites, agents, devices). */
function treeDevices(node: unknown, out: Json[] = []): Json[] {
  if (Array.isArray(node)) for (const n of node) treeDevices(n, out);
  else if (node && typeof node === 'object') {
    const o = node as Json;
    if (typeof o.serial === 'string' && 'status' in o) out.push(o);
    for (const v of Object.values(o)) treeDevices(v, out);
  }
  return out;
}

describe('device health and supplies on PrintMaster\'s server', { skip: why ?? false }, () => {
  let pm: PmServer;
  let sim: SnmpSim;
  let agent: Agent;

  before(async () => {
    [pm, sim] = await Promise.all([
      startPrintmaster(),
      startSnmpSim({ endpoints: Object.values(PRINTERS).map((p) => ({ address: p.address, recording: p.recording })) }),
    ]);
    // Set before the box enrolls: its first heartbeat brings the snapshot (no 60 s wait for the next).
    const put = await pm.api('PUT', `/api/v1/settings/tenants/${pm.tenant}`, { features: { epson_remote_mode_enabled: true } });
    assert.equal(put.status, 200, put.text);
    agent = await startAgent({ serverUrl: pm.url, server: { enrollment_token: pm.token, ca_file: pm.caFile, upload_interval_ms: 0 } });
    for (const p of Object.values(PRINTERS)) await findAndSave(agent, sim.port, p.address, p.serial);
  });
  after(async () => {
    await stopAll();
    await Promise.all([pm?.kill(), sim?.stop()]);
  });

  test('the server\'s status of each printer: healthy, jam, error (from paper_jam and error in its raw_data)', async () => {
    const serials = Object.values(PRINTERS).map((p) => p.serial);
    const raw = await until('the three printers on the server with their status fields', () => {
      const rows = pm.query<{ serial: string; raw_data: string }>('SELECT serial, raw_data FROM devices');
      const bySerial = new Map(rows.map((r) => [r.serial, JSON.parse(r.raw_data) as Json]));
      return serials.every((s) => typeof bySerial.get(s)?.paper_jam === 'boolean') ? bySerial : undefined;
    }, 90_000);
    assert.deepEqual([raw.get(PRINTERS.ready.serial)!.paper_jam, raw.get(PRINTERS.ready.serial)!.error], [false, '']);
    assert.deepEqual([raw.get(PRINTERS.jam.serial)!.paper_jam, raw.get(PRINTERS.jam.serial)!.error], [true, ''], JSON.stringify(raw.get(PRINTERS.jam.serial)!.status_messages));
    assert.equal(raw.get(PRINTERS.door.serial)!.paper_jam, false);
    assert.match(String(raw.get(PRINTERS.door.serial)!.error), /Door open/);

    // The server's own reading of them: its dashboard tree (what its UI's status filters use).
    const tree = await pm.api('GET', '/api/v1/dashboard/tree?include_devices=true');
    assert.equal(tree.status, 200, tree.text.slice(0, 300));
    const status = new Map(treeDevices(tree.json).map((d) => [d.serial, d.status]));
    assert.equal(status.get(PRINTERS.ready.serial), 'healthy', tree.text.slice(0, 2000));
    assert.equal(status.get(PRINTERS.jam.serial), 'jam');
    assert.equal(status.get(PRINTERS.door.serial), 'error');
  });

  test('a supply at "some remaining" (-3): 10 % on the server, as PrintMaster\'s agent gives it; -3 on the box', async () => {
    const serial = PRINTERS.ready.serial;
    const levels = await until('a reading of the Kyocera on the server', () => {
      const row = pm.query<{ toner_levels: string }>('SELECT toner_levels FROM metrics_history WHERE serial = ? ORDER BY timestamp DESC LIMIT 1', serial)[0];
      return row ? (JSON.parse(row.toner_levels) as Json) : undefined;
    }, 90_000);
    assert.deepEqual(levels, { black: 98, waste_toner: 10 });
    // The server's device list (its Devices page) shows the same.
    const list = await pm.api('GET', '/api/v1/devices/list');
    const listed = (Array.isArray(list.json) ? list.json : (list.json?.devices ?? [])).find((d: Json) => d.serial === serial) as Json | undefined;
    assert.deepEqual(listed?.toner_levels, { black: 98, waste_toner: 10 }, list.text.slice(0, 500));
    // The box keeps what the printer said, and shows no figure of its own for it.
    const latest = JSON.parse((await agent.get(`/api/devices/metrics/latest?serial=${serial}`)).body) as Json;
    assert.deepEqual(latest.toner_levels, { black: 98, waste_toner: -3 });
    const saved = (JSON.parse((await agent.get('/devices/list')).body) as { serial: string; printer_info: Json }[]).find((d) => d.serial === serial);
    assert.deepEqual(saved?.printer_info.toner_levels, { black: 98 }, 'PrinterInfo: measurements only');
  });

  test('a managed setting the box left as it was is in the server\'s log, as its Logs page lists it', async () => {
    const link = await until('the snapshot applied on the box', async () => {
      const l = await linkOf(agent);
      return (l.settings_unmapped as string[] | undefined)?.length ? l : undefined;
    }, 150_000);
    assert.ok((link.settings_unmapped as string[]).some((f) => f.startsWith('features.epson_remote_mode_enabled')), JSON.stringify(link));
    const line = await until('the report in the server\'s log', () =>
      pm.log().split('\n').find((l) => l.includes('Agent job failed') && l.includes('managed_settings')), 60_000);
    assert.match(line, /features\.epson_remote_mode_enabled/);
    // What the server's UI reads for its Logs page.
    const logs = await pm.api('GET', '/api/logs?search=managed_settings&limit=50');
    assert.equal(logs.status, 200, logs.text.slice(0, 300));
    assert.match(logs.text, /epson_remote_mode_enabled/);
  });
});
