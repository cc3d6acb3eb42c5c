// Test helper: a connection flood from "another host on the site network". Each part
// runs as one child process inside a network namespace (test/kit/lan.ts), under the highest
// open-file limit it may take (`ulimit -n` up to its hard limit: a flood of 25,000 needs more than
// the usual 1,024).
//
// API:
//   startFlood(ns, opts)    -> a Flood: opens opts.idle plain TCP connections that never send a byte and
//                              opts.partial ones that send the first 5 bytes of a TLS ClientHello (a record
//                              header announcing 512 bytes that never come), from opts.from to host:port,
//                              at most opts.pending connects in flight at once (opts.from: one address, or
//                              several used in turn). With opts.sustainMs, every
//                              connection the box closes is opened again until that time is over (an
//                              attacker keeping up the pressure). Flood.last() is its latest tally;
//                              Flood.until(pred, ms) waits for a tally; Flood.stop() closes everything.
//   probe(ns, opts)         -> opts.count GET /api/version over TLS from opts.from, one after the other, each on
//                              a fresh connection; resolves each one's status and milliseconds (TCP connect to
//                              the last byte of the answer), measured inside the namespace.
//   renegotiate(ns, opts)   -> a TLS 1.2 connection asks for a renegotiation; resolves what happened.
//   widenPortRange(ns)      -> lets one address open up to ~64,000 connections (the namespace's own setting).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

export interface FloodTally {
  /** Connections attempted, connected, and open now. */
  attempted: number;
  connected: number;
  open: number;
  /**
   * Connections the box closed or reset after they were connected, and connects that failed (a
   * reset can come before this side has seen its connect complete: ECONNRESET).
   */
  closed: number;
  failed: number;
  /** Socket errors by code. */
  errors: Record<string, number>;
  /** Every connection attempted (and, with sustainMs, the pressure is over). */
  done: boolean;
  /** Of the closed connections that lived over a second: the shortest and the longest life, ms. */
  longLivedMin: number | null;
  longLivedMax: number | null;
  /** ms since the flood started. */
  t: number;
}

export interface FloodOptions {
  host: string;
  port: number;
  /** The local address(es) to connect from; several are used in turn. */
  from: string | string[];
  idle?: number;
  partial?: number;
  pending?: number;
  sustainMs?: number;
}

const FLOOD = String.raw`
import net from 'node:net';
const cfg = await new Promise((resolve) => {
  let b = '';
  const on = (c) => {
    b += c;
    const i = b.indexOf('\n');
    if (i >= 0) { process.stdin.off('data', on); resolve(JSON.parse(b.slice(0, i))); }
  };
  process.stdin.on('data', on);
});
const HELLO = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]);
const started = Date.now();
const want = [...Array(cfg.idle ?? 0).fill(false), ...Array(cfg.partial ?? 0).fill(true)];
const tally = { attempted: 0, connected: 0, open: 0, closed: 0, failed: 0, errors: {}, done: false, longLivedMin: null, longLivedMax: null, t: 0 };
const sockets = new Set();
let next = 0, pending = 0, stopping = false;
const sustaining = () => cfg.sustainMs && Date.now() - started < cfg.sustainMs;
const again = [];
function open(partial) {
  tally.attempted++; pending++;
  const from = Array.isArray(cfg.from) ? cfg.from[tally.attempted % cfg.from.length] : cfg.from;
  const s = net.connect({ host: cfg.host, port: cfg.port, localAddress: from });
  let connectedAt = 0;
  sockets.add(s);
  s.on('connect', () => {
    pending--; connectedAt = Date.now(); tally.connected++; tally.open++;
    if (partial) s.write(HELLO);
    pump();
  });
  s.on('error', (e) => { tally.errors[e.code] = (tally.errors[e.code] ?? 0) + 1; });
  s.on('data', () => {});
  s.on('close', (hadError) => {
    sockets.delete(s);
    if (connectedAt) {
      tally.open--; tally.closed++;
      const life = Date.now() - connectedAt;
      // Closed by the box's timeout (a clean close), not reset by its connection caps: on a busy
      // machine a reset can come seconds after the connect (the agent accepts late), so the time
      // alone cannot tell them apart.
      if (!hadError) {
        tally.longLivedMin = tally.longLivedMin === null ? life : Math.min(tally.longLivedMin, life);
        tally.longLivedMax = Math.max(tally.longLivedMax ?? 0, life);
      }
    } else { pending--; tally.failed++; }
    if (!stopping && sustaining()) again.push(partial);
    pump();
  });
}
function pump() {
  while (!stopping && pending < (cfg.pending ?? 200)) {
    if (next < want.length) open(want[next++]);
    else if (again.length && sustaining()) open(again.shift());
    else break;
  }
  if (next >= want.length && pending === 0 && !sustaining()) tally.done = true;
}
const report = () => { tally.t = Date.now() - started; process.stdout.write(JSON.stringify(tally) + '\n'); };
const timer = setInterval(() => { pump(); report(); }, 200);
pump();
report();
// Ends when the parent closes stdin (or dies).
process.stdin.on('data', () => {});
process.stdin.on('end', () => { stopping = true; clearInterval(timer); for (const s of sockets) s.destroy(); report(); process.exit(0); });
process.stdin.resume();
`;

const PROBE = String.raw`
import tls from 'node:tls';
let input = '';
for await (const c of process.stdin) input += c;
const cfg = JSON.parse(input);
const out = [];
for (let i = 0; i < cfg.count; i++) {
  out.push(await new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
    let buf = '';
    const s = tls.connect({ host: cfg.host, port: cfg.port, localAddress: cfg.from, rejectUnauthorized: false });
    const timer = setTimeout(() => { s.destroy(); resolve({ status: 0, ms: ms(), error: 'no answer within ' + cfg.timeoutMs + ' ms' }); }, cfg.timeoutMs);
    s.on('secureConnect', () => s.write('GET /api/version HTTP/1.1\r\nHost: box\r\nConnection: close\r\n\r\n'));
    s.on('data', (d) => (buf += d));
    s.on('error', (e) => (buf ||= 'ERR ' + e.code));
    s.on('close', () => { clearTimeout(timer); const m = /^HTTP\/1\.1 (\d{3})/.exec(buf); resolve({ status: m ? Number(m[1]) : 0, ms: ms(), error: m ? undefined : buf.slice(0, 200) }); });
  }));
  if (cfg.intervalMs) await new Promise((r) => setTimeout(r, cfg.intervalMs));
}
process.stdout.write(JSON.stringify(out) + '\n');
`;

const RENEGOTIATE = String.raw`
import tls from 'node:tls';
let input = '';
for await (const c of process.stdin) input += c;
const cfg = JSON.parse(input);
const result = await new Promise((resolve) => {
  const r = { protocol: null, renegotiateReturned: null, callbackError: null, socketError: null, closed: false, answered: false };
  const s = tls.connect({ host: cfg.host, port: cfg.port, localAddress: cfg.from, rejectUnauthorized: false, maxVersion: 'TLSv1.2' }, () => {
    r.protocol = s.getProtocol();
    r.renegotiateReturned = s.renegotiate({ rejectUnauthorized: false }, (err) => {
      r.callbackError = err ? err.code ?? err.message : null;
      // Renegotiated: the connection must still carry a request.
      if (err) s.destroy();
      else s.write('GET /api/version HTTP/1.1\r\nHost: box\r\nConnection: close\r\n\r\n');
    });
  });
  s.on('data', (d) => { if (/^HTTP\/1\.1 200/.test(String(d))) r.answered = true; });
  s.on('error', (e) => { r.socketError = e.code ?? e.message; s.destroy(); });
  const timer = setTimeout(() => s.destroy(), cfg.timeoutMs);
  s.on('close', () => { clearTimeout(timer); r.closed = true; resolve(r); });
});
process.stdout.write(JSON.stringify(result) + '\n');
`;

function spawnInNs(ns: string, script: string): ChildProcess {
  return spawn('ip', ['netns', 'exec', ns, 'sh', '-c', 'ulimit -n "$(ulimit -Hn)" && exec "$0" "$@"', process.execPath, '--input-type=module', '-e', script], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function runOnce<T>(ns: string, script: string, input: object, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const p = spawnInNs(ns, script);
    let out = '';
    let err = '';
    p.stdout!.on('data', (b: Buffer) => (out += b));
    p.stderr!.on('data', (b: Buffer) => (err += b));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop();
      if (code !== 0 || !last) return reject(new Error(`child in ${ns} exited ${code}: ${err}${out}`));
      resolve(JSON.parse(last) as T);
    });
    p.stdin!.end(JSON.stringify(input));
  });
}

export function widenPortRange(ns: string): void {
  const r = spawnSync('ip', ['netns', 'exec', ns, 'sysctl', '-qw', 'net.ipv4.ip_local_port_range=1024 65000'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sysctl in ${ns}: ${r.stderr}`);
}

export interface Flood {
  last(): FloodTally;
  until(pred: (t: FloodTally) => boolean, timeoutMs: number, what: string): Promise<FloodTally>;
  stop(): Promise<FloodTally>;
}

export async function startFlood(ns: string, opts: FloodOptions): Promise<Flood> {
  const p = spawnInNs(ns, FLOOD);
  let tally: FloodTally | undefined;
  let err = '';
  let buf = '';
  const waiters = new Set<() => void>();
  p.stdout!.on('data', (b: Buffer) => {
    buf += b;
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const l of lines) if (l) tally = JSON.parse(l) as FloodTally;
    for (const w of waiters) w();
  });
  p.stderr!.on('data', (b: Buffer) => (err += b));
  const exited = new Promise<void>((r) => p.once('close', () => r()));
  p.stdin!.write(JSON.stringify(opts) + '\n');
  const until = (pred: (t: FloodTally) => boolean, timeoutMs: number, what: string) =>
    new Promise<FloodTally>((resolve, reject) => {
      const check = () => {
        if (tally && pred(tally)) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(tally);
        } else if (p.exitCode !== null) {
          clearTimeout(timer);
          waiters.delete(check);
          reject(new Error(`flood child exited ${p.exitCode}: ${err}`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`flood: ${what} not reached within ${timeoutMs} ms; last tally ${JSON.stringify(tally)} ${err}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  await until(() => true, 20_000, 'a first tally');
  return {
    last: () => tally!,
    until,
    async stop() {
      p.stdin!.end();
      const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
      return tally!;
    },
  };
}

export interface ProbeResult {
  status: number;
  ms: number;
  error?: string;
}

export function probe(ns: string, opts: { host: string; port: number; from: string; count: number; intervalMs?: number; timeoutMs?: number }): Promise<ProbeResult[]> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return runOnce<ProbeResult[]>(ns, PROBE, { ...opts, timeoutMs }, opts.count * (timeoutMs + (opts.intervalMs ?? 0)) + 20_000);
}

export interface RenegotiationResult {
  protocol: string | null;
  renegotiateReturned: boolean | null;
  callbackError: string | null;
  socketError: string | null;
  closed: boolean;
  answered: boolean;
}

export function renegotiate(ns: string, opts: { host: string; port: number; from: string; timeoutMs?: number }): Promise<RenegotiationResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return runOnce<RenegotiationResult>(ns, RENEGOTIATE, { ...opts, timeoutMs }, timeoutMs + 20_000);
}
