// Test helper: "a laptop on the site network" for security tests. The agent (a real `serve`
// process) runs inside network namespace "box"; test clients run inside namespace "laptop"; a veth
// pair joins them. Addresses are RFC 2544 (198.18.7.0/24) and exist only inside these two
// namespaces: nothing is added to the root namespace (the veth pair is created inside "box").
//
// API:
//   lanUnavailable()                         -> null when this machine can run it (root, `ip netns add` works), else the
//                                               reason (use as `{ skip: reason }` and print it).
//   createLan()                              -> a Lan: namespaces pbx-box-<tag> / pbx-lap-<tag> (tag from process.pid),
//                                               box 198.18.7.1/24, laptops 198.18.7.2/24 (`laptop`) and 198.18.7.3/24
//                                               (`proxyLaptop`), lo up in both. Lan.destroy() deletes both namespaces
//                                               (also done on process exit; stale ones of dead pids are removed here).
//   startAgentInBox(lan, opts)               -> like startAgent (agent.ts) but `ip netns exec <boxNs> node cli.js serve`,
//                                               listening on 0.0.0.0 (unless opts.config is given); ready when GET
//                                               /api/version answers 200 on the box's loopback. Resolves a BoxAgent.
//                                               opts.nodeFlags and opts.env as startAgent's (the unit's: scripts/bench/
//                                               process.ts); opts.fdLimit runs it under `ulimit -n` (the unit's LimitNOFILE).
//   lanRequests(lan, from, port, reqs)       -> ONE child in the laptop namespace sends every request in order, each on a
//                                               fresh TLS connection (certificate not checked) to https://198.18.7.1:port,
//                                               bound to local address `from`. lanRequest(...) does one.
//   lanBurst(lan, port, reqs)                -> ONE child in the laptop namespace sends every request AT ONCE, each on its own
//                                               TLS connection from its own `from` (default lan.laptop); a request with
//                                               `afterWritten` starts when every request before it has been written,
//                                               `afterFirstWritten: n` when the list's first n have been. Each
//                                               response carries `ms`: from its connect to its answer (`tlsMs`: to the
//                                               end of its TLS handshake).
//   addLaptopAddresses(lan, addrs)           -> more addresses (198.18.7.x) for the laptop namespace: more attacking hosts.
// Requests are written by hand on a raw TLS socket: `METHOD <path> HTTP/1.1`, `path` exactly as given
// (e.g. '//settings', '/%2Fsettings', 'https://198.18.7.1:8443/settings'), then Host (unless given),
// Connection: close (unless given), the given headers in order, Content-Length when a body is given
// (0 for POST/PUT/PATCH/DELETE without body). Responses: header names lower-cased, set-cookie always
// an array, other repeated headers joined with ", "; chunked bodies decoded; body cut to 4 KiB (UTF-8).
// Every response must be one docs/openapi.yaml describes (agent.ts assertDescribed).
// 10 s per request; a failed request gives { status: 0, headers: {}, body: <error message> }.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { assertDescribed, cliPath, importNdjson, writeConfig, type AgentOptions, type TestConfig } from './agent.js';

export interface Lan {
  tag: string;
  boxNs: string;
  laptopNs: string;
  boxAddress: '198.18.7.1';
  laptop: '198.18.7.2';
  proxyLaptop: '198.18.7.3';
  destroy(): void;
}

export interface LanRequest {
  method?: string;
  /** Request target, sent raw exactly as given. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** lanBurst: the laptop address it is sent from. */
  from?: string;
  /** lanBurst: started once every request before it in the list has been written. */
  afterWritten?: boolean;
  /** lanBurst: started once the first n requests of the list have been written (an ordering, not a delay). */
  afterFirstWritten?: number;
  /** Bytes of the response body kept (default 4 KiB). */
  maxBody?: number;
}

export interface LanResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  /** The body was longer than the 4 KiB kept. */
  truncated?: boolean;
  /** Milliseconds from the connect to the answer. */
  ms?: number;
  /** Milliseconds from the connect to the end of the TLS handshake. */
  tlsMs?: number;
}

export interface BoxAgent {
  config: TestConfig;
  proc: ChildProcess;
  /** Requests from the box's own loopback (127.0.0.1 -> 127.0.0.1:https_port), e.g. the local admin. */
  request(req: LanRequest | string): Promise<LanResponse>;
  requests(reqs: LanRequest[]): Promise<LanResponse[]>;
  stdout(): string;
  stderr(): string;
  alive(): boolean;
  /** SIGTERM (SIGKILL after 5 s); removes the temp dir unless keepDir or KEEP_TEST_DIRS=1. */
  stop(opts?: { keepDir?: boolean }): Promise<number | null>;
}

// Only a guard against a hung request: on a loaded machine (the suite with two CPU hogs
// beside it) one sign-in's scrypt alone took over 10 s.
const REQUEST_TIMEOUT_MS = 60_000;
/** How long a starting agent may take before its first answer (the process exiting ends the wait at once). */
const READY_TIMEOUT_MS = 90_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ip(...args: string[]): { ok: boolean; out: string; err: string } {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: r.stdout ?? '', err: (r.stderr || r.error?.message || '').trim() };
}

export function lanUnavailable(): string | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'needs root for ip netns';
  const probe = `pbx-probe-${process.pid}`;
  const r = ip('netns', 'add', probe);
  if (!r.ok) return `ip netns unavailable: ${r.err}`;
  ip('netns', 'del', probe);
  return null;
}

const lans = new Set<Lan>();
const boxProcs = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of boxProcs) p.kill('SIGKILL');
  for (const l of lans) l.destroy();
});

/** Deletes pbx-box-/pbx-lap- namespaces left by processes that no longer exist (killed test runs). */
function removeStaleNamespaces(): void {
  for (const line of ip('netns', 'list').out.split('\n')) {
    const m = /^(pbx-(?:box|lap)-(\d+)(?:x\d+)?)(\s|$)/.exec(line);
    if (!m || Number(m[2]) === process.pid) continue;
    try {
      process.kill(Number(m[2]), 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') ip('netns', 'del', m[1]);
    }
  }
}

let lanCount = 0;
export function createLan(): Lan {
  removeStaleNamespaces();
  const n = lanCount++;
  const tag = n === 0 ? String(process.pid) : `${process.pid}x${n}`; // veth names: 4 + at most 11 chars
  const boxNs = `pbx-box-${tag}`;
  const laptopNs = `pbx-lap-${tag}`;
  const vBox = `pbxb${tag}`;
  const vLap = `pbxl${tag}`;
  const lan: Lan = {
    tag,
    boxNs,
    laptopNs,
    boxAddress: '198.18.7.1',
    laptop: '198.18.7.2',
    proxyLaptop: '198.18.7.3',
    destroy() {
      ip('netns', 'del', boxNs);
      ip('netns', 'del', laptopNs);
      lans.delete(lan);
    },
  };
  lan.destroy();
  lans.add(lan);
  const steps: string[][] = [
    ['netns', 'add', boxNs],
    ['netns', 'add', laptopNs],
    // Created inside the box namespace, peer moved straight into the laptop one: never in the root namespace.
    ['-n', boxNs, 'link', 'add', vBox, 'type', 'veth', 'peer', 'name', vLap, 'netns', laptopNs],
    ['-n', boxNs, 'link', 'set', 'lo', 'up'],
    ['-n', laptopNs, 'link', 'set', 'lo', 'up'],
    ['-n', boxNs, 'addr', 'add', '198.18.7.1/24', 'dev', vBox],
    ['-n', laptopNs, 'addr', 'add', '198.18.7.2/24', 'dev', vLap],
    ['-n', laptopNs, 'addr', 'add', '198.18.7.3/24', 'dev', vLap],
    // An IPv4 LAN: no IPv6 link-local address, which would settle (DAD) after the link is up and
    // tell a browser in the laptop namespace that its network changed (ERR_NETWORK_CHANGED).
    ['-n', boxNs, 'link', 'set', vBox, 'addrgenmode', 'none'],
    ['-n', laptopNs, 'link', 'set', vLap, 'addrgenmode', 'none'],
    ['-n', boxNs, 'link', 'set', vBox, 'up'],
    ['-n', laptopNs, 'link', 'set', vLap, 'up'],
  ];
  for (const s of steps) {
    const r = ip(...s);
    if (!r.ok) {
      lan.destroy();
      throw new Error(`ip ${s.join(' ')}: ${r.err}`);
    }
  }
  return lan;
}

// The client run inside a namespace. Reads {host, port, localAddress, timeoutMs, requests} on stdin,
// prints the LanResponse[] as one JSON line.
const CLIENT = String.raw`
import tls from 'node:tls';
let input = '';
for await (const c of process.stdin) input += c;
const cfg = JSON.parse(input);

// -> null (need more data), {res} or {error}
function parse(buf, closed, method, limit = 4096) {
  let start = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', start);
    if (end < 0) return closed ? { error: buf.length ? 'incomplete response head' : 'connection closed without a response' } : null;
    const lines = buf.subarray(start, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/\d\.\d (\d{3})/.exec(lines[0]);
    if (!m) return { error: 'bad status line: ' + JSON.stringify(lines[0].slice(0, 200)) };
    const status = Number(m[1]);
    start = end + 4;
    if (status >= 100 && status < 200 && status !== 101) continue; // interim response
    const headers = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':');
      if (i <= 0) continue;
      const k = l.slice(0, i).trim().toLowerCase();
      const v = l.slice(i + 1).trim();
      if (k === 'set-cookie') (headers[k] ??= []).push(v);
      else headers[k] = k in headers ? headers[k] + ', ' + v : v;
    }
    const rest = buf.subarray(start);
    const done = (body) => ({ res: { status, headers, body: body.subarray(0, limit).toString('utf8'), truncated: body.length > limit } });
    if (method === 'HEAD' || status === 204 || status === 304) return done(Buffer.alloc(0));
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts = [];
      let p = 0;
      for (;;) {
        const eol = rest.indexOf('\r\n', p);
        if (eol < 0) return closed ? done(Buffer.concat(parts)) : null;
        const size = parseInt(rest.subarray(p, eol).toString('latin1'), 16);
        if (!(size >= 0)) return { error: 'bad chunk size' };
        if (size === 0) return done(Buffer.concat(parts));
        if (rest.length < eol + 2 + size) {
          if (closed) parts.push(rest.subarray(eol + 2));
          return closed ? done(Buffer.concat(parts)) : null;
        }
        parts.push(rest.subarray(eol + 2, eol + 2 + size));
        p = eol + 2 + size + 2;
      }
    }
    const cl = headers['content-length'];
    if (cl !== undefined && rest.length >= Number(cl)) return done(rest.subarray(0, Number(cl)));
    return closed ? done(rest) : null;
  }
}

function one(r, onWritten = () => {}) {
  const t0 = performance.now();
  const method = r.method ?? 'GET';
  const given = new Set(Object.keys(r.headers ?? {}).map((h) => h.toLowerCase()));
  let head = method + ' ' + r.path + ' HTTP/1.1\r\n';
  if (!given.has('host')) head += 'Host: ' + cfg.host + ':' + cfg.port + '\r\n';
  if (!given.has('connection')) head += 'Connection: close\r\n';
  for (const [k, v] of Object.entries(r.headers ?? {})) head += k + ': ' + v + '\r\n';
  const body = Buffer.from(r.body ?? '', 'utf8');
  if (!given.has('content-length') && !given.has('transfer-encoding') &&
      (r.body !== undefined || ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method.toUpperCase()))) {
    head += 'Content-Length: ' + body.length + '\r\n';
  }
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let finished = false;
    let tlsMs;
    const sock = tls.connect({ host: cfg.host, port: cfg.port, localAddress: r.from ?? cfg.localAddress, rejectUnauthorized: false });
    const finish = (p) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      sock.destroy();
      onWritten();
      resolve({ ...(p.res ?? { status: 0, headers: {}, body: p.error }), ms: Math.round(performance.now() - t0), tlsMs });
    };
    const timer = setTimeout(() => finish({ error: 'request timed out after ' + cfg.timeoutMs + ' ms' }), cfg.timeoutMs);
    sock.on('secureConnect', () => {
      tlsMs = Math.round(performance.now() - t0);
      sock.write(Buffer.concat([Buffer.from(head + '\r\n', 'latin1'), body]), () => onWritten());
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const p = parse(buf, false, method.toUpperCase(), r.maxBody);
      if (p) finish(p);
    });
    sock.on('end', () => finish(parse(buf, true, method.toUpperCase(), r.maxBody)));
    sock.on('close', () => finish(parse(buf, true, method.toUpperCase(), r.maxBody)));
    sock.on('error', (e) => finish(buf.length ? parse(buf, true, method.toUpperCase(), r.maxBody) : { error: e.message }));
  });
}

const out = [];
if (cfg.concurrent) {
  const written = [];
  const pending = cfg.requests.map((r, i) => {
    let mark;
    written.push(new Promise((res) => (mark = res)));
    const start = r.afterWritten ? Promise.all(written.slice(0, i)) : r.afterFirstWritten ? Promise.all(written.slice(0, r.afterFirstWritten)) : Promise.resolve();
    return start.then(() => one(r, mark));
  });
  out.push(...(await Promise.all(pending)));
} else for (const r of cfg.requests) out.push(await one(r));
process.stdout.write(JSON.stringify(out) + '\n');
`;

function runClient(ns: string, host: string, localAddress: string | undefined, port: number, requests: LanRequest[], timeoutMs = REQUEST_TIMEOUT_MS, concurrent = false): Promise<LanResponse[]> {
  return new Promise((resolve, reject) => {
    const p = spawn('ip', ['netns', 'exec', ns, process.execPath, '--input-type=module', '-e', CLIENT], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout!.on('data', (b: Buffer) => (out += b.toString('utf8')));
    p.stderr!.on('data', (b: Buffer) => (err += b.toString('utf8')));
    const timer = setTimeout(() => p.kill('SIGKILL'), requests.length * (timeoutMs + 1000) + 15_000);
    p.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last) return reject(new Error(`lan client in ${ns} exited ${code ?? signal}: ${err}${out}`));
      const responses = JSON.parse(last) as LanResponse[];
      try {
        // Every answer the agent gave (status 0: no answer) must be one docs/openapi.yaml describes.
        responses.forEach((res, i) => res.status && assertDescribed(requests[i].method ?? 'GET', requests[i].path, res));
      } catch (e) {
        return reject(e);
      }
      resolve(responses);
    });
    p.stdin!.end(JSON.stringify({ host, port, localAddress, timeoutMs, requests, concurrent }));
  });
}

/** Sends the requests in order from `fromAddress` (lan.laptop or lan.proxyLaptop) to https://198.18.7.1:port. */
export function lanRequests(lan: Lan, fromAddress: string, port: number, requests: LanRequest[]): Promise<LanResponse[]> {
  return runClient(lan.laptopNs, lan.boxAddress, fromAddress, port, requests);
}

/** Sends the requests all at once (see the API above), each from its own `from` (default lan.laptop). */
export function lanBurst(lan: Lan, port: number, requests: LanRequest[]): Promise<LanResponse[]> {
  return runClient(lan.laptopNs, lan.boxAddress, lan.laptop, port, requests, REQUEST_TIMEOUT_MS, true);
}

/** Adds addresses (in 198.18.7.0/24, not .1 to .3) to the laptop namespace: more hosts on the site network. */
export function addLaptopAddresses(lan: Lan, addresses: string[]): void {
  for (const a of addresses) {
    if (!/^198\.18\.7\.(\d+)$/.test(a) || ['198.18.7.1', lan.laptop, lan.proxyLaptop].includes(a)) throw new Error(`not a free test address: ${a}`);
    const r = ip('-n', lan.laptopNs, 'addr', 'add', `${a}/24`, 'dev', `pbxl${lan.tag}`);
    if (!r.ok) throw new Error(`ip addr add ${a}: ${r.err}`);
  }
}

export async function lanRequest(lan: Lan, fromAddress: string, port: number, req: LanRequest | string): Promise<LanResponse> {
  return (await lanRequests(lan, fromAddress, port, [typeof req === 'string' ? { path: req } : req]))[0];
}

export async function startAgentInBox(lan: Pick<Lan, 'boxNs'>, opts: AgentOptions & { fdLimit?: number } = {}): Promise<BoxAgent> {
  const config = opts.config ?? (await writeConfig({ ...opts, listenAddress: '0.0.0.0' }));
  if (opts.seed !== undefined) {
    const r = await importNdjson(config.configPath, opts.seed);
    if (r.code !== 0) throw new Error(`seed import failed (exit ${r.code}):\n${r.stderr}`);
  }
  const log = { out: '', err: '' };
  // `ip netns exec` (and the shell's exec) exec in place: the child's pid is the agent's.
  const node = [process.execPath, ...(opts.nodeFlags ?? []), cliPath, 'serve', '--config', config.configPath];
  const command = opts.fdLimit ? ['sh', '-c', `ulimit -n ${Number(opts.fdLimit)} && exec "$0" "$@"`, ...node] : node;
  const proc = spawn('ip', ['netns', 'exec', lan.boxNs, ...command], {
    cwd: config.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env, PRINTBOX_CONFIG: '' },
  });
  const cap = 2 * 1024 * 1024;
  proc.stdout!.on('data', (b: Buffer) => log.out.length < cap && (log.out += b.toString('utf8')));
  proc.stderr!.on('data', (b: Buffer) => log.err.length < cap && (log.err += b.toString('utf8')));
  boxProcs.add(proc);
  proc.on('exit', () => boxProcs.delete(proc));
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  const requests = (reqs: LanRequest[]) => runClient(lan.boxNs, '127.0.0.1', '127.0.0.1', config.httpsPort, reqs);
  const stopProc = async (): Promise<number | null> => {
    if (!alive()) return proc.exitCode;
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
    const code = await exited;
    clearTimeout(t);
    return code;
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
  let last = '';
  for (;;) {
    if (!alive()) {
      throw new Error(`agent exited before it was ready (code ${proc.exitCode}, signal ${proc.signalCode})\n--- stderr ---\n${log.err}\n--- stdout (tail) ---\n${log.out.slice(-4000)}`);
    }
    const [r] = await runClient(lan.boxNs, '127.0.0.1', undefined, config.httpsPort, [{ path: '/api/version' }], 2000);
    if (r.status === 200) break;
    last = `${r.status}: ${r.body}`;
    if (Date.now() > deadline) {
      await stopProc();
      throw new Error(`agent in ${lan.boxNs} not ready (last: ${last})\n--- stderr ---\n${log.err}\n--- stdout (tail) ---\n${log.out.slice(-4000)}`);
    }
    await sleep(150);
  }

  return {
    config,
    proc,
    requests,
    async request(req) {
      return (await requests([typeof req === 'string' ? { path: req } : req]))[0];
    },
    stdout: () => log.out,
    stderr: () => log.err,
    alive,
    async stop(o = {}) {
      const code = await stopProc();
      if (!o.keepDir && process.env.KEEP_TEST_DIRS !== '1') rmSync(config.dir, { recursive: true, force: true });
      return code;
    },
  };
}
