// Test helper: run a real printbox-agent process over real HTTPS on ephemeral ports.
//
// API (kept small on purpose; other suites reuse it):
//   freePort()                       -> a free TCP port on 127.0.0.1 (bind port 0, read it, close).
//   writeConfig(opts)                -> a temp dir with agent.toml and a data dir (no process started).
//   runCli(args, {configPath, env, input}) -> run `node dist/src/cli.js ...` (input: its stdin), resolve {code, stdout, stderr}.
//   importNdjson(configPath, text)   -> write text to a file and run `import FILE --config`.
//   exportNdjson(configPath)         -> run `export --config`, resolve the parsed JSON lines (throws on exit != 0).
//   startAgent(opts)                 -> write the config (or reuse opts.config), import opts.seed if given, start `serve`, wait until
//                                       GET /api/version answers; resolves an Agent (see interface below).
//   httpsRequest / httpRequest       -> one request on a fresh connection: {status, headers, body, peerFingerprint}.
//                                       Every HTTPS response must be one docs/openapi.yaml describes (assertDescribed).
//   stopAll()                        -> SIGTERM every agent this process started (SIGKILL on process exit).
//   expectTextError(res, status, msg) / expectJson(res, status?) -> contract assertions (text/plain;
//                                       charset=utf-8 + nosniff + "msg\n"; application/json ending "\n").
//   certFingerprint(pem)             -> SHA-256 fingerprint, comparable with Res.peerFingerprint.
// Agent.request(path, opts) talks HTTPS, trusting the agent's certificate file as CA with host-name
// checks off; opts.http = true uses the plain HTTP listener instead. `path` is sent as-is (raw).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { responseProblem, type CheckedResponse } from './openapi.js';

/** Repository root (this file is at dist/test/kit/agent.js once built). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The built command line. */
export const cliPath = join(repoRoot, 'dist/src/cli.js');
/** The same command line as the one bundled file the box runs (scripts/bundle.mjs). */
export const bundlePath = join(repoRoot, 'dist/src/printbox-agent.js');

export interface AgentOptions {
  /** web.auth.mode, default "local". */
  authMode?: 'local' | 'password' | 'server' | 'disabled';
  /** web.auth.trusted_proxies, default the agent's (loopback). */
  trustedProxies?: string[];
  /** web.auth.allow_local_admin, default true. */
  allowLocalAdmin?: boolean;
  /** data_dir, default `data` in the test's own temporary directory. */
  dataDir?: string;
  /** web.listen_address, default "127.0.0.1". */
  listenAddress?: string;
  /** web.http_port: a number (0 disables), default a free port. */
  httpPort?: number;
  /** web.redirect_http_to_https, default true. */
  redirectHttpToHttps?: boolean;
  /** web.tls cert/key files; default "" (generated under <data_dir>/tls). */
  certFile?: string;
  keyFile?: string;
  /** server.url, default "". */
  serverUrl?: string;
  /** More keys of `[server]` (enrollment_token, ca_file, upload_batch_size ...), as TOML values. */
  server?: Record<string, string | number>;
  /** NDJSON imported (via the CLI) before the agent starts. Import failure throws. */
  seed?: string;
  /** Readiness timeout, default 90 s: only a guard (a start on a loaded machine took over 20 s); an agent that exits ends the wait at once. */
  readyTimeoutMs?: number;
  /** Reuse a config made by writeConfig (its data dir and ports); the other options are then ignored. */
  config?: TestConfig;
  /** Extra TOML appended verbatim at the top of the file (before any table). */
  extraTopLevelToml?: string;
  /** How many more times to choose new ports if another process took one first (default 2). */
  portRetries?: number;
  /** Node flags for the agent process (the unit's: scripts/bench/process.ts unitNodeFlags). */
  nodeFlags?: string[];
  /** More environment for the agent process. */
  env?: Record<string, string>;
  /** The script Node runs, default cliPath (bundlePath: the box's one file). */
  entry?: string;
  /** `[discovery] mdns_enabled`, default false: an agent in the root namespace never multicasts on the machine's LAN. */
  mdns?: boolean;
  /** `[discovery] wsd_enabled`, default false (the same reason). */
  wsd?: boolean;
}

export interface TestConfig {
  dir: string; // temp dir holding everything (removed by Agent.stop unless KEEP_TEST_DIRS=1)
  dataDir: string;
  configPath: string;
  httpsPort: number;
  httpPort: number; // 0 when disabled
  certPath: string; // the certificate the agent serves (configured or generated)
  keyPath: string;
}

export interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body's bytes, as sent (a gzipped body). */
  bytes: Buffer;
  /** SHA-256 fingerprint of the served certificate (HTTPS only). */
  peerFingerprint?: string;
}

export interface ReqOptions {
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Use the plain HTTP listener (Agent.request only). */
  http?: boolean;
  /** Skip certificate verification entirely. */
  insecure?: boolean;
  /** CA certificate (PEM) to trust; host-name checks are always off. */
  ca?: string | Buffer;
  host?: string;
  /** Local address to send from (another loopback address is another client). */
  localAddress?: string;
  timeoutMs?: number;
}

export interface Agent extends TestConfig {
  proc: ChildProcess;
  /** Request against this agent (HTTPS unless opts.http). */
  request(path: string, opts?: ReqOptions): Promise<Res>;
  /** Shortcut: GET with Accept: application/json. */
  get(path: string, headers?: Record<string, string>): Promise<Res>;
  /** Shortcut: POST of `body` as JSON, with Accept: application/json. */
  post(path: string, body: unknown): Promise<Res>;
  stdout(): string;
  stderr(): string;
  alive(): boolean;
  /** SIGTERM (SIGKILL after 5 s); removes the temp dir unless keepDir. Resolves the exit code. */
  stop(opts?: { keepDir?: boolean; signal?: NodeJS.Signals }): Promise<number | null>;
  /** Stop (keeping the data dir) and start again with the same config and ports. */
  restart(): Promise<void>;
}

/** An agent's `get` and `post` (JSON in and out), made from its `request`: one definition for every kind of agent. */
export function jsonShortcuts(request: Agent['request']): Pick<Agent, 'get' | 'post'> {
  return {
    get: (path, headers = {}) => request(path, { headers: { Accept: 'application/json', ...headers } }),
    post: (path, body) => request(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) }),
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Ports this process has handed out. The kernel may give the same ephemeral port to two binds in a
// row once the first is closed, so two listeners of one agent could otherwise be told the same port.
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await bindEphemeral();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

function bindEphemeral(): Promise<number> {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => res(port));
    });
  });
}

function tomlString(s: string): string {
  return JSON.stringify(s); // a JSON string is a valid TOML basic string
}

export async function writeConfig(opts: AgentOptions = {}): Promise<TestConfig> {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-test-'));
  const dataDir = opts.dataDir ?? join(dir, 'data');
  const configPath = join(dir, 'agent.toml');
  const httpsPort = await freePort();
  const httpPort = opts.httpPort ?? (await freePort());
  const lines = [
    opts.extraTopLevelToml ?? '',
    `data_dir = ${tomlString(dataDir)}`,
    '[web]',
    `listen_address = ${tomlString(opts.listenAddress ?? '127.0.0.1')}`,
    `https_port = ${httpsPort}`,
    `http_port = ${httpPort}`,
    `redirect_http_to_https = ${opts.redirectHttpToHttps ?? true}`,
    '[web.tls]',
    `cert_file = ${tomlString(opts.certFile ?? '')}`,
    `key_file = ${tomlString(opts.keyFile ?? '')}`,
    '[web.auth]',
    `mode = ${tomlString(opts.authMode ?? 'local')}`,
    `allow_local_admin = ${opts.allowLocalAdmin ?? true}`,
    ...(opts.trustedProxies ? [`trusted_proxies = ${JSON.stringify(opts.trustedProxies)}`] : []),
    '[server]',
    `url = ${tomlString(opts.serverUrl ?? '')}`,
    ...Object.entries(opts.server ?? {}).map(([k, v]) => `${k} = ${typeof v === 'number' ? v : tomlString(v)}`),
    '[discovery]',
    `mdns_enabled = ${opts.mdns ?? false}`,
    `wsd_enabled = ${opts.wsd ?? false}`,
    '',
  ];
  writeFileSync(configPath, lines.join('\n'));
  return {
    dir,
    dataDir,
    configPath,
    httpsPort,
    httpPort,
    certPath: opts.certFile || join(dataDir, 'tls/agent.crt'),
    keyPath: opts.keyFile || join(dataDir, 'tls/agent.key'),
  };
}

export function runCli(
  args: string[],
  opts: { configPath?: string; timeoutMs?: number; cwd?: string; env?: Record<string, string>; input?: string; entry?: string } = {},
): Promise<CliResult> {
  const full = [opts.entry ?? cliPath, ...args];
  if (opts.configPath) full.push('--config', opts.configPath);
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, full, {
      cwd: opts.cwd ?? tmpdir(),
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, PRINTBOX_CONFIG: '', ...(opts.env ?? {}) },
    });
    if (opts.input !== undefined) p.stdin!.end(opts.input);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    p.stdout!.on('data', (b: Buffer) => out.push(b));
    p.stderr!.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
    }, opts.timeoutMs ?? 30_000);
    p.on('error', (e) => {
      clearTimeout(timer);
      rej(e);
    });
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      res({
        code: code ?? (signal ? -1 : null),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
  });
}

let seedCounter = 0;
export async function importNdjson(configPath: string, ndjson: string): Promise<CliResult> {
  const file = join(dirname(configPath), `seed-${process.pid}-${++seedCounter}.ndjson`);
  writeFileSync(file, ndjson);
  return runCli(['import', file], { configPath });
}

/** Runs `export` and parses each non-empty line as JSON. */
export async function exportNdjson(configPath: string): Promise<Record<string, unknown>[]> {
  const r = await runCli(['export'], { configPath });
  if (r.code !== 0) throw new Error(`export exited ${r.code}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function doRequest(
  mod: typeof http | typeof https,
  port: number,
  path: string,
  opts: ReqOptions,
  tlsOpts: https.RequestOptions = {},
): Promise<Res> {
  return new Promise((res, rej) => {
    const headers: Record<string, string | string[]> = { ...(opts.headers ?? {}) };
    if (opts.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) {
      headers['Content-Length'] = String(Buffer.byteLength(opts.body));
    }
    const req = (mod as typeof https).request(
      {
        host: opts.host ?? '127.0.0.1',
        localAddress: opts.localAddress,
        port,
        path,
        method: opts.method ?? 'GET',
        headers,
        agent: false,
        insecureHTTPParser: false,
        maxHeaderSize: 1024 * 1024,
        ...tlsOpts,
      },
      (r) => {
        const chunks: Buffer[] = [];
        let fp: string | undefined;
        const sock = r.socket as TLSSocket;
        if (typeof sock.getPeerCertificate === 'function') {
          fp = sock.getPeerCertificate()?.fingerprint256;
        }
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => {
          const bytes = Buffer.concat(chunks);
          res({ status: r.statusCode ?? 0, headers: r.headers, body: bytes.toString('utf8'), bytes, peerFingerprint: fp });
        });
        r.on('error', rej);
      },
    );
    req.setTimeout(opts.timeoutMs ?? 15_000, () => req.destroy(new Error(`request timed out: ${opts.method ?? 'GET'} ${path}`)));
    req.on('error', rej);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** An HTTPS request to an agent; the response must be one docs/openapi.yaml describes (kit/openapi.ts). */
export async function httpsRequest(port: number, path: string, opts: ReqOptions = {}): Promise<Res> {
  const tlsOpts: https.RequestOptions = opts.insecure || !opts.ca
    ? { rejectUnauthorized: false }
    : { ca: opts.ca, rejectUnauthorized: true, checkServerIdentity: () => undefined };
  const res = await doRequest(https, port, path, opts, tlsOpts);
  assertDescribed(opts.method ?? 'GET', path, res);
  return res;
}

/** Fails (throws) when docs/openapi.yaml does not describe the response. */
export function assertDescribed(method: string, path: string, res: CheckedResponse): void {
  // An absolute-form target (`https://host/path`) is routed by its path.
  const problem = responseProblem(method, path.replace(/^https?:\/\/[^/?#]*/i, '') || '/', res);
  if (problem) throw new assert.AssertionError({ message: `response not described by docs/openapi.yaml: ${problem}\n${res.body.slice(0, 300)}` });
}

export function httpRequest(port: number, path: string, opts: ReqOptions = {}): Promise<Res> {
  return doRequest(http, port, path, opts);
}

/** SHA-256 fingerprint (colon hex, upper case, as Node prints it) of a PEM certificate. */
export function certFingerprint(pem: string | Buffer): string {
  return new X509Certificate(pem).fingerprint256;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of running) {
    try {
      p.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

export async function stopAll(): Promise<void> {
  await Promise.all(
    [...running].map(
      (p) =>
        new Promise<void>((r) => {
          p.once('exit', () => r());
          p.kill('SIGTERM');
        }),
    ),
  );
}

function spawnServe(cfg: TestConfig, log: { out: string; err: string }, opts: Pick<AgentOptions, 'nodeFlags' | 'env' | 'entry'> = {}): ChildProcess {
  const p = spawn(process.execPath, [...(opts.nodeFlags ?? []), opts.entry ?? cliPath, 'serve', '--config', cfg.configPath], {
    cwd: cfg.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env, PRINTBOX_CONFIG: '' },
  });
  const cap = 2 * 1024 * 1024;
  p.stdout!.on('data', (b: Buffer) => {
    if (log.out.length < cap) log.out += b.toString('utf8');
  });
  p.stderr!.on('data', (b: Buffer) => {
    if (log.err.length < cap) log.err += b.toString('utf8');
  });
  running.add(p);
  p.on('exit', () => running.delete(p));
  return p;
}

async function waitReady(cfg: TestConfig, p: ChildProcess, log: { out: string; err: string }, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let lastErr = '';
  while (Date.now() < deadline) {
    if (p.exitCode !== null || p.signalCode !== null) {
      throw new Error(
        `agent exited before it was ready (code ${p.exitCode}, signal ${p.signalCode})\n--- stderr ---\n${log.err}\n--- stdout (tail) ---\n${log.out.slice(-4000)}`,
      );
    }
    try {
      const r = await httpsRequest(cfg.httpsPort, '/api/version', { insecure: true, timeoutMs: 2000 });
      // Ready when this agent answers: another test process's agent that took the port first (this
      // one then exits, "already in use", and startAgent chooses again) serves another certificate
      // than the one this agent wrote. (An agent on a card that takes no writes has no file: its
      // certificate lives in memory.)
      if (r.status === 200 && (!existsSync(cfg.certPath) || r.peerFingerprint === certFingerprint(readFileSync(cfg.certPath)))) return;
      lastErr = r.status === 200 ? 'another server (its own certificate) answers on this port' : `status ${r.status}: ${r.body}`;
    } catch (e) {
      lastErr = (e as Error).message;
    }
    await sleep(100);
  }
  p.kill('SIGKILL');
  throw new Error(
    `agent not ready within ${timeoutMs} ms (last: ${lastErr})\n--- stderr ---\n${log.err}\n--- stdout (tail) ---\n${log.out.slice(-4000)}`,
  );
}

export async function startAgent(opts: AgentOptions = {}): Promise<Agent> {
  const cfg = opts.config ?? (await writeConfig(opts));
  if (opts.seed !== undefined) {
    const r = await importNdjson(cfg.configPath, opts.seed);
    if (r.code !== 0) throw new Error(`seed import failed (exit ${r.code}):\n${r.stderr}`);
  }
  const timeout = opts.readyTimeoutMs ?? 90_000;
  const log = { out: '', err: '' };
  let proc = spawnServe(cfg, log, opts);
  try {
    await waitReady(cfg, proc, log, timeout);
  } catch (e) {
    // A port chosen here can be taken by another test process between freePort() and the agent's
    // bind: choose again, with a fresh config, when the agent said exactly that.
    const portTaken = !opts.config && log.err.includes('already in use') && (opts.portRetries ?? 2) > 0;
    if (!portTaken) throw e;
    rmSync(cfg.dir, { recursive: true, force: true });
    return startAgent({ ...opts, portRetries: (opts.portRetries ?? 2) - 1 });
  }

  const stopProc = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    const p = proc;
    if (p.exitCode !== null || p.signalCode !== null) return p.exitCode;
    const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
    p.kill(signal);
    const t = setTimeout(() => p.kill('SIGKILL'), 5000);
    const code = await exited;
    clearTimeout(t);
    return code;
  };

  const agent: Agent = {
    ...cfg,
    get proc() {
      return proc;
    },
    request(path, o = {}) {
      if (o.http) {
        if (!cfg.httpPort) throw new Error('HTTP listener disabled in this config');
        return httpRequest(cfg.httpPort, path, o);
      }
      if (o.insecure || o.ca) return httpsRequest(cfg.httpsPort, path, o);
      const ca = existsSync(cfg.certPath) ? readFileSync(cfg.certPath) : undefined;
      return httpsRequest(cfg.httpsPort, path, { ...o, ca, insecure: !ca });
    },
    ...jsonShortcuts((path, o) => agent.request(path, o)),
    stdout: () => log.out,
    stderr: () => log.err,
    alive: () => proc.exitCode === null && proc.signalCode === null,
    async stop(o = {}) {
      const code = await stopProc(o.signal);
      if (!o.keepDir && process.env.KEEP_TEST_DIRS !== '1') rmSync(cfg.dir, { recursive: true, force: true });
      return code;
    },
    async restart() {
      await stopProc();
      proc = spawnServe(cfg, log, opts);
      await waitReady(cfg, proc, log, timeout);
    },
  };
  return agent;
}

/** Asserts nothing; returns a readable one-line summary of a response for assertion messages. */
export function describe(r: Res): string {
  return `${r.status} ${JSON.stringify(r.headers['content-type'])} ${JSON.stringify(r.body.slice(0, 300))}`;
}

// ---- assertions shared by the suites ----
/** Asserts a contract error: status, `text/plain; charset=utf-8`, nosniff, body = message + "\n". */
export function expectTextError(r: Res, status: number, message: string): void {
  assert.equal(r.status, status, `status: ${describe(r)}`);
  assert.equal(r.body, message + '\n', `body: ${describe(r)}`);
  assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8', `content-type: ${describe(r)}`);
  assert.equal(r.headers['x-content-type-options'], 'nosniff', `nosniff: ${describe(r)}`);
}

/** Asserts a 200 (or given status) JSON response ending in a newline; returns the parsed value. */
export function expectJson(r: Res, status = 200): unknown {
  assert.equal(r.status, status, `status: ${describe(r)}`);
  assert.match(String(r.headers['content-type']), /^application\/json\b/, `content-type: ${describe(r)}`);
  assert.ok(r.body.endsWith('\n'), `JSON body must end with a newline: ${describe(r)}`);
  return JSON.parse(r.body);
}
