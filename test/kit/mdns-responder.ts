// TEST PEER (not PrintBox code): a printer's mDNS responder with a TTL of our choosing, for the
// namespace LAN (printer-lan.ts). Avahi cannot be told a record TTL per service, so this stands in
// for a printer's firmware whose records live `ttl` seconds: run inside a host namespace (one
// without Avahi), it announces _ipp._tcp (PTR, SRV, TXT, A; the unique ones with the cache-flush
// bit) at start, again every `announceEveryMs` when given, and answers every query that asks for
// one of its records (with all of them, multicast, as a real responder's answer carries the rest
// as additionals). Killed with SIGKILL it says no goodbye: a printer whose power was cut.
//
// API (test side):
//   startMdnsResponder(host, { instance, ttl, announceEveryMs? }) -> once it has announced itself:
//     r.announced()   announcements sent so far;  r.answered()  queries answered so far;
//     r.out()         what the peer printed;      r.kill(signal) ends the peer (SIGKILL: no goodbye).
// Peer side: `ip netns exec <ns> node mdns-responder.js '<json>'`.
import { startNsPeer } from './ns-peer.js';
import { fileURLToPath } from 'node:url';
import makeMdns from 'multicast-dns';
import type { Answer } from 'dns-packet';
import type { PrinterHost } from './printer-lan.js';

interface PeerOptions {
  address: string;
  host: string;
  instance: string;
  ttl: number;
  announceEveryMs: number;
}

export interface MdnsResponder {
  announced(): number;
  answered(): number;
  out(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

export async function startMdnsResponder(h: PrinterHost, opts: { instance: string; ttl: number; announceEveryMs?: number }): Promise<MdnsResponder> {
  const peer: PeerOptions = { address: h.address, host: `${h.name}.local`, instance: opts.instance, ttl: opts.ttl, announceEveryMs: opts.announceEveryMs ?? 0 };
  const p = await startNsPeer(h.ns, import.meta.url, peer, { startedBy: 'announced', what: 'mDNS responder' });
  return { announced: () => p.count('announced'), answered: () => p.count('answered'), out: p.out, kill: (signal) => p.stop(signal) };
}

// ---- the peer itself, inside the host's namespace ----

function runPeer(o: PeerOptions): void {
  const type = '_ipp._tcp.local';
  const name = `${o.instance}.${type}`;
  const records = (): Answer[] => [
    { type: 'PTR', name: type, ttl: o.ttl, data: name },
    { type: 'SRV', name, ttl: o.ttl, flush: true, data: { target: o.host, port: 631, priority: 0, weight: 0 } },
    { type: 'TXT', name, ttl: o.ttl, flush: true, data: ['txtvers=1', 'rp=ipp/print', `ty=${o.instance}`] },
    { type: 'A', name: o.host, ttl: o.ttl, flush: true, data: o.address },
  ];
  const mine = new Set([type, name, o.host].map((n) => n.toLowerCase()));
  const mdns = makeMdns({ interface: o.address, bind: '0.0.0.0', reuseAddr: true, loopback: false });
  const announce = () => mdns.respond({ answers: records() }, (err: Error | null) => console.log(err ? `send error ${err.message}` : 'announced'));
  mdns.on('query', (q) => {
    const asked = (q.questions ?? []).filter((x) => mine.has(String(x.name).toLowerCase()));
    if (asked.length === 0) return;
    mdns.respond({ answers: records() }, (err: Error | null) => console.log(err ? `send error ${err.message}` : `answered ${asked.map((x) => `${x.type} ${x.name}`).join(', ')}`));
  });
  mdns.on('ready', () => {
    announce();
    if (o.announceEveryMs > 0) setInterval(announce, o.announceEveryMs);
  });
  process.on('SIGTERM', () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) runPeer(JSON.parse(process.argv[2]!) as PeerOptions);
