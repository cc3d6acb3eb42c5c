// Discovery by mDNS, reading by IPP, on a private LAN of network namespaces
// (test/kit/printer-lan.ts): the box's agent in its own namespace; CUPS's ippeveprinter announced
// by its own Avahi (no SNMP agent); a second host that answers SNMP (snmpsim, a Kyocera recording)
// and IPP (ippeveprinter) at once. Each is found by
// mDNS with identity, supplies and state, listed once; saved, the IPP-only one is polled by IPP;
// a goodbye marks it; turning discovery.mdns_enabled off stops the listening.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPrinterLan, printerLanUnavailable, type PrinterHost, type PrinterLan } from '../../kit/printer-lan.js';
import { startAgentInBox, type BoxAgent } from '../../kit/lan.js';
import { discoveredListing, type Info } from '../../kit/discovered.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const skip = printerLanUnavailable() ?? ensureSnmpsim();
if (skip) console.log(`# mDNS/IPP LAN test skipped: ${skip}`);

const SNMP_PORT = 1161;
const KYOCERA_SERIAL = 'VD21457943';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


describe('mDNS + IPP discovery on a namespace LAN', { skip: skip ?? undefined, timeout: 180_000 }, () => {
  let lan: PrinterLan;
  let agent: BoxAgent;
  let ippOnly: PrinterHost;
  let combo: PrinterHost;
  let sim: SnmpSim | undefined;

  const { discovered, until } = discoveredListing(() => agent);

  before(async () => {
    lan = createPrinterLan();
    ippOnly = lan.addHost('lab-printer');
    combo = lan.addHost('combo-printer');
    agent = await startAgentInBox(lan, { mdns: true });
    const set = await agent.request({ method: 'POST', path: '/settings', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ snmp: { port: SNMP_PORT } }) });
    assert.equal(set.status, 200, set.body);
    assert.equal((JSON.parse(set.body) as { discovery: { mdns_enabled: boolean } }).discovery.mdns_enabled, true, 'mDNS listening is on by default');
    sim = await startSnmpSim({ endpoints: [{ address: combo.address, recording: fixturePath('printmaster/kyocera_p2040.snmprec') }], port: SNMP_PORT, netns: combo.ns });
    await Promise.all([
      lan.startPrinter(ippOnly, { make: 'Acme', model: 'Laser 9', queue: 'Lab Printer', location: 'Room 1' }),
      lan.startPrinter(combo, { make: 'Kyocera', model: 'ECOSYS P2040dn', queue: 'Combo Printer' }),
    ]);
  });

  after(async () => {
    await agent?.stop();
    await sim?.stop();
    lan?.destroy();
  });

  it('lists the printer that only announces itself and answers IPP, with identity, supplies and state', async () => {
    const list = await until('the IPP-only printer listed', (l) => l.some((d) => d.ip === ippOnly.address));
    const mine = list.filter((d) => d.ip === ippOnly.address);
    assert.equal(mine.length, 1, 'listed once');
    const d = mine[0];
    assert.match(d.serial, /^UUID-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'no serial: keyed by printer-uuid');
    assert.equal(d.manufacturer, 'Acme');
    assert.equal(d.model, 'Laser 9');
    assert.equal(d.location, 'Room 1');
    assert.equal(d.description, 'Lab Printer');
    assert.equal(d.hostname, 'lab-printer');
    // ippeveprinter's supplies: a black toner at 75 % and a waste tank at 25 % (printer-supply).
    assert.deepEqual(d.toner_levels, { black: 75, waste_toner: 25 });
    assert.deepEqual(d.consumables, ['waste_toner', 'black']);
    assert.deepEqual(d.status_messages ?? [], [], 'idle, state reasons "none"');
    assert.equal(d.web_ui_url, `https://${ippOnly.address}:631/`);
    assert.deepEqual(d.discovery_methods, ['ipp', 'mdns']);
    assert.ok((d.advertised_services as string[]).includes('_ipp._tcp'), JSON.stringify(d.advertised_services));
    assert.ok((d.detection_reasons as string[]).some((r) => r.startsWith('ipp: ipp port 631')), JSON.stringify(d.detection_reasons));
    assert.deepEqual(d.open_ports, [631]);
  });

  it('lists a printer that answers SNMP and IPP once, under its SNMP serial, seen by both', async () => {
    const list = await until('the SNMP+IPP printer listed', (l) => l.some((d) => d.ip === combo.address && (d.discovery_methods as string[] | undefined)?.includes('ipp')));
    const mine = list.filter((d) => d.ip === combo.address);
    assert.equal(mine.length, 1, JSON.stringify(mine.map((d) => d.serial)));
    assert.equal(mine[0].serial, KYOCERA_SERIAL);
    assert.deepEqual(mine[0].discovery_methods, ['ipp', 'mdns', 'snmp']);
    assert.equal(mine[0].page_count, 7432, 'the SNMP counters win');
    // A subnet scan (SNMP) finds the same printer: still one record.
    const on = await agent.request({ method: 'POST', path: '/settings', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ discovery: { subnet_scan: true } }) });
    assert.equal(on.status, 200, on.body);
    const scan = await agent.request({ method: 'POST', path: '/discover' });
    assert.equal(scan.status, 202, scan.body);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const st = JSON.parse((await agent.request('/discover')).body) as { state: string } | null;
      if (st && st.state !== 'running') break;
      assert.ok(Date.now() < deadline, 'scan did not end');
      await sleep(200);
    }
    const after = (await discovered()).filter((d) => d.ip === combo.address);
    assert.equal(after.length, 1);
    assert.equal(after[0].serial, KYOCERA_SERIAL);
    assert.ok((after[0].discovery_methods as string[]).includes('subnet_scan'));
  });

  it('polls a saved IPP-only printer by IPP (POST /devices/metrics/collect)', async () => {
    const d = (await discovered()).find((x) => x.ip === ippOnly.address)!;
    const save = await agent.request({ method: 'POST', path: '/devices/save', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ serial: d.serial }) });
    assert.equal(save.status, 200, save.body);
    const r = await agent.request({ method: 'POST', path: '/devices/metrics/collect', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ serial: d.serial }) });
    assert.equal(r.status, 200, r.body);
    const snap = JSON.parse(r.body) as { serial: string; toner_levels?: Record<string, number> };
    assert.equal(snap.serial, d.serial);
    assert.deepEqual(snap.toner_levels, { black: 75, waste_toner: 25 });
  });

  it('marks the printer when it says goodbye, and lists it again when it comes back', async () => {
    await lan.stopPrinter(ippOnly);
    const list = await until('the goodbye handled', (l) => (l.find((d) => d.ip === ippOnly.address)?.status_messages as string[] | undefined)?.[0] === 'offline: said goodbye on mDNS');
    assert.equal(list.filter((d) => d.ip === ippOnly.address).length, 1, 'kept, not deleted');
    await lan.startPrinter(ippOnly, { make: 'Acme', model: 'Laser 9', queue: 'Lab Printer', location: 'Room 1' });
    const back = await until('announced again', (l) => {
      const d = l.find((x) => x.ip === ippOnly.address);
      return Boolean(d) && !((d!.status_messages as string[] | undefined) ?? []).includes('offline: said goodbye on mDNS');
    });
    assert.equal(back.filter((d) => d.ip === ippOnly.address).length, 1);
  });

  it('an IPP answer that claims a known printer at another address with another MAC moves nothing and stores nothing: a pending move a person confirms', async () => {
    const d = (await discovered()).find((x) => x.ip === ippOnly.address)!;
    const profile = async () => {
      const r = await agent.request({ path: `/api/devices/profile?serial=${encodeURIComponent(d.serial)}`, maxBody: 1 << 20 });
      assert.equal(r.status, 200, r.body);
      return JSON.parse(r.body) as { device: { ip: string; raw_data?: { pending_move?: { ip: string; snmp: string } } } };
    };
    // The record says the printer lives elsewhere on the LAN, with another MAC (as a saved printer
    // would, before a responder at this address starts claiming its identity). With the printer's
    // own MAC here and the old address silent it would be the printer renumbered, and followed
    // (site-lan.test.ts); another MAC is a claimant.
    const elsewhere = combo.address.replace(/\.\d+$/, '.99');
    const otherMac = '02:00:5e:00:00:99';
    const db = new Database(join(agent.config.dataDir, 'printbox.db'));
    try {
      db.pragma('busy_timeout = 5000');
      db.prepare("UPDATE devices SET ip = ?, mac_address = ?, raw_data = json_set(coalesce(raw_data, '{}'), '$.neighbour_mac', ?) WHERE serial = ?").run(elsewhere, otherMac, otherMac, d.serial);
    } finally {
      db.close();
    }
    const readings = () => {
      const ro = new Database(join(agent.config.dataDir, 'printbox.db'), { readonly: true });
      try {
        return (ro.prepare('SELECT count(*) AS n FROM metrics_raw WHERE serial = ?').get(d.serial) as { n: number }).n;
      } finally {
        ro.close();
      }
    };
    const before = readings();
    // Nothing changed on the network, so nothing is announced anew (a re-announcement that changes
    // nothing is not a read): a scan reads the address (631 open, no SNMP answer) and its IPP answer
    // claims the record.
    const scan = await agent.request({ method: 'POST', path: '/discover' });
    assert.equal(scan.status, 202, scan.body);
    const deadline = Date.now() + 60_000;
    let p = await profile();
    while (!p.device.raw_data?.pending_move) {
      assert.ok(Date.now() < deadline, `no pending move:\n${agent.stdout().slice(-3000)}`);
      await sleep(200);
      p = await profile();
    }
    assert.equal(p.device.ip, elsewhere, 'the record did not move');
    assert.equal(p.device.raw_data!.pending_move!.ip, ippOnly.address);
    assert.equal(p.device.raw_data!.pending_move!.snmp, 'ipp', 'the claim came by IPP');
    assert.match(JSON.stringify(p.device.raw_data!.pending_move), /"neighbour_mac":"differs"/, 'told apart by the MAC the box sees');
    assert.equal(readings(), before, 'no reading of the claimant stored');
    const confirm = await agent.request({ method: 'POST', path: '/devices/confirm-move', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ serial: d.serial, ip: ippOnly.address }) });
    assert.equal(confirm.status, 200, confirm.body);
    assert.equal((await profile()).device.ip, ippOnly.address, 'a person moved it');
  });

  it('an announced printer outside discovery.allowed_ranges is not contacted', async () => {
    const fence = await agent.request({ method: 'POST', path: '/settings', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ discovery: { allowed_ranges: [`${combo.address}/32`] } }) });
    assert.equal(fence.status, 200, fence.body);
    await lan.stopPrinter(ippOnly);
    await until('the goodbye handled', (l) => (l.find((d) => d.ip === ippOnly.address)?.status_messages as string[] | undefined)?.[0] === 'offline: said goodbye on mDNS');
    await lan.startPrinter(ippOnly, { make: 'Acme', model: 'Laser 9', queue: 'Lab Printer', location: 'Room 1' });
    const deadline = Date.now() + 20_000;
    while (!agent.stdout().includes(`"ip":"${ippOnly.address}"`) || !/announced printer not contacted/.test(agent.stdout())) {
      assert.ok(Date.now() < deadline, `no refusal logged:\n${agent.stdout().slice(-3000)}`);
      await sleep(100);
    }
    assert.match(agent.stdout(), /"why":"outside discovery.allowed_ranges".*announced printer not contacted/);
    const d = (await discovered()).find((x) => x.ip === ippOnly.address)!;
    assert.equal((d.status_messages as string[])[0], 'offline: said goodbye on mDNS', 'not read again');
    const open = await agent.request({ method: 'POST', path: '/settings', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ discovery: { allowed_ranges: [] } }) });
    assert.equal(open.status, 200, open.body);
  });

  it('discovery.mdns_enabled off stops the listening (and a bad value is refused)', async () => {
    const bad = await agent.request({ method: 'POST', path: '/settings', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ discovery: { mdns_enabled: 'no' } }) });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /discovery\.mdns_enabled must be true or false/);
    const off = await agent.request({ method: 'POST', path: '/settings', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ discovery: { mdns_enabled: false } }) });
    assert.equal(off.status, 200, off.body);
    const deadline = Date.now() + 10_000;
    while (!agent.stdout().includes('mDNS: stopped listening')) {
      assert.ok(Date.now() < deadline, 'listener not stopped');
      await sleep(100);
    }
  });
});
