// Child program of lan-sinks.ts, run inside the laptop namespace: opens GET /events on the box
// over TLS from a given address with a given cookie, and prints one JSON line per thing heard:
// `{"status": n}`, then `{"event": name, "data": ...}` for each event, then `{"end": reason}`
// when the box ends the stream (or the connection fails).
import net from 'node:net';
import tls from 'node:tls';

const emit = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\n');

let input = '';
for await (const c of process.stdin) input += c;
const cfg = JSON.parse(input) as { host: string; port: number; from: string; cookie: string };

let raw = Buffer.alloc(0); // what came, not yet taken apart
let inBody = false;
let text = ''; // the decoded body not yet split into events
let ended = false;
const end = (reason: string) => {
  if (ended) return;
  ended = true;
  emit({ end: reason });
  sock.destroy();
};
// From the given address: TCP first (tls.connect has no localAddress), TLS over it.
const tcp = net.connect({ host: cfg.host, port: cfg.port, localAddress: cfg.from });
const sock = tls.connect({ socket: tcp, rejectUnauthorized: false }, () => {
  sock.write(`GET /events HTTP/1.1\r\nHost: ${cfg.host}:${cfg.port}\r\nAccept: text/event-stream\r\nCookie: ${cfg.cookie}\r\n\r\n`);
});
sock.on('data', (d: Buffer) => {
  raw = Buffer.concat([raw, d]);
  if (!inBody) {
    const at = raw.indexOf('\r\n\r\n');
    if (at < 0) return;
    const head = raw.subarray(0, at).toString('latin1');
    emit({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0) });
    if (!/transfer-encoding: chunked/i.test(head)) return end('response not chunked');
    raw = raw.subarray(at + 4);
    inBody = true;
  }
  // Chunked transfer: take whole chunks; the zero-size chunk ends the response (after the events before it).
  let complete = false;
  for (;;) {
    const eol = raw.indexOf('\r\n');
    if (eol < 0) break;
    const size = parseInt(raw.subarray(0, eol).toString('latin1'), 16);
    if (size === 0) {
      complete = true;
      break;
    }
    if (raw.length < eol + 2 + size + 2) break;
    text += raw.subarray(eol + 2, eol + 2 + size).toString('utf8');
    raw = raw.subarray(eol + 2 + size + 2);
  }
  for (;;) {
    const at = text.indexOf('\n\n');
    if (at < 0) break;
    const frame = text.slice(0, at);
    text = text.slice(at + 2);
    const m = /^event: (\S+)\ndata: (.*)$/.exec(frame);
    if (m) emit({ event: m[1], data: JSON.parse(m[2]) });
  }
  if (complete) end('response complete');
});
sock.on('end', () => end('connection closed'));
sock.on('close', () => end('connection closed'));
sock.on('error', (e) => end(`error: ${e.message}`));
