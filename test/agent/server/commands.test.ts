// The server's commands and device edits, sent through PrintMaster's own server exactly as its UI
// sends them (server/web/app.js, common/web/cards.js), each with the answer that server shows: its
// API's answer, its UI's event stream (/api/events: update_progress for the progress button and the
// "Update failed" toast), its Logs page (/api/logs) and its database (the agent's status, the
// devices the box uploads).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ClientRequest } from 'node:http';
import { startAgent, stopAll, type Agent } from '../../kit/agent.js';
import { openEventStream } from '../../kit/events.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { findAndSave, linkOf, protocolComplaints, until, type Json } from '../../kit/pm-checks.js';

const why = printmasterUnavailable() ?? ensureSnmpsim();

const PRINTER = { address: '127.0.8.1', file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' };

describe('PrintMaster server: commands and device edits', { skip: why ?? false }, () => {
  let pm: PmServer;
  let sim: SnmpSim;
  let agent: Agent;
  let agentId = '';
  let stream: ClientRequest | undefined;
  let listening = true;
  /** What the server's UI hears on its event stream, in order. */
  const heard: { name: string; data: Json }[] = [];
  // The server ends every response after 60 s (its WriteTimeout), event streams included; the
  // UI's EventSource opens it again, and so does this.
  const listen = () => {
    stream = openEventStream(pm.port, (name, data) => heard.push({ name, data }), { path: '/api/events', headers: { cookie: pm.cookie } });
    stream.on('close', () => listening && setTimeout(listen, 50));
  };
  const heardSince = (n: number, name: string, pred: (d: Json) => boolean = () => true) =>
    until(`${name} on the server's event stream`, () => heard.slice(n).find((e) => e.name === name && e.data.agent_id === agentId && pred(e.data))?.data);
  const command = (body: Json) => pm.api('POST', `/api/v1/agents/command/${encodeURIComponent(agentId)}`, body);
  const serverLogs = async (search: string) => {
    const r = await pm.api('GET', `/api/logs?limit=500&search=${encodeURIComponent(search)}`);
    assert.equal(r.status, 200, r.text);
    return (r.json as { logs: string[] }).logs;
  };
  const boxDevice = async () => JSON.parse((await agent.get(`/api/devices/profile?serial=${PRINTER.serial}`)).body).device as Json;
  const serverDevice = () => pm.query<Json>('SELECT manufacturer, model, hostname, firmware, ip, location, raw_data FROM devices WHERE serial = ?', PRINTER.serial)[0];
  const serverRaw = () => JSON.parse(String(serverDevice()?.raw_data ?? '{}')) as Json;

  before(async () => {
    [pm, sim] = await Promise.all([startPrintmaster(), startSnmpSim({ endpoints: [{ address: PRINTER.address, recording: fixturePath(PRINTER.file) }] })]);
    agent = await startAgent({ serverUrl: pm.url, server: { enrollment_token: pm.token, ca_file: pm.caFile, upload_interval_ms: 0 } });
    await findAndSave(agent, sim.port, PRINTER.address, PRINTER.serial);
    agentId = String((await linkOf(agent)).agent_id);
    listen();
    await until('the server\'s event stream', () => heard.some((e) => e.name === 'connected'));
    await until('the channel up', async () => (await linkOf(agent)).channel_connected === true);
    await until('the printer on the server', () => serverDevice());
  });
  after(async () => {
    listening = false;
    stream?.destroy();
    await stopAll();
    await Promise.all([pm?.kill(), sim?.stop()]);
  });

  test('Check for Update: "sent", then the progress button\'s "failed" with the reason (no RAUC here)', async () => {
    const n = heard.length;
    // The agent details' "Check for Update" and the list's "Update Agent" send exactly this.
    const r = await command({ command: 'check_update' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { success: true, message: "Command 'check_update' sent to agent" });
    const failed = await heardSince(n, 'update_progress');
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    assert.match(String(failed.error), /^updates need RAUC \(\/etc\/rauc\/system\.conf is missing/, 'the toast reads "Update failed - <error>"');
    assert.equal(failed.progress, -1);
    assert.ok((await serverLogs('Agent update failed')).some((l) => l.includes('updates need RAUC')), 'logged as an error on the server\'s Logs page');
  });

  test('Force Reinstall and Cancel: each answered with a failed update_progress naming why', async () => {
    let n = heard.length;
    const force = await command({ command: 'force_update', data: { reason: 'server_ui_force_reinstall' } });
    assert.equal(force.status, 200, force.text);
    assert.match(String((await heardSince(n, 'update_progress', (d) => d.status === 'failed')).error), /^updates need RAUC/);
    n = heard.length;
    const cancel = await command({ command: 'cancel_update' });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal((await heardSince(n, 'update_progress', (d) => d.status === 'failed')).error, 'Cannot cancel: no update is in progress');
  });

  test('a command the box does not know is answered: a failed job on the server\'s Logs page', async () => {
    const r = await command({ command: 'reboot_the_moon' });
    assert.equal(r.status, 200, r.text);
    const lines = await until('the failed job in the server\'s logs', async () => {
      const l = await serverLogs('reboot_the_moon');
      return l.some((x) => x.includes('Agent job failed')) ? l : undefined;
    });
    assert.ok(lines.some((l) => /unknown command \\?"reboot_the_moon\\?": this box handles check_update, force_update, cancel_update, restart/.test(l)), lines.join('\n'));
  });

  test('"Apply All" after "Scan for Updates", as the server\'s UI sends it: 200, not 400 unknown field', async () => {
    // The server's "Scan for Updates": /devices/preview through the server; "Apply All" then posts
    // every proposed field that differs from the server's own record (cards.js), which holds no
    // subnet mask, gateway or DNS servers (its devices batch keeps none).
    const preview = await pm.api('POST', '/devices/preview', { serial: PRINTER.serial, ip: PRINTER.address });
    assert.equal(preview.status, 200, preview.text);
    const proposed = preview.json.proposed as Json;
    const list = await pm.api('GET', '/api/v1/devices/list');
    const p = (list.json as Json[]).find((d) => d.serial === PRINTER.serial)!;
    const text = (f: string, v: unknown) => (f === 'dns_servers' ? ((v as string[] | undefined) ?? []).join(', ') : String(v ?? ''));
    const payload: Json = { serial: PRINTER.serial };
    for (const [f, v] of Object.entries(proposed)) if (text(f, p[f]) !== text(f, v) && text(f, v) !== '') payload[f] = text(f, v);
    assert.ok('subnet_mask' in payload, `the case the issue saw: ${JSON.stringify(payload)}`);
    const r = await pm.api('POST', '/devices/update', payload);
    assert.equal(r.status, 200, r.text);
    const d = await boxDevice();
    assert.equal(d.ip, PRINTER.address);
    assert.ok(!(d.locked_fields as Json[] | undefined)?.some((l) => ['subnet_mask', 'firmware', 'ip'].includes(String(l.field))), 'ignored fields are not locked');
  });

  test('every device edit the server\'s UI offers, one field at a time: answered 200, applied or ignored', async () => {
    // cards.js renderEditableRow: each pencil posts {serial, [field]: value} to the server's /devices/update.
    const edits: [string, string][] = [
      ['manufacturer', 'Kyocera Document Solutions'], ['model', 'Front desk P2040'], ['firmware', '9.9.9'], ['asset_number', 'A-0042'],
      ['location', 'Room 7'], ['description', 'by the stairs'], ['web_ui_url', `https://${PRINTER.address}/`], ['ip', '127.0.8.99'],
      ['mac_address', '00:11:22:33:44:55'], ['hostname', 'frontdesk'], ['subnet_mask', '255.255.0.0'],
    ];
    for (const [field, value] of edits) {
      const r = await pm.api('POST', '/devices/update', { serial: PRINTER.serial, [field]: value });
      assert.equal(r.status, 200, `${field}: ${r.text}`);
    }
    const d = await boxDevice();
    for (const f of ['manufacturer', 'model', 'asset_number', 'location', 'description', 'web_ui_url', 'hostname']) {
      assert.equal(d[f], edits.find(([k]) => k === f)![1], `${f} applied on the box`);
    }
    assert.equal(d.ip, PRINTER.address, 'the address the box polls stays');
    assert.notEqual(d.firmware, '9.9.9', 'firmware stays what the printer says');
    assert.notEqual(d.subnet_mask, '255.255.0.0');
    const locked = (d.locked_fields as Json[]).map((l) => l.field).sort();
    assert.deepEqual(locked, ['asset_number', 'description', 'hostname', 'location', 'manufacturer', 'model', 'web_ui_url']);
  });

  test('the next upload carries the edits: the server keeps the overrides as its own fields, the rest in raw_data', async () => {
    const row = await until('the edited device on the server', () => {
      const raw = serverRaw();
      return raw.location === 'Room 7' && serverDevice().hostname === 'frontdesk' ? serverDevice() : undefined;
    });
    assert.equal(row.manufacturer, 'Kyocera Document Solutions');
    assert.equal(row.model, 'Front desk P2040');
    const raw = serverRaw();
    assert.equal(raw.asset_number, 'A-0042');
    assert.equal(raw.description, 'by the stairs');
    assert.equal(raw.web_ui_url, `https://${PRINTER.address}/`);
    // The reference server's devices batch writes no location, asset number, description or web UI
    // URL column (handleDevicesBatch sets none; its upsert updates none), so its UI shows "Not set"
    // whatever an agent sends: the box can only carry them (raw_data above).
    assert.equal(row.location, '', 'if the server starts keeping location, say so in docs/architecture.md');
  });

  test('a poll after the edits keeps the technician\'s manufacturer, model and host name, on the box and on the server', async () => {
    const before = (await boxDevice()).last_seen;
    assert.equal((await command({ command: 'collect', data: { serial: PRINTER.serial } })).status, 200);
    const d = await until('a new poll', async () => {
      const now = await boxDevice();
      return now.last_seen !== before ? now : undefined;
    }, 60_000);
    assert.equal(d.manufacturer, 'Kyocera Document Solutions');
    assert.equal(d.model, 'Front desk P2040');
    assert.equal(d.hostname, 'frontdesk');
    await until('the backlog sent', async () => (await linkOf(agent)).backlog === 0);
    const row = serverDevice();
    assert.equal(row.model, 'Front desk P2040');
    assert.equal(row.hostname, 'frontdesk');
  });

  test('nothing the box answered made the server complain', () => {
    assert.deepEqual(protocolComplaints(pm.log()), []);
  });

  // Last: the box goes away and comes back.
  test('Restart: "sent", the agent\'s status "restarting", a clean exit, and the box back on the channel', async () => {
    const n = heard.length;
    const r = await command({ command: 'restart' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { success: true, message: "Command 'restart' sent to agent" }, 'the UI then says "Agent will reconnect shortly"');
    await until('the agent\'s status "restarting" on the server', () => pm.query<Json>('SELECT status FROM agents WHERE agent_id = ?', agentId)[0]?.status === 'restarting');
    await until('the box\'s process to end', () => !agent.alive(), 30_000);
    assert.equal(agent.proc.exitCode, 0, 'a clean exit: the unit\'s Restart=always starts it again');
    assert.match(agent.stdout(), /"cause":"the central server asked for a restart".*"msg":"shutting down"/);
    assert.match(agent.stdout(), /"msg":"stopped"/);
    await heardSince(n, 'agent_disconnected');
    // systemd's part: start it again.
    await agent.restart();
    await heardSince(n, 'agent_connected');
    await until('the channel up again', async () => (await linkOf(agent)).channel_connected === true);
    const list = await pm.api('GET', '/api/v1/agents/list');
    const listed = (list.json as Json[]).find((a) => a.agent_id === agentId)!;
    assert.equal(listed.connection_type, 'ws', 'the UI shows it active');
    await until('the agent\'s status "active" again', () => pm.query<Json>('SELECT status FROM agents WHERE agent_id = ?', agentId)[0]?.status === 'active');
  });
});
