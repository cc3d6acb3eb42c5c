// A site LAN of network namespaces (test/kit/site-lan.ts) with real software nobody here wrote,
// against the real agent in the box's namespace (mDNS, WS-Discovery and a subnet scan with port
// probes over the LAN's /24, SNMP on 161). On the LAN: a Linux server answering SNMP (Net-SNMP
// snmpd), a Windows-style computer announcing itself by WS-Discovery (wsdd), a workstation publishing
// _workstation/_ssh/_smb by Avahi, a host with only an HTTP server on port 80, two printers
// (ippeveprinter, announced by their own Avahi) and a CUPS server sharing a queue for one of them.
// - Only the two printers are listed, once each; the others are not, and the scan says why the
//   Linux server is not a printer.
// - The CUPS queue is a print queue of the scan status, not a device.
// - A printer whose address changes while it runs is followed; one that loses power and comes back
//   at another address is followed too, with no person confirming anything.
// - On a LAN whose box has no default route, a printer that announced before the agent started is
//   found by the agent's start-up query.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentInBox, type BoxAgent } from '../../kit/lan.js';
import { discoveredListing, type Info } from '../../kit/discovered.js';
import { createSiteLan, siteLanUnavailable, type CupsQueue, type SiteLan } from '../../kit/site-lan.js';
import type { PrinterHost } from '../../kit/printer-lan.js';

const skip = siteLanUnavailable();
if (skip) console.log(`# site LAN test skipped: ${skip}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const json = { 'Content-Type': 'application/json' };
const QUEUE = 'Office';

interface ScanStatus {
  scan_id: number;
  state: string;
  not_printers?: number;
}
/** GET /discover/status. */
interface Overview {
  scan: ScanStatus | null;
  not_printer_hosts: { ip: string; why: string }[];
  print_queues: { server: string; queue: string; printer_serial?: string }[];
  mdns: { interfaces: { name: string; address: string; error?: string }[] } | null;
}
interface Profile {
  device: { serial: string; ip: string; raw_data?: { pending_move?: unknown } };
}

function agentApi(agent: () => BoxAgent) {
  const post = async (path: string, body: unknown) => agent().request({ method: 'POST', path, headers: json, body: JSON.stringify(body) });
  const status = async (): Promise<ScanStatus> => {
    const r = await agent().request({ path: '/discover', maxBody: 1 << 20 });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as ScanStatus;
  };
  const overview = async (): Promise<Overview> => {
    const r = await agent().request({ path: '/discover/status', maxBody: 1 << 20 });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as Overview;
  };
  /** Starts a scan and polls its state to its end (a generous guard, not a timing). */
  const scanToEnd = async (): Promise<ScanStatus> => {
    const start = await agent().request({ method: 'POST', path: '/discover' });
    assert.equal(start.status, 202, start.body);
    const id = (JSON.parse(start.body) as { scan_id: number }).scan_id;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const st = await status();
      if (st && st.scan_id === id && st.state !== 'running') return st;
      assert.ok(Date.now() < deadline, `scan did not end:\n${agent().stdout().slice(-3000)}`);
      await sleep(250);
    }
  };
  const profile = async (serial: string): Promise<Profile> => {
    const r = await agent().request({ path: `/api/devices/profile?serial=${encodeURIComponent(serial)}`, maxBody: 1 << 20 });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as Profile;
  };
  /** Polls the profile until `ok`; the guard's error shows the last profile and the agent's log. */
  const profileUntil = async (what: string, serial: string, ok: (p: Profile) => boolean, ms = 60_000): Promise<Profile> => {
    const deadline = Date.now() + ms;
    let p = await profile(serial);
    while (!ok(p)) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms; profile: ${JSON.stringify(p.device).slice(0, 1500)}\n--- agent log ---\n${agent().stdout().slice(-4000)}`);
      await sleep(250);
      p = await profile(serial);
    }
    return p;
  };
  return { post, status, overview, scanToEnd, profile, profileUntil };
}

const serialsAt = (list: Info[], serial: string) => list.filter((d) => d.serial === serial);
/** Agent log lines that name both addresses (a move from one to the other, whatever its wording). */
const linesNaming = (log: string, a: string, b: string) => log.split('\n').filter((l) => new RegExp(`\\b${a.replace(/\./g, '\\.')}\\b`).test(l) && new RegExp(`\\b${b.replace(/\./g, '\\.')}\\b`).test(l));

describe('a site LAN: only printers listed, renumbered printers followed, print queues told apart', { skip: skip ?? undefined, timeout: 240_000 }, () => {
  let lan: SiteLan;
  let agent: BoxAgent;
  let server: PrinterHost;
  let windows: PrinterHost;
  let workstation: PrinterHost;
  let web: PrinterHost;
  let printerA: PrinterHost;
  let printerB: PrinterHost;
  let cups: PrinterHost;
  let queue: CupsQueue;
  let serialA: string;
  let serialB: string;

  const api = agentApi(() => agent);
  const context = () => `\n--- hosts ---\n${lan.hosts.map((h) => `${h.name} ${h.address}: ${h.log.out.slice(-600)}`).join('\n')}`;
  const { discovered, until } = discoveredListing(() => agent, context);

  before(async () => {
    lan = createSiteLan({ defaultRoute: true });
    server = lan.addHost('fileserver');
    windows = lan.addHost('desktop-7');
    workstation = lan.addHost('dev-laptop');
    web = lan.addHost('nas');
    printerA = lan.addHost('office-printer');
    printerB = lan.addHost('hall-printer');
    cups = lan.addHost('print-server');
    await Promise.all([
      lan.startPrinter(printerA, { make: 'Acme', model: 'Laser 9', queue: 'Office Printer', location: 'Office' }),
      lan.startPrinter(printerB, { make: 'Acme', model: 'Jet 3', queue: 'Hall Printer', location: 'Hall' }),
      lan.startSnmpd(server),
      lan.startWsdd(windows),
      lan.startAvahiServices(workstation, ['_workstation._tcp', '_ssh._tcp', '_smb._tcp']),
      lan.startHttpOnly(web),
    ]);
    queue = await lan.startCupsServer(cups, { queue: QUEUE, deviceUri: `ipp://${printerA.address}:631/ipp/print` });
    serialA = `UUID-${lan.printerUuid(printerA)}`;
    serialB = `UUID-${lan.printerUuid(printerB)}`;
    agent = await startAgentInBox(lan, { mdns: true, wsd: true });
    const set = await api.post('/settings', { snmp: { port: 161 }, discovery: { subnet_scan: true, port_probes_enabled: true, snmp_timeout_ms: 1000 } });
    assert.equal(set.status, 200, set.body);
  });

  after(async () => {
    await agent?.stop();
    lan?.destroy();
  });

  it('the LAN is what it claims: the CUPS queue is announced as _ipp._tcp with rp=printers/<queue> and its own UUID, beside the printers', async () => {
    // One query's answers may come in several packets, some after the window, and a service's TXT
    // may be heard empty while its daemon is still filling it in: asked again until all three are
    // heard with their TXT.
    let records = await lan.browse('_ipp._tcp.local');
    const txt = (name: string) =>
      records.filter((r) => r.type === 'TXT' && r.name.startsWith(name)).map((r) => r.data as string[]).find((d) => Array.isArray(d) && d.some((t) => String(t).startsWith('rp=')));
    for (let i = 0; i < 10 && !['Office Printer', 'Hall Printer', `${QUEUE} @ ${cups.name}`].every((n) => txt(n)); i++) records = [...records, ...(await lan.browse('_ipp._tcp.local'))];
    const cupsTxt = txt(`${QUEUE} @ ${cups.name}`);
    assert.ok(cupsTxt, `no CUPS announcement: ${JSON.stringify(records)}`);
    assert.ok(cupsTxt.includes(`rp=printers/${QUEUE}`), JSON.stringify(cupsTxt));
    assert.ok(cupsTxt.some((t) => /^printer-type=0x[0-9A-F]+$/i.test(t)), JSON.stringify(cupsTxt));
    assert.ok(txt('Office Printer')?.includes('rp=ipp/print'));
    assert.ok(txt('Hall Printer')?.includes('rp=ipp/print'));
    const q = lan.ippAttributes(cups, `/printers/${QUEUE}`);
    assert.equal(q['device-uri'], `ipp://${printerA.address}:631/ipp/print`, 'CUPS shows the queue its device to a remote client');
    assert.notEqual(q['printer-uuid'], `urn:uuid:${serialA.slice(5)}`, "the queue's UUID is its own");
    assert.ok(['everywhere', 'raw'].includes(queue.model));
  });

  it('after a scan and the announcements, lists exactly the two printers, once each; no server, computer, workstation, web host or CUPS server', async () => {
    await api.scanToEnd();
    const list = await until('both printers listed', (l) => l.some((d) => d.serial === serialA) && l.some((d) => d.serial === serialB));
    assert.equal(serialsAt(list, serialA).length, 1, 'printer A once');
    assert.equal(serialsAt(list, serialB).length, 1, 'printer B once');
    // Every host that is not a printer, at once: the failure names them all.
    const others = [server, windows, workstation, web, cups];
    const listedOthers = list.flatMap((d) => others.filter((h) => h.address === d.ip).map((h) => `${h.name} ${h.address} as ${d.serial}`));
    assert.deepEqual(listedOthers, [], 'no server, computer, workstation, web host or CUPS server');
    assert.deepEqual(list.map((d) => d.serial).sort(), [serialA, serialB].sort(), JSON.stringify(list.map((d) => [d.serial, d.ip])));
  });

  it('the scan status counts the Linux server among the hosts that are not printers, and says why', async () => {
    const st = await api.status();
    assert.ok((st.not_printers ?? 0) >= 1, JSON.stringify(st));
    const o = await api.overview();
    assert.equal(o.scan?.not_printers, st.not_printers);
    const mine = o.not_printer_hosts.find((h) => h.ip === server.address);
    assert.ok(mine, `the snmpd host in not_printer_hosts: ${JSON.stringify(o)}`);
    assert.match(mine.why, /no Printer-MIB/, 'why: it answers SNMP but shows nothing of a printer');
    const web80 = o.not_printer_hosts.find((h) => h.ip === web.address);
    assert.ok(web80, `the port-80 host in not_printer_hosts: ${JSON.stringify(o)}`);
    assert.match(web80.why, /tcp 80 open/);
  });

  it('the CUPS queue is a print queue of the scan status, matched to its printer, and no device record', async () => {
    // The announcement lists the queue at once; its device-uri comes from the IPP read of the
    // queue that follows, which a loaded machine may finish later: waited for, within a minute.
    const deadline = Date.now() + 60_000;
    let o = await api.overview();
    const queueOf = (ov: Overview) => ov.print_queues.find((p) => p.server === cups.address && p.queue === QUEUE);
    while (!queueOf(o)?.printer_serial && Date.now() < deadline) {
      await sleep(250);
      o = await api.overview();
    }
    const q = queueOf(o);
    assert.ok(q, `print_queues: ${JSON.stringify(o.print_queues)}`);
    assert.equal(q.printer_serial, serialA, `the queue's device-uri names printer A's address: ${JSON.stringify(q)}`);
    const list = await discovered();
    assert.equal(list.filter((d) => d.ip === cups.address).length, 0);
    const queueUuid = lan.ippAttributes(cups, `/printers/${QUEUE}`)['printer-uuid'].replace(/^urn:uuid:/, '');
    assert.equal(list.filter((d) => d.serial === `UUID-${queueUuid}`).length, 0, 'the queue is not a device under its own UUID');
  });

  it('a saved printer whose address changes while it runs is followed: one record at the new address, no pending move, the move logged', async () => {
    const save = await api.post('/devices/save', { serial: serialA });
    assert.equal(save.status, 200, save.body);
    const from = printerA.address;
    lan.renumber(printerA, 101);
    const to = printerA.address;
    assert.notEqual(from, to);
    const p = await api.profileUntil('the record follows the new address', serialA, (x) => x.device.ip === to, 45_000);
    assert.equal(p.device.raw_data?.pending_move, undefined, 'no person needed');
    assert.equal(serialsAt(await discovered(), serialA).length, 1, 'one record');
    assert.ok(linesNaming(agent.stdout(), from, to).length >= 1, `no log line names ${from} and ${to}:\n${agent.stdout().slice(-3000)}`);
  });

  it('a saved printer that loses power and comes back at a new address is followed after the next scan or announcement', async () => {
    const save = await api.post('/devices/save', { serial: serialB });
    assert.equal(save.status, 200, save.body);
    await lan.powerCycle(printerB, { newLastOctet: 102 });
    assert.equal(`UUID-${lan.printerUuid(printerB)}`, serialB, 'the same printer: the same printer-uuid after the power cut');
    const to = printerB.address;
    await api.scanToEnd();
    const p = await api.profileUntil('the record follows the power-cycled printer', serialB, (x) => x.device.ip === to, 45_000);
    assert.equal(p.device.raw_data?.pending_move, undefined, 'no person needed');
    assert.equal(serialsAt(await discovered(), serialB).length, 1, 'one record');
  });
});

describe('a LAN whose box has no default route: a printer announced before the agent started is found', { skip: skip ?? undefined, timeout: 120_000 }, () => {
  let lan: SiteLan;
  let agent: BoxAgent;
  let printer: PrinterHost;
  const { until } = discoveredListing(() => agent, () => `\n--- printer ---\n${printer?.log.out.slice(-1000)}`);

  before(async () => {
    lan = createSiteLan({ defaultRoute: false });
    printer = lan.addHost('early-printer');
    const watch = await lan.watchMdns();
    try {
      await lan.startPrinter(printer, { make: 'Acme', model: 'Early 1', queue: 'Early Printer' });
      // Avahi's three announcements heard (nothing on this LAN asks): the printer announces nothing more
      // until asked, so only the agent's start-up query can find it.
      await watch.until('Early Printer._ipp._tcp.local', 3);
    } finally {
      watch.stop();
    }
    agent = await startAgentInBox(lan, { mdns: true });
  });

  after(async () => {
    await agent?.stop();
    lan?.destroy();
  });

  it('the start-up mDNS query reaches it: listed, once', async () => {
    const serial = `UUID-${lan.printerUuid(printer)}`;
    const list = await until('the early printer listed', (l) => l.some((d) => d.serial === serial), 45_000);
    assert.equal(serialsAt(list, serial).length, 1);
    assert.equal(serialsAt(list, serial)[0].ip, printer.address);
  });
});
