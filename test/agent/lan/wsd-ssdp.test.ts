// Discovery on a private LAN of network namespaces (test/kit/printer-lan.ts): printers that
// announce themselves by WS-Discovery or answer SSDP, and nothing else. Each printer host runs
// CUPS's ippeveprinter announcing nothing by mDNS (-r off, its Avahi publishing nothing) and the WS-Discovery/SSDP
// test peer (test/kit/wsd-responder.ts: no Debian printer software speaks WS-Discovery).
// The box's agent has mDNS off: a printer listed here was found by WS-Discovery (or SSDP), read by
// IPP with identity, supplies and state, and listed once; a Bye marks it; a Hello whose XAddrs
// point outside the box's own subnet is not contacted; a flood of Hellos from one host is bounded per source.
// Prints the Hello -> listed latency (a figure, not a bound).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createPrinterLan, printerLanUnavailable, type PrinterHost, type PrinterLan } from '../../kit/printer-lan.js';
import { startAgentInBox, type BoxAgent } from '../../kit/lan.js';
import { discoveredListing, type Info } from '../../kit/discovered.js';
import { startResponder, type Responder } from '../../kit/wsd-responder.js';

const skip = printerLanUnavailable();
if (skip) console.log(`# WS-Discovery/SSDP LAN test skipped: ${skip}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BYE_LINE = 'offline: said goodbye on WS-Discovery';

/**
 * An observer in the box's namespace that asks the listing every 20 ms on one kept-alive
 * connection (a request from the test is a process of its own: hundreds of ms on a busy machine)
 * and says when `address` is first listed (Date.now(), the peer's clock: the same machine).
 */
function watchListed(ns: string, port: number, address: string): { ready: Promise<void>; listedAt: Promise<number> } {
  const script = String.raw`
    import https from 'node:https';
    const [port, address] = JSON.parse(process.argv[1]);
    const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
    const get = () => new Promise((resolve, reject) => https.get({ host: '127.0.0.1', port, path: '/devices/discovered?include_known=true', agent }, (res) => {
      let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => resolve(JSON.parse(b)));
    }).on('error', reject));
    let first = true;
    for (;;) {
      const list = await get();
      if (first) { console.log('ready'); first = false; }
      if (list.some((d) => d.ip === address)) { console.log('listed ' + Date.now()); agent.destroy(); process.exit(0); }
      await new Promise((r) => setTimeout(r, 20));
    }`;
  const p = spawn('ip', ['netns', 'exec', ns, process.execPath, '--input-type=module', '-e', script, JSON.stringify([port, address])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((r) => (onReady = r));
  const listedAt = new Promise<number>((resolve, reject) => {
    // Only a give-up: the wait follows the listing (the latency is a figure, printed, not a bound).
    const timer = setTimeout(() => (p.kill('SIGKILL'), reject(new Error(`${address} not listed within 60 s: ${out}`))), 60_000);
    p.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (/^ready$/m.test(out)) onReady();
      const m = /^listed (\d+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    p.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    p.once('exit', (code) => code && reject(new Error(`observer exited ${code}: ${out}`)));
  });
  return { ready, listedAt };
}

describe('WS-Discovery and SSDP discovery on a namespace LAN', { skip: skip ?? undefined, timeout: 180_000 }, () => {
  let lan: PrinterLan;
  let agent: BoxAgent;
  let wsdHost: PrinterHost;
  let probedHost: PrinterHost;
  let probed: Responder | undefined;
  let ssdpHost: PrinterHost;
  let wsd: Responder;
  let ssdp: Responder | undefined;
  const uuid = randomUUID();

  const post = async (body: unknown) => agent.request({ method: 'POST', path: '/settings', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const { discovered, until } = discoveredListing(() => agent, () => `\n--- peer ---\n${wsd?.out()}`);
  const logged = async (what: string, re: RegExp, ms = 20_000) => {
    const deadline = Date.now() + ms;
    while (!re.test(agent.stdout())) {
      assert.ok(Date.now() < deadline, `${what}: not logged within ${ms} ms:\n${agent.stdout().slice(-3000)}`);
      await sleep(100);
    }
  };

  before(async () => {
    lan = createPrinterLan();
    wsdHost = lan.addHost('wsd-printer');
    ssdpHost = lan.addHost('ssdp-printer');
    probedHost = lan.addHost('probed-printer');
    // WS-Discovery on by the config file (the appliance's agent.toml does the same); mDNS off.
    agent = await startAgentInBox(lan, { wsd: true });
    await Promise.all([
      lan.startPrinter(wsdHost, { make: 'Contoso', model: 'WSD 5', queue: 'WSD Printer', location: 'Room 2', announce: false }),
      lan.startPrinter(ssdpHost, { make: 'Fabrikam', model: 'Upnp 3', queue: 'SSDP Printer', announce: false }),
      lan.startPrinter(probedHost, { make: 'Northwind', model: 'Probe 7', queue: 'Quiet Printer', announce: false }),
    ]);
    // Started after the agent: the agent's first Probe went unanswered, only a Hello finds it.
    wsd = await startResponder(wsdHost, { uuid });
  });

  after(async () => {
    await wsd?.stop();
    await ssdp?.stop();
    await probed?.stop();
    await agent?.stop();
    lan?.destroy();
  });

  it('settings: wsd_enabled on from the config file, ssdp_enabled off; a bad value is refused', async () => {
    const s = JSON.parse((await agent.request('/settings')).body) as { discovery: Record<string, unknown> };
    assert.equal(s.discovery.wsd_enabled, true);
    assert.equal(s.discovery.ssdp_enabled, false);
    assert.equal(s.discovery.mdns_enabled, false);
    for (const key of ['wsd_enabled', 'ssdp_enabled']) {
      const bad = await post({ discovery: { [key]: 'yes' } });
      assert.equal(bad.status, 400);
      assert.match(bad.body, new RegExp(`discovery\\.${key} must be true or false`));
    }
    await logged('listening', /WS-Discovery: listening for printers/);
  });

  it('a printer found only by its WS-Discovery Hello is read by IPP and listed once, with identity, supplies and state', async () => {
    assert.equal((await discovered()).filter((d) => d.ip === wsdHost.address).length, 0, 'not listed before its Hello');
    const watch = watchListed(lan.boxNs, agent.config.httpsPort, wsdHost.address);
    await watch.ready;
    const sentAt = await wsd.hello();
    const listedAt = await watch.listedAt;
    const latency = listedAt - sentAt;
    console.log(`# figure: WS-Discovery Hello sent -> listed by GET /devices/discovered (IPP read, SNMP grace, stored): ${latency} ms`);
    const list = await discovered();
    const mine = list.filter((d) => d.ip === wsdHost.address);
    assert.equal(mine.length, 1, 'listed once');
    const d = mine[0];
    assert.match(d.serial, /^UUID-[0-9a-f-]{36}$/, 'no serial: keyed by printer-uuid');
    assert.equal(d.manufacturer, 'Contoso');
    assert.equal(d.model, 'WSD 5');
    assert.equal(d.location, 'Room 2');
    assert.equal(d.description, 'WSD Printer');
    assert.deepEqual(d.toner_levels, { black: 75, waste_toner: 25 });
    assert.deepEqual(d.status_messages ?? [], [], 'idle, state reasons "none"');
    assert.deepEqual(d.discovery_methods, ['ipp', 'wsd']);
    const reasons = d.detection_reasons as string[];
    assert.ok(reasons.includes(`wsd: Hello of urn:uuid:${uuid}, wprt:PrintDeviceType at http://${wsdHost.address}:3911/${uuid}`), JSON.stringify(reasons));
    assert.ok(reasons.some((r) => r.startsWith('ipp: ipp port 631')), JSON.stringify(reasons));
    assert.equal(d.advertised_services, undefined, 'nothing announced by mDNS');
    // Listed because of the Hello, not by a later search: not listed before it was sent, its reason
    // is the Hello, and the listener's next Probe is 15 minutes away (its first went unanswered).
    // How fast is the figure printed above, not a bound a loaded machine could miss.
  });

  it('turning wsd_enabled off stops the listening; on again, a Probe for wprt:PrintDeviceType finds a printer that sent no Hello by its ProbeMatch', async () => {
    // A printer that only answers Probes (it was there before the agent listened).
    const quiet = randomUUID();
    probed = await startResponder(probedHost, { uuid: quiet });
    assert.equal((await post({ discovery: { wsd_enabled: false } })).status, 200);
    await logged('stopped', /WS-Discovery: stopped listening/);
    assert.equal((await discovered()).filter((d) => d.ip === probedHost.address).length, 0, 'not listed before a Probe');
    assert.equal((await post({ discovery: { wsd_enabled: true } })).status, 200);
    const list = await until('the probed printer listed', (l) => l.some((d) => d.ip === probedHost.address));
    const mine = list.filter((d) => d.ip === probedHost.address);
    assert.equal(mine.length, 1);
    assert.equal(mine[0].manufacturer, 'Northwind');
    assert.deepEqual(mine[0].discovery_methods, ['ipp', 'wsd']);
    assert.ok((mine[0].detection_reasons as string[]).includes(`wsd: ProbeMatch of urn:uuid:${quiet}, wprt:PrintDeviceType at http://${probedHost.address}:3911/${quiet}`), JSON.stringify(mine[0].detection_reasons));
    assert.match(probed.out(), /^probe-answered 10\.77\.\d+\.1:\d+ types=wprt:PrintDeviceType$/m, 'the Probe asked for printers');
    // The Hello printer answered the same Probe: still listed once.
    assert.equal(list.filter((d) => d.ip === wsdHost.address).length, 1);
  });

  it('a Bye marks the record (kept), and a Hello lists it again', async () => {
    await wsd.bye();
    const list = await until('the Bye handled', (l) => (l.find((d) => d.ip === wsdHost.address)?.status_messages as string[] | undefined)?.[0] === BYE_LINE);
    assert.equal(list.filter((d) => d.ip === wsdHost.address).length, 1, 'kept, not deleted');
    await wsd.hello();
    const back = await until('said hello again', (l) => {
      const d = l.find((x) => x.ip === wsdHost.address);
      return Boolean(d) && !((d!.status_messages as string[] | undefined) ?? []).includes(BYE_LINE);
    });
    assert.equal(back.filter((d) => d.ip === wsdHost.address).length, 1);
  });

  it("a Hello whose XAddrs point outside the box's own subnet is not contacted", async () => {
    const stranger = randomUUID();
    await wsd.hello(`http://192.0.2.10:3911/${stranger}`, stranger);
    await logged('the refusal', /"ip":"192\.0\.2\.10".*"by":"wsd","why":"not on the box's own subnets nor in the configured ranges".*WS-Discovery: announced printer not contacted/);
    assert.ok(!/"ip":"192\.0\.2\.10"[^\n]*announced printer not read/.test(agent.stdout()), 'no read was tried');
    assert.equal((await discovered()).filter((d) => d.ip === '192.0.2.10').length, 0);
  });

  it('a flood of Hellos from one host for many addresses: bounded per source (rate and endpoints), each endpoint taken read once, the rest counted, none listed', async () => {
    const net = lan.boxAddress.replace(/\.1$/, '');
    type Wsd = { dropped: { rate_limited: number; over_caps: number }; limits: { endpoints_per_source: number } };
    const status = async () => (JSON.parse((await agent.request({ path: '/discover/status' })).body) as { wsd: Wsd | null }).wsd!;
    const dropped = (w: Wsd) => w.dropped.rate_limited + w.dropped.over_caps;
    const before = dropped(await status());
    // Addresses on the namespace LAN where nothing answers: each read waits for its timeout.
    const flood = Array.from({ length: 40 }, (_, i) => `${net}.${150 + i}`);
    for (const address of flood) {
      const u = randomUUID();
      await wsd.hello(`http://${address}:3911/${u}`, u);
    }
    const ends = () => agent.stdout().split('\n').filter((l) => /announced printer not read/.test(l) && flood.includes((JSON.parse(l) as { ip: string }).ip)).map((l) => (JSON.parse(l) as { ip: string }).ip);
    // Every Hello is either taken (read once) or counted as dropped.
    const deadline = Date.now() + 60_000;
    let w = await status();
    while (ends().length + dropped(w) - before < flood.length) {
      assert.ok(Date.now() < deadline, `${ends().length} reads ended, ${dropped(w) - before} dropped: ${JSON.stringify(w)}\n${agent.stdout().slice(-3000)}`);
      await sleep(200);
      w = await status();
    }
    const read = ends();
    assert.equal(new Set(read).size, read.length, 'each address read once');
    assert.ok(read.length > 0 && read.length <= w.limits.endpoints_per_source, `${read.length} endpoints of one host read, at most ${w.limits.endpoints_per_source}`);
    assert.ok(dropped(w) - before > 0, `the rest counted: ${JSON.stringify(w)}`);
    assert.equal((await discovered()).filter((d) => flood.includes(d.ip)).length, 0);
  });

  it('SSDP (off by default): turned on, its M-SEARCH for Printer:1 finds a printer by LOCATION, read by IPP, listed once', async () => {
    ssdp = await startResponder(ssdpHost, { uuid: randomUUID(), wsd: false, ssdpLocation: `http://${ssdpHost.address}:631/` });
    assert.equal((await discovered()).filter((d) => d.ip === ssdpHost.address).length, 0, 'not listed while SSDP is off');
    assert.equal((await post({ discovery: { ssdp_enabled: true } })).status, 200);
    const list = await until('the SSDP printer listed', (l) => l.some((d) => d.ip === ssdpHost.address));
    const mine = list.filter((d) => d.ip === ssdpHost.address);
    assert.equal(mine.length, 1);
    assert.equal(mine[0].manufacturer, 'Fabrikam');
    assert.equal(mine[0].model, 'Upnp 3');
    assert.deepEqual(mine[0].discovery_methods, ['ipp', 'ssdp']);
    assert.ok((mine[0].detection_reasons as string[]).includes(`ssdp: urn:schemas-upnp-org:device:Printer:1 at http://${ssdpHost.address}:631/`), JSON.stringify(mine[0].detection_reasons));
    assert.match(ssdp.out(), /^msearch-answered /m);
    assert.equal((await post({ discovery: { ssdp_enabled: false } })).status, 200);
    await logged('SSDP stopped', /SSDP: stopped searching/);
  });
});
