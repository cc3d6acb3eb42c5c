// Test helper: the floods an attacker with nothing but a site LAN address makes against the box's
// announcement listeners, on a namespace LAN (printer-lan.ts), shared by the test
// (test/agent/lan/hostile-floods.test.ts) and the soak that measures them on the appliance's flags
// (scripts/soak/announce-flood.ts):
// - an mDNS flood from one host: `packetsPerS` packets a second, each with `namesPerPacket`
//   service names never seen before (mdns-flood.ts);
// - a device flood from `ghosts` hosts: each answers IPP as a new printer every time and sends a
//   WS-Discovery Hello with a new endpoint every `helloMs` (identity-flood.ts);
// - meanwhile the technician's desk, another host, asks GET /api/version every `deskEveryMs` over
//   HTTPS on a fresh connection (flood.ts probe), each answer timed inside the desk's namespace.
//
// API:
//   createFloodSite(ghosts)              -> a FloodSite: the LAN with a real printer host (not started), the
//                                           flooder, the desk and the ghosts.
//   runFloods(site, httpsPort, opts)     -> runs the floods for opts.ms; resolves with the desk's answers, the
//                                           ghosts' counts and how long it took.
import { probe, type ProbeResult } from './flood.js';
import { createPrinterLan, type PrinterHost, type PrinterLan } from './printer-lan.js';
import { startMdnsFlood } from './mdns-flood.js';
import { startIdentityFlood } from './identity-flood.js';

export interface FloodSite {
  lan: PrinterLan;
  printer: PrinterHost;
  flooder: PrinterHost;
  desk: PrinterHost;
  ghosts: PrinterHost[];
}

export interface FloodOptions {
  ms: number;
  /** 0: no mDNS flood. */
  packetsPerS: number;
  namesPerPacket: number;
  /** 0: no device flood. */
  helloMs: number;
  deskEveryMs: number;
  /** Guards a hung request of the desk (default 30 s). */
  deskTimeoutMs?: number;
}

export interface FloodRun {
  answers: ProbeResult[];
  /** Per ghost: IPP reads it answered and Hellos it sent. */
  ghosts: { address: string; answered: number; hellos: number }[];
  mdnsPackets: number;
  minutes: number;
}

export function createFloodSite(ghosts: number): FloodSite {
  const lan = createPrinterLan();
  return {
    lan,
    printer: lan.addHost('office-printer'),
    flooder: lan.addHost('mdns-flooder'),
    desk: lan.addHost('desk'),
    ghosts: Array.from({ length: ghosts }, (_, i) => lan.addHost(`ghost-${i}`)),
  };
}

export async function runFloods(site: FloodSite, httpsPort: number, o: FloodOptions): Promise<FloodRun> {
  const started = Date.now();
  const packets = Math.round((o.ms / 1000) * o.packetsPerS);
  const mdns = packets > 0 ? await startMdnsFlood(site.flooder, { address: site.flooder.address, count: packets * o.namesPerPacket, perPacket: o.namesPerPacket, overMs: o.ms }) : undefined;
  const ghosts = o.helloMs > 0 ? await Promise.all(site.ghosts.map((g) => startIdentityFlood(g, { helloMs: o.helloMs }))) : [];
  try {
    const answers = await probe(site.desk.ns, {
      host: site.lan.boxAddress,
      port: httpsPort,
      from: site.desk.address,
      count: Math.round(o.ms / o.deskEveryMs),
      intervalMs: o.deskEveryMs,
      timeoutMs: o.deskTimeoutMs ?? 30_000,
    });
    await mdns?.done();
    return {
      answers,
      ghosts: ghosts.map((f, i) => ({ address: site.ghosts[i]!.address, answered: f.answered(), hellos: f.hellos() })),
      mdnsPackets: mdns?.sent() ?? 0,
      minutes: (Date.now() - started) / 60_000,
    };
  } finally {
    await mdns?.kill();
    await Promise.all(ghosts.map((f) => f.stop()));
  }
}
