// TEST PEER (not PrintBox code): a host that keeps making up printers, for the namespace LAN
// (printer-lan.ts). Run inside a host's namespace, it
// - answers every IPP request on port 631 of the host's address as a printer with a NEW serial each
//   time (`FLOOD-<host octet>-<n>`), and a hostile printer's names for its supplies
//   (hostile-names.ts: `constructor`, `prototype`, ... as marker names);
// - sends a WS-Discovery Hello every `helloMs` with a NEW endpoint uuid each time, XAddrs at its own
//   address: an attacker's way to make the box read it again and again.
//
// API (test side):
//   startIdentityFlood(host, { helloMs }) -> once its IPP port is bound and the first Hello is out:
//     f.answered()  IPP requests answered so far;   f.hellos()  Hellos sent so far;
//     f.out()       what the peer printed;          f.stop()    ends it.
// Peer side: `ip netns exec <ns> node identity-flood.js '<json>'`.
import { createSocket } from 'node:dgram';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { hostileIppReply } from './hostile-names.js';
import { startNsPeer } from './ns-peer.js';
import { helloMessage, WSD_GROUP } from './wsd-responder.js';
import type { PrinterHost } from './printer-lan.js';

interface PeerOptions {
  address: string;
  helloMs: number;
}

export interface IdentityFlood {
  answered(): number;
  hellos(): number;
  out(): string;
  stop(): Promise<void>;
}

export async function startIdentityFlood(h: PrinterHost, opts: { helloMs: number }): Promise<IdentityFlood> {
  const peer: PeerOptions = { address: h.address, helloMs: opts.helloMs };
  const p = await startNsPeer(h.ns, import.meta.url, peer, { startedBy: 'hello', what: 'identity flood' });
  return { answered: () => p.count('answered'), hellos: () => p.count('hello'), out: p.out, stop: () => p.stop() };
}

// ---- the peer itself, inside the host's namespace ----

function runPeer(o: PeerOptions): void {
  const octet = o.address.split('.').pop();
  let n = 0;
  const ipp = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const serial = `FLOOD-${octet}-${++n}`;
      const reply = hostileIppReply(serial);
      res.writeHead(200, { 'Content-Type': 'application/ipp', 'Content-Length': reply.length }).end(reply);
      console.log(`answered ${serial}`);
    });
  });
  const wsd = createSocket({ type: 'udp4', reuseAddr: true });
  const hello = () => {
    const uuid = randomUUID();
    wsd.send(helloMessage(uuid, `http://${o.address}:3911/${uuid}`), 3702, WSD_GROUP, (err) => console.log(err ? `send error ${err.message}` : `hello ${uuid}`));
  };
  ipp.listen(631, o.address, () => {
    wsd.bind(0, o.address, () => {
      wsd.setMulticastInterface(o.address);
      wsd.setMulticastTTL(1);
      hello();
      setInterval(hello, o.helloMs);
    });
  });
  process.on('SIGTERM', () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) runPeer(JSON.parse(process.argv[2]!) as PeerOptions);
