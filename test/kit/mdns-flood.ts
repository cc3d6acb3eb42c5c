// TEST PEER (not PrintBox code): an mDNS announcement flood from one host, for the namespace LAN
// (printer-lan.ts). Run inside a host namespace (beside that host's Avahi: both bind 5353 with
// SO_REUSEADDR), it announces `count` different _ipp._tcp instance names spread evenly over
// `overMs`, each one PTR + SRV + TXT + A, all pointing at `address` port 631 (rp=ipp/print): a host
// cycling through names, or a misbehaving firmware, as the agent's announcement gate must survive.
// Each instance is announced once, `perPacket` of them in one packet (default 1: the packets are
// spread evenly, so the rate is count / perPacket / overMs); the peer exits when the last is sent.
//
// API (test side):
//   startMdnsFlood(host, { address, count, overMs, perPacket? }) -> once the first packet is out:
//     f.sent()     packets sent so far;         f.done()  resolves when the last is sent (the peer exited);
//     f.out()      what the peer printed;       f.kill()  ends it early.
// Peer side: `ip netns exec <ns> node mdns-flood.js '<json>'`.
import { fileURLToPath } from 'node:url';
import makeMdns from 'multicast-dns';
import type { Answer } from 'dns-packet';
import type { PrinterHost } from './printer-lan.js';
import { startNsPeer } from './ns-peer.js';

interface FloodOptions {
  /** The host's own address: the socket sends from it. */
  from: string;
  /** The address every instance's A record gives. */
  address: string;
  count: number;
  overMs: number;
  perPacket: number;
}

export interface MdnsFlood {
  sent(): number;
  done(): Promise<void>;
  out(): string;
  kill(): Promise<void>;
}

export async function startMdnsFlood(h: PrinterHost, opts: { address: string; count: number; overMs: number; perPacket?: number }): Promise<MdnsFlood> {
  const peer: FloodOptions = { from: h.address, address: opts.address, count: opts.count, overMs: opts.overMs, perPacket: Math.max(1, opts.perPacket ?? 1) };
  const p = await startNsPeer(h.ns, import.meta.url, peer, { startedBy: 'announced', what: 'mDNS flood' });
  return {
    sent: () => p.count('announced'),
    async done() {
      await p.exited;
      if (p.child.exitCode !== 0) throw new Error(`mDNS flood in ${h.ns} exited ${p.child.exitCode}:\n${p.out().slice(-2000)}`);
    },
    out: p.out,
    kill: () => p.stop('SIGKILL'),
  };
}

// ---- the peer itself, inside the host's namespace ----

function runFlood(o: FloodOptions): void {
  const type = '_ipp._tcp.local';
  const host = 'flood-host.local';
  const records = (i: number): Answer[] => {
    const name = `Flood ${i}.${type}`;
    return [
      { type: 'PTR', name: type, ttl: 4500, data: name },
      { type: 'SRV', name, ttl: 120, flush: true, data: { target: host, port: 631, priority: 0, weight: 0 } },
      { type: 'TXT', name, ttl: 4500, flush: true, data: ['txtvers=1', 'rp=ipp/print', `ty=Flood ${i}`] },
    ];
  };
  const mdns = makeMdns({ interface: o.from, bind: '0.0.0.0', reuseAddr: true, loopback: false });
  const packets = Math.ceil(o.count / o.perPacket);
  let p = 0;
  const next = () => {
    const n = p++;
    const first = n * o.perPacket;
    const names = Array.from({ length: Math.min(o.perPacket, o.count - first) }, (_, k) => first + k);
    const answers: Answer[] = [...names.flatMap(records), { type: 'A', name: host, ttl: 120, flush: true, data: o.address }];
    mdns.respond({ answers }, (err: Error | null) => {
      console.log(err ? `send error ${err.message}` : `announced ${n}`);
      if (n === packets - 1) {
        mdns.destroy();
        setTimeout(() => process.exit(0), 50);
      }
    });
    if (p < packets) setTimeout(next, o.overMs / packets);
  };
  mdns.on('ready', next);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) runFlood(JSON.parse(process.argv[2]!) as FloodOptions);
