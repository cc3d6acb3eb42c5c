// Floods from the site network, as attackers with nothing but a LAN address make them, all at once
// for FLOOD_MS (5 minutes) against the real agent in the box namespace of a namespace LAN
// (test/kit/printer-lan.ts), beside a real printer (CUPS's ippeveprinter announced by Avahi):
// - an mDNS flood: one host sends 10 packets a second, each with 20 service names never seen before
//   (the flood that took the old browser to 100 % CPU and stopped the API);
// - a device flood: five hosts each answer IPP as a printer with a new serial every time (and a
//   hostile printer's names for its supplies: `constructor`, `prototype`, ...) and send a
//   WS-Discovery Hello with a new endpoint every second;
// - meanwhile another host (the technician's desk) asks GET /api/version every second over HTTPS.
// Then: every request of the desk was answered; the flood was heard and dropped over the caps
// (GET /discover/status); the device records the device flood made stay within the announcement
// gate (one read per address a minute) and the record caps; the real printer is still listed and
// not marked gone; and the box's own backup, full of the flood's hostile names, restores
// (POST /restore) and imports (`printbox-agent import`) into fresh boxes.
// The figures of the same floods on the appliance's flags: scripts/soak/announce-flood.ts,
// docs/reliability.md.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAgentInBox, type BoxAgent } from '../../kit/lan.js';
import { discoveredListing } from '../../kit/discovered.js';
import { printerLanUnavailable } from '../../kit/printer-lan.js';
import { createFloodSite, runFloods, type FloodSite } from '../../kit/site-floods.js';
import { expectJson, importNdjson, startAgent, writeConfig, type Agent } from '../../kit/agent.js';
import { findInheritedKey } from '../../../src/model/inherited-keys.js';
import { RECORD_LIMITS } from '../../../src/discovery/record-caps.js';

const skip = printerLanUnavailable();
if (skip) console.log(`# hostile floods test skipped: ${skip}`);

const FLOOD_MS = 300_000;
const PACKETS_PER_S = 10;
const NAMES_PER_PACKET = 20;
const GHOSTS = 5;

interface DiscoverStatus {
  mdns: { dropped: { rate_limited: number; over_caps: number }; services: number; limits: { services: number; services_per_source: number } } | null;
  wsd: { dropped: { rate_limited: number; over_caps: number }; endpoints: number } | null;
  records: { refused: number; evicted: number };
}

describe('floods from the site network: mDNS names, made-up printers, while another host is answered', { skip: skip ?? undefined, timeout: FLOOD_MS + 240_000 }, () => {
  let site: FloodSite;
  let agent: BoxAgent;
  const fresh: Agent[] = [];

  const context = () => `\n--- hosts ---\n${site.lan.hosts.map((h) => `${h.name} ${h.address}: ${h.log.out.slice(-400)}`).join('\n')}`;
  const { discovered, until } = discoveredListing(() => agent, context);

  before(async () => {
    site = createFloodSite(GHOSTS);
    await site.lan.startPrinter(site.printer, { make: 'Acme', model: 'Laser 9', queue: 'Office Printer' });
    agent = await startAgentInBox(site.lan, { mdns: true, wsd: true });
  });

  after(async () => {
    for (const a of fresh) await a.stop();
    await agent?.stop();
    site?.lan.destroy();
  });

  it('for 5 minutes: every request answered, the floods bounded and counted, the printer kept, the backup restorable', { timeout: FLOOD_MS + 180_000 }, async () => {
    const listed = await until('the real printer listed', (l) => l.some((d) => d.ip === site.printer.address), 60_000);
    const serial = listed.find((d) => d.ip === site.printer.address)!.serial;

    const run = await runFloods(site, agent.config.httpsPort, { ms: FLOOD_MS, packetsPerS: PACKETS_PER_S, namesPerPacket: NAMES_PER_PACKET, helloMs: 1000, deskEveryMs: 1000 });
    const { answers, minutes } = run;
    assert.equal(run.mdnsPackets, (FLOOD_MS / 1000) * PACKETS_PER_S, 'the whole mDNS flood was sent');

    const failed = answers.filter((a) => a.status !== 200);
    assert.deepEqual(failed, [], `${failed.length} of ${answers.length} requests from another host not answered 200 during the floods`);
    const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
    console.log(`# desk during the floods: ${answers.length} GET /api/version, median ${ms[ms.length >> 1]} ms, max ${ms[ms.length - 1]} ms`);

    // The floods reached the agent and were dropped over its caps, which held.
    const st = JSON.parse((await agent.request({ path: '/discover/status', maxBody: 1 << 20 })).body) as DiscoverStatus;
    console.log(`# discover status after the floods: ${JSON.stringify({ mdns: st.mdns, wsd: st.wsd, records: st.records })}`);
    assert.ok(st.mdns, 'mDNS listening');
    assert.ok(st.mdns.dropped.over_caps > 0, `the mDNS flood was not dropped over the caps: ${JSON.stringify(st.mdns)}`);
    assert.ok(st.mdns.services <= st.mdns.limits.services, `${st.mdns.services} services remembered over the cap ${st.mdns.limits.services}`);
    assert.ok(st.wsd, 'WS-Discovery listening');

    // Each ghost was read (the flood worked), and made at most one record a minute (the gate) and
    // never more than its hourly cap.
    for (const g of run.ghosts) assert.ok(g.answered >= 1 && g.hellos >= 60, `the ghost at ${g.address} was never read, or sent few Hellos: ${JSON.stringify(g)}`);
    const list = await discovered();
    for (const g of run.ghosts) {
      const made = list.filter((d) => d.ip === g.address).length;
      assert.ok(made <= Math.min(RECORD_LIMITS.newPerAddressPerHour, Math.ceil(minutes) + 1), `${made} records at ${g.address} in ${minutes.toFixed(1)} minutes`);
    }
    const ghostRecords = list.filter((d) => run.ghosts.some((g) => g.address === d.ip)).length;
    const sum = (k: 'answered' | 'hellos') => run.ghosts.reduce((n, g) => n + g[k], 0);
    console.log(`# device flood: ${sum('answered')} IPP reads answered, ${sum('hellos')} Hellos sent, ${ghostRecords} records in ${minutes.toFixed(1)} minutes`);

    // The real printer: listed at its address, not marked gone.
    const mine = list.find((d) => d.serial === serial);
    assert.ok(mine && mine.ip === site.printer.address, `the real printer after the floods: ${JSON.stringify(mine)}`);
    assert.ok(!((mine.status_messages as string[] | undefined) ?? []).some((s) => /^offline:|goodbye/.test(s)), JSON.stringify(mine.status_messages));

    // The box's own backup, with the ghosts' hostile names in it, restores and imports.
    const backup = await agent.request({ path: '/backup', maxBody: 64 << 20 });
    assert.equal(backup.status, 200);
    assert.ok(!backup.truncated, 'the whole backup');
    const lines = backup.body.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.some((l) => l.kind === 'device' && String(l.serial).startsWith('FLOOD-')), 'the ghosts are in the backup');
    for (const [i, l] of lines.entries()) assert.equal(findInheritedKey(l), undefined, `backup line ${i + 1}: ${JSON.stringify(l).slice(0, 300)}`);
    const restored = await startAgent();
    fresh.push(restored);
    const r = await restored.request('/restore', { method: 'POST', body: backup.body, headers: { 'Content-Type': 'application/x-ndjson', Accept: 'application/json' } });
    assert.equal(r.status, 200, r.body);
    assert.equal((expectJson(r) as { devices: number }).devices, lines.filter((l) => l.kind === 'device').length);
    const imported = await writeConfig();
    const cli = await importNdjson(imported.configPath, backup.body);
    assert.equal(cli.code, 0, cli.stderr);
  });
});
