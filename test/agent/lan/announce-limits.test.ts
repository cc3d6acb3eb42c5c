// Announcements within limits, through the real agent in the box namespace of a namespace LAN
// (test/kit/printer-lan.ts), against real printers (CUPS's ippeveprinter):
// - a flood of 500 mDNS instance names from one host, all pointing at its real printer, costs at
//   most one IPP read of that address when the flood starts and one when the minute ends (counted
//   in ippeveprinter's own log), at most one stored reading (the 15-minute polling interval), and
//   the agent keeps answering;
// - a saved printer whose power is cut (no goodbye) is "not answering since <time>" after the next
//   failed read, not "said goodbye", and is itself again after its power comes back;
// - a printer whose mDNS records live 20 s but are re-announced every 5 s is never marked gone.
// The three run at once on one LAN and one agent (each on its own host): the flood is also a
// neighbour of the other two.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentInBox, type BoxAgent } from '../../kit/lan.js';
import { discoveredListing, type Info } from '../../kit/discovered.js';
import { createPrinterLan, killNamespace, ip, printerLanUnavailable, type PrinterHost, type PrinterLan } from '../../kit/printer-lan.js';
import { startMdnsFlood } from '../../kit/mdns-flood.js';
import { startMdnsResponder, type MdnsResponder } from '../../kit/mdns-responder.js';
import { until } from '../../kit/until.js';

const skip = printerLanUnavailable();
if (skip) console.log(`# announcement limits test skipped: ${skip}`);

const json = { 'Content-Type': 'application/json' };
const FLOOD_NAMES = 500;
const FLOOD_MS = 60_000;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** Get-Printer-Attributes requests ippeveprinter -v logged in `log` (one line per request it answered). */
const attributeReads = (log: string) => log.split('\n').filter((l) => /Get-Printer-Attributes/.test(l) && !/Accepted|Closing/.test(l)).length;

interface Profile {
  device: { serial: string; ip: string; status_messages?: string[]; raw_data?: Record<string, unknown>; printer_info?: Record<string, unknown> };
}

describe('announcements within limits: a flood, a power cut, short-lived records', { skip: skip ?? undefined, timeout: 240_000, concurrency: true }, () => {
  let lan: PrinterLan;
  let agent: BoxAgent;
  let flooded: PrinterHost;
  let flooder: PrinterHost;
  let cut: PrinterHost;
  let shortLived: PrinterHost;
  let responder: MdnsResponder | undefined;
  /** ippeveprinter's log of the flooded printer when the agent started: reads are counted after it. */
  let logMark = 0;
  let markedAt = 0;

  const context = () => `\n--- hosts ---\n${lan.hosts.map((h) => `${h.name} ${h.address}: ${h.log.out.slice(-800)}`).join('\n')}${responder ? `\n--- responder ---\n${responder.out().slice(-800)}` : ''}`;
  const { discovered, until: listedUntil } = discoveredListing(() => agent, context);
  const post = (path: string, body: unknown) => agent.request({ method: 'POST', path, headers: json, body: JSON.stringify(body) });
  const profile = async (serial: string): Promise<Profile> => {
    const r = await agent.request({ path: `/api/devices/profile?serial=${encodeURIComponent(serial)}`, maxBody: 1 << 20 });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as Profile;
  };
  const serialOf = (h: PrinterHost, list: Info[]) => list.find((d) => d.ip === h.address)?.serial;

  before(async () => {
    lan = createPrinterLan();
    flooded = lan.addHost('flooded-printer');
    cut = lan.addHost('cut-printer');
    shortLived = lan.addHost('short-printer');
    // The flood comes from the flooded printer's own host: one source, its own address.
    flooder = flooded;
    await Promise.all([
      lan.startPrinter(flooded, { make: 'Acme', model: 'Laser 9', queue: 'Flooded Printer', verbose: true }),
      lan.startPrinter(cut, { make: 'Acme', model: 'Jet 3', queue: 'Cut Printer' }),
      // Announces nothing itself: its only announcements are the short-lived ones of the responder.
      lan.startPrinter(shortLived, { make: 'Acme', model: 'Short 1', queue: 'Short Printer', announce: false }),
    ]);
    logMark = flooded.log.out.length;
    markedAt = Date.now();
    agent = await startAgentInBox(lan, { mdns: true });
  });

  after(async () => {
    await responder?.kill('SIGKILL');
    await agent?.stop();
    lan?.destroy();
  });

  it('a flood of 500 names pointing at one printer: at most one IPP read at once and one when the minute ends, at most one stored reading, the agent answering', async () => {
    const first = await listedUntil('the flooded printer listed', (l) => serialOf(flooded, l) !== undefined, 60_000);
    const serial = serialOf(flooded, first)!;
    const flood = await startMdnsFlood(flooder, { address: flooded.address, count: FLOOD_NAMES, overMs: FLOOD_MS });
    const versions: number[] = [];
    let floodOver = false;
    const done = flood.done().finally(() => (floodOver = true));
    while (!floodOver) {
      versions.push((await agent.request('/api/version')).status);
      await new Promise((r) => setTimeout(r, 2000));
    }
    await done;
    assert.equal(flood.sent(), FLOOD_NAMES, flood.out().slice(-1000));
    // The agent heard the flood: more names from one source than it keeps.
    const st = await agent.request({ path: '/discover/status', maxBody: 1 << 20 });
    const dropped = (JSON.parse(st.body) as { mdns: { dropped: { over_caps: number; rate_limited: number } } | null }).mdns?.dropped;
    assert.ok(dropped && dropped.over_caps + dropped.rate_limited > 0, `the flood did not reach the agent: ${st.body}`);
    // The read when the minute ends (the flood's newest announcement), then the count is taken.
    const reads = () => attributeReads(flooded.log.out.slice(logMark));
    await until('the read at the end of the minute', () => reads() >= 2, 90_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${reads()} reads\n--- agent ---\n${agent.stdout().slice(-3000)}${context()}`);
    });
    const windowMs = Date.now() - markedAt;
    const n = reads();
    console.log(`# flood: ${n} IPP reads of the flooded printer in ${Math.round(windowMs / 1000)} s; ${versions.length} /api/version during the flood`);
    assert.ok(n <= 1 + Math.floor(windowMs / 60_000), `${n} Get-Printer-Attributes in ${windowMs} ms (one at once, one a minute after):\n${flooded.log.out.slice(logMark).split('\n').filter((l) => l.includes('Get-Printer-Attributes')).join('\n')}`);
    const h = await agent.request({ path: `/api/devices/metrics/history?serial=${encodeURIComponent(serial)}&raw=true&period=day`, maxBody: 1 << 20 });
    assert.equal(h.status, 200, h.body);
    const rows = (JSON.parse(h.body) as unknown[] | null) ?? [];
    assert.ok(rows.length >= 1, 'the printer was read and its reading stored');
    assert.ok(rows.length <= 1, `${rows.length} stored readings with a 15-minute polling interval: ${h.body.slice(0, 1500)}`);
    assert.ok(versions.length >= 5, 'asked during the flood');
    assert.deepEqual([...new Set(versions)], [200], `GET /api/version during the flood: ${versions.join(' ')}`);
  });

  it('a saved printer whose power is cut: not answering since <time> after the next failed read, not "said goodbye"; itself again when its power comes back', async () => {
    const list = await listedUntil('the printer to cut listed', (l) => serialOf(cut, l) !== undefined, 60_000);
    const serial = serialOf(cut, list)!;
    const save = await post('/devices/save', { serial });
    assert.equal(save.status, 200, save.body);
    const ok = await post('/devices/metrics/collect', { serial });
    assert.equal(ok.status, 200, `a read before the cut: ${ok.body}`);
    // The power cut: every process of the host killed, no goodbye sent; the address stays on the LAN.
    killNamespace(cut.ns, 'SIGKILL');
    await until('the cut printer\'s processes gone', () => ip('netns', 'pids', cut.ns).out.trim() === '', 10_000);
    const failed = await post('/devices/metrics/collect', { serial });
    assert.equal(failed.status, 504, failed.body);
    const p = await profile(serial);
    const first = p.device.status_messages?.[0] ?? '';
    const m = /^not answering since (\S+?): /.exec(first);
    assert.ok(m, `status_messages[0]: ${JSON.stringify(p.device.status_messages)}`);
    assert.match(m[1], RFC3339);
    assert.ok(!(p.device.status_messages ?? []).some((s) => s.includes('goodbye')), `not said goodbye: ${JSON.stringify(p.device.status_messages)}\n--- agent's goodbye lines ---\n${agent.stdout().split('\n').filter((l) => /goodbye|expired/.test(l)).join('\n')}`);
    assert.equal(p.device.raw_data?.mdns_goodbye_at, undefined);
    /** The printer's PrinterInfo: /devices/list's entry carries it as printer_info, /devices/discovered's is one. */
    const listed = async (path: string) => {
      const r = await agent.request({ path, maxBody: 1 << 20 });
      assert.equal(r.status, 200, r.body);
      const d = (JSON.parse(r.body) as Info[]).find((x) => x.serial === serial);
      return path.startsWith('/devices/list') ? (d?.printer_info as Record<string, unknown> | undefined) : d;
    };
    const inList = await listed('/devices/list');
    assert.ok(inList, 'in /devices/list');
    assert.equal(inList.not_answering_since, m[1], `/devices/list: ${JSON.stringify(inList)}`);
    const inDiscovered = await listed('/devices/discovered?include_known=true');
    assert.ok(inDiscovered, 'in /devices/discovered');
    assert.equal(inDiscovered.not_answering_since, m[1], `/devices/discovered: ${JSON.stringify(inDiscovered)}`);

    // The power comes back, same address.
    await lan.startPrinter(cut, cut.printerOpts!);
    const back = await post('/devices/metrics/collect', { serial });
    assert.equal(back.status, 200, back.body);
    const q = await profile(serial);
    assert.ok(!(q.device.status_messages ?? []).some((s) => s.startsWith('not answering since')), JSON.stringify(q.device.status_messages));
    assert.equal(q.device.raw_data?.not_answering_since, undefined);
    const listedBack = await listed('/devices/list');
    const discoveredBack = await listed('/devices/discovered?include_known=true');
    assert.ok(listedBack && discoveredBack);
    assert.equal(listedBack.not_answering_since, undefined);
    assert.equal(discoveredBack.not_answering_since, undefined);
  });

  it('a printer whose 20 s records are re-announced every 5 s is never marked gone (no "offline:" line at any look over more than three TTLs)', async () => {
    responder = await startMdnsResponder(shortLived, { instance: 'Short Printer', ttl: 20, announceEveryMs: 5000 });
    await listedUntil('the short-lived printer listed', (l) => serialOf(shortLived, l) !== undefined, 60_000);
    const start = responder.announced();
    const looks: string[][] = [];
    // Watched until the responder has re-announced 14 times (70 s, three and a half TTLs).
    while (responder.announced() < start + 14) {
      const d = (await discovered()).find((x) => x.ip === shortLived.address);
      assert.ok(d, `the short-lived printer left the listing:${context()}`);
      const lines = (d.status_messages as string[] | undefined) ?? [];
      looks.push(lines);
      assert.ok(!lines.some((s) => s.startsWith('offline:')), `marked gone at look ${looks.length}: ${JSON.stringify(lines)}\n--- agent ---\n${agent.stdout().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    assert.ok(looks.length >= 10, `looked ${looks.length} times`);
  });
});
