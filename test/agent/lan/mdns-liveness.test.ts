// The box's mDNS browser (src/discovery/mdns.ts) on a namespace LAN (test/kit/printer-lan.ts)
// whose box has no default route, run alone in the box's namespace (kit/mdns-browser.ts):
// - printers that announced themselves BEFORE the browser started (a real Avahi + ippeveprinter,
//   and a responder that announces only once) are found by its start-up queries, which leave the
//   box's interface although no route says where multicast goes;
// - records with a short TTL (20 s) are kept alive over several TTLs, both by a responder that
//   re-announces every 5 s and by one that only answers the browser's re-queries (as Avahi does
//   with its 120 s SRV/A records): each reported once, never gone;
// - the answering one killed with SIGKILL (no goodbye: a power cut) is reported gone, 'expired'.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPrinterLan, printerLanUnavailable, type PrinterHost, type PrinterLan } from '../../kit/printer-lan.js';
import { startMdnsResponder, type MdnsResponder } from '../../kit/mdns-responder.js';
import { startBrowserInBox, type BoxBrowser, type BrowserEvent } from '../../kit/mdns-browser.js';
import { until } from '../../kit/until.js';

const skip = printerLanUnavailable();
if (skip) console.log(`# mDNS liveness LAN test skipped: ${skip}`);

const TTL_S = 20;

describe('mDNS browser liveness on a namespace LAN without a default route', { skip: skip ?? undefined, timeout: 240_000 }, () => {
  let lan: PrinterLan;
  let avahi: PrinterHost;
  let churnHost: PrinterHost;
  let quietHost: PrinterHost;
  let churn: MdnsResponder;
  let quiet: MdnsResponder;
  let browser: BoxBrowser;

  const announces = (address: string) => browser.events().filter((e): e is Extract<BrowserEvent, { event: 'announce' }> => e.event === 'announce' && e.p.address === address);
  const gones = (address: string) => browser.events().filter((e): e is Extract<BrowserEvent, { event: 'gone' }> => e.event === 'gone' && e.g.address === address);

  before(async () => {
    lan = createPrinterLan();
    avahi = lan.addHost('early-printer');
    churnHost = lan.addHost('churn-printer');
    quietHost = lan.addHost('quiet-printer');
    await lan.startPrinter(avahi, { make: 'Acme', model: 'Laser 9', queue: 'Early Printer' });
    // Announces once now, then only answers queries: found later only by asking.
    quiet = await startMdnsResponder(quietHost, { instance: 'Quiet Printer', ttl: TTL_S });
    churn = await startMdnsResponder(churnHost, { instance: 'Churn Printer', ttl: TTL_S, announceEveryMs: 5000 });
    browser = await startBrowserInBox(lan);
  });

  after(async () => {
    await browser?.stop();
    await quiet?.kill('SIGKILL');
    await churn?.kill('SIGKILL');
    lan?.destroy();
  });

  it('the box namespace has no default route', () => {
    const r = spawnSync('ip', ['-n', lan.boxNs, '-4', 'route', 'show', 'default'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), '');
  });

  it('finds the printers that announced before it started, by its start-up queries', async () => {
    const quietAnnounced = quiet.announced();
    await until('the quiet responder asked', () => quiet.answered() > 0, 30_000);
    const q = await until('the quiet printer reported', () => announces(quietHost.address)[0], 30_000);
    assert.equal(quiet.announced(), quietAnnounced, 'it announced nothing since the browser started');
    assert.equal(q.p.name, 'Quiet Printer');
    assert.equal(q.p.host, 'quiet-printer.local');
    assert.deepEqual(q.p.ipp, { port: 631, tls: false, resource: '/ipp/print' });
    const a = await until('the Avahi printer reported', () => announces(avahi.address)[0], 30_000);
    assert.equal(a.p.name, 'Early Printer');
    assert.equal(a.p.host, 'early-printer.local');
    assert.ok(a.p.services.includes('_ipp._tcp'), JSON.stringify(a.p.services));
    assert.equal(a.p.ipp?.port, 631);
    assert.ok(a.p.txt.rp, JSON.stringify(a.p.txt));
    const st = await browser.status();
    assert.deepEqual(st.interfaces, [{ name: 'br0', address: lan.boxAddress }], 'no error on the interface');
  });

  it(`records of TTL ${TTL_S} s kept alive over several TTLs by re-announcements and by answered re-queries: reported once, never gone`, async () => {
    await until('the churning printer reported', () => announces(churnHost.address)[0], 30_000);
    // Progress, not a clock: 14 re-announcements of the churning one (70 s, 3.5 TTLs), and the
    // quiet one asked again (and answering) in at least three more TTL periods.
    const churnFrom = churn.announced();
    const quietFrom = quiet.answered();
    await until('14 re-announcements and 3 re-query rounds', () => churn.announced() >= churnFrom + 14 && quiet.answered() >= quietFrom + 3, 150_000);
    assert.deepEqual(gones(churnHost.address), [], 'the re-announcing printer was never gone');
    assert.deepEqual(gones(quietHost.address), [], 'the printer answering re-queries was never gone');
    assert.deepEqual(gones(avahi.address), []);
    assert.equal(announces(churnHost.address).length, 1, 're-announcements that change nothing are not announces');
    assert.equal(announces(quietHost.address).length, 1);
    assert.equal(announces(avahi.address).length, 1);
  });

  it('a responder killed with SIGKILL (no goodbye) is reported gone, expired, after its TTL', async () => {
    await quiet.kill('SIGKILL');
    const g = await until('the killed printer gone', () => gones(quietHost.address)[0], 60_000);
    assert.deepEqual(g.g, { address: quietHost.address, name: 'Quiet Printer', host: 'quiet-printer.local', why: 'expired' });
    assert.deepEqual(gones(churnHost.address), [], 'the others are still there');
    assert.deepEqual(gones(avahi.address), []);
  });

  it('a printer that says goodbye (Avahi stopped) is reported gone, goodbye', async () => {
    await lan.stopPrinter(avahi);
    const g = await until('the Avahi printer gone', () => gones(avahi.address)[0], 30_000);
    assert.equal(g.g.why, 'goodbye');
    assert.equal(g.g.name, 'Early Printer');
    await browser.stop();
    assert.ok(browser.logs().some((l) => l.msg === 'mDNS: stopped listening'));
    assert.deepEqual(browser.logs().filter((l) => (l.level as number) >= 40), [], 'no warning logged');
  });
});
