// TEST PEER (not PrintBox code): a printer's WS-Discovery and SSDP side, for the namespace LAN
// (printer-lan.ts). No Debian printer software speaks WS-Discovery, so this stands in for the
// firmware of a WSD printer: run inside a printer host's namespace beside ippeveprinter, it
// - answers a WS-Discovery Probe whose Types name PrintDeviceType (or are empty) with ProbeMatches,
// - sends Hello and Bye (2005/04, as Windows and printers do) when told,
// - answers an SSDP M-SEARCH for urn:schemas-upnp-org:device:Printer:1 with LOCATION, when given one.
//
// API (test side):
//   startResponder(host, { uuid, wsd?, ssdpLocation? }) -> a Responder, once the peer's sockets are bound:
//     r.hello(xaddrs?, uuid?)  sends a Hello (default XAddrs http://<host address>:3911/<uuid>); resolves with the
//                              peer's clock (ms) just before it was sent.
//     r.bye()                  sends a Bye for the responder's uuid.
//     r.out()                  what the peer printed (one line per Probe / M-SEARCH answered).
//     r.stop()                 ends the peer.
// Peer side: `ip netns exec <ns> node wsd-responder.js '<json>'`; commands on stdin, one a line.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { XMLParser } from 'fast-xml-parser';
import type { PrinterHost } from './printer-lan.js';

const GROUP = '239.255.255.250';
const PRINT_NS = 'http://schemas.microsoft.com/windows/2006/08/wdp/print';
const SSDP_PRINTER = 'urn:schemas-upnp-org:device:Printer:1';

interface PeerOptions {
  address: string;
  uuid: string;
  wsd: boolean;
  ssdpLocation?: string;
}

export interface Responder {
  hello(xaddrs?: string, uuid?: string): Promise<number>;
  bye(): Promise<void>;
  out(): string;
  stop(): Promise<void>;
}

export async function startResponder(host: PrinterHost, opts: { uuid: string; wsd?: boolean; ssdpLocation?: string }): Promise<Responder> {
  const peer: PeerOptions = { address: host.address, uuid: opts.uuid, wsd: opts.wsd ?? true, ...(opts.ssdpLocation ? { ssdpLocation: opts.ssdpLocation } : {}) };
  const child: ChildProcess = spawn('ip', ['netns', 'exec', host.ns, process.execPath, fileURLToPath(import.meta.url), JSON.stringify(peer)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const waiters: { re: RegExp; from: number; resolve(m: RegExpExecArray): void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const m = w.re.exec(out.slice(w.from));
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
    check();
  });
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const next = (re: RegExp, what: string, ms = 10_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`WS-Discovery peer: no ${what} within ${ms} ms:\n${out}`)), ms);
      waiters.push({ re, from: out.length, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      check();
    });
  const ready = new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`WS-Discovery peer not ready:\n${out}`)), 15_000);
    waiters.push({ re: /^ready$/m, from: 0, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    child.once('exit', (code) => reject(new Error(`WS-Discovery peer exited ${code}:\n${out}`)));
  });
  await ready;
  const send = (line: string) => child.stdin!.write(`${line}\n`);
  return {
    async hello(xaddrs, uuid) {
      const sent = next(/^hello-sent (\d+)$/m, 'Hello');
      send(`hello ${uuid ?? peer.uuid} ${xaddrs ?? `http://${host.address}:3911/${peer.uuid}`}`);
      return Number((await sent)[1]);
    },
    async bye() {
      const sent = next(/^bye-sent$/m, 'Bye');
      send('bye');
      await sent;
    },
    out: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---- the peer itself, inside the printer host's namespace ----

const envelope = (action: string, body: string, relatesTo?: string) =>
  '<?xml version="1.0" encoding="utf-8"?>' +
  '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing" ' +
  `xmlns:wsd="http://schemas.xmlsoap.org/ws/2005/04/discovery" xmlns:wsdp="http://schemas.xmlsoap.org/ws/2006/02/devprof" xmlns:wprt="${PRINT_NS}">` +
  `<soap:Header><wsa:To>${relatesTo ? 'http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous' : 'urn:schemas-xmlsoap-org:ws:2005:04:discovery'}</wsa:To>` +
  `<wsa:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/${action}</wsa:Action>` +
  `<wsa:MessageID>urn:uuid:${randomUUID()}</wsa:MessageID>${relatesTo ? `<wsa:RelatesTo>${relatesTo}</wsa:RelatesTo>` : ''}` +
  `<wsd:AppSequence InstanceId="1" MessageNumber="1"/></soap:Header><soap:Body>${body}</soap:Body></soap:Envelope>`;
const epr = (uuid: string) => `<wsa:EndpointReference><wsa:Address>urn:uuid:${uuid}</wsa:Address></wsa:EndpointReference>`;
const TYPES = '<wsd:Types>wsdp:Device wprt:PrintDeviceType</wsd:Types>';
/** A printer's WS-Discovery Hello (2005/04) for endpoint `uuid` at `xaddrs`. */
export const helloMessage = (uuid: string, xaddrs: string) =>
  envelope('Hello', `<wsd:Hello>${epr(uuid)}${TYPES}<wsd:XAddrs>${xaddrs}</wsd:XAddrs><wsd:MetadataVersion>1</wsd:MetadataVersion></wsd:Hello>`);
export const WSD_GROUP = GROUP;

function runPeer(o: PeerOptions): void {
  const xml = new XMLParser({ removeNSPrefix: true, processEntities: false, parseTagValue: false });
  const xaddrs = `http://${o.address}:3911/${o.uuid}`;
  let pending = (o.wsd ? 1 : 0) + (o.ssdpLocation ? 1 : 0);
  const bound = () => --pending === 0 && console.log('ready');
  const wsd = createSocket({ type: 'udp4', reuseAddr: true });
  const sendWsd = (msg: string, port: number, to: string, done?: () => void) => wsd.send(msg, port, to, (err) => (err ? console.log(`send error ${err.message}`) : done?.()));
  if (o.wsd) {
    wsd.on('message', (msg, from) => {
      let doc: Record<string, any>;
      try {
        doc = xml.parse(msg.toString('utf8')) as Record<string, any>;
      } catch {
        return;
      }
      const probe = doc?.Envelope?.Body?.Probe;
      if (probe === undefined) return;
      const types = typeof probe === 'object' && probe ? String(probe.Types ?? '') : '';
      if (types && !types.includes('PrintDeviceType')) return;
      const id = String(doc.Envelope.Header?.MessageID ?? '');
      const match = envelope('ProbeMatches', `<wsd:ProbeMatches><wsd:ProbeMatch>${epr(o.uuid)}${TYPES}<wsd:XAddrs>${xaddrs}</wsd:XAddrs><wsd:MetadataVersion>1</wsd:MetadataVersion></wsd:ProbeMatch></wsd:ProbeMatches>`, id);
      sendWsd(match, from.port, from.address, () => console.log(`probe-answered ${from.address}:${from.port} types=${types}`));
    });
    wsd.bind(3702, () => {
      wsd.addMembership(GROUP, o.address);
      wsd.setMulticastInterface(o.address);
      wsd.setMulticastTTL(1);
      bound();
    });
  }
  const ssdp = createSocket({ type: 'udp4', reuseAddr: true });
  if (o.ssdpLocation) {
    ssdp.on('message', (msg, from) => {
      const text = msg.toString('latin1');
      if (!text.startsWith('M-SEARCH * HTTP/1.1\r\n')) return;
      const st = /\r\nST:\s*([^\r]*)/i.exec(text)?.[1]?.trim();
      if (st !== SSDP_PRINTER && st !== 'ssdp:all') return;
      const answer = `HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=1800\r\nEXT:\r\nLOCATION: ${o.ssdpLocation}\r\nSERVER: Linux/6 UPnP/1.0 wsd-responder/1\r\nST: ${SSDP_PRINTER}\r\nUSN: uuid:${o.uuid}::${SSDP_PRINTER}\r\n\r\n`;
      ssdp.send(answer, from.port, from.address, () => console.log(`msearch-answered ${from.address}:${from.port}`));
    });
    ssdp.bind(1900, () => {
      ssdp.addMembership(GROUP, o.address);
      bound();
    });
  }
  createInterface({ input: process.stdin }).on('line', (line) => {
    const [cmd, uuid, addrs] = line.trim().split(/\s+/);
    if (cmd === 'hello') {
      const msg = helloMessage(uuid!, addrs!);
      const at = Date.now();
      sendWsd(msg, 3702, GROUP, () => console.log(`hello-sent ${at}`));
    } else if (cmd === 'bye') {
      sendWsd(envelope('Bye', `<wsd:Bye>${epr(o.uuid)}</wsd:Bye>`), 3702, GROUP, () => console.log('bye-sent'));
    }
  });
  process.on('SIGTERM', () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) runPeer(JSON.parse(process.argv[2]!) as PeerOptions);
