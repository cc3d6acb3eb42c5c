// Test helper: PrintMaster's own central server (../shared/tools/printmaster-server/), the
// reference of server-protocol.md, started on loopback by its start.sh for a test.
//
//   printmasterUnavailable()      -> null when it can run here, else why not (the binary or libsqlite3 missing)
//   startPrintmaster()            -> a running server with a tenant and a join token (PmServer below)
//   startPrintmaster({ tls })     -> the same, serving HTTPS with the given certificate (its own `[tls] mode = "custom"`),
//                                    e.g. one a private CA issued: `tls.ca` is what the helper itself trusts
//   PmServer.api(method, path, body?, headers?) -> the server's admin API, signed in as its admin: {status, json, text}
//                                    (headers: more request headers, e.g. a browser's Origin)
//   PmServer.cookie               -> that admin session's Cookie header (for a browser)
//   PmServer.query(sql, ...args)  -> rows of the server's own SQLite database (read-only connection)
//   PmServer.stop() / .start()    -> SIGTERM the process, wait for it to end / start it again on the same port
//                                    and data (an outage); the tenant and token stay
//   PmServer.kill()               -> stop and remove its directory
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { freePort, repoRoot } from './agent.js';

// PRINTMASTER_SERVER_DIR: where it is when the checkout has no ../shared beside it (a git worktree elsewhere).
export const printmasterDir = process.env.PRINTMASTER_SERVER_DIR ?? resolve(repoRoot, '../shared/tools/printmaster-server');
const binary = join(printmasterDir, 'printmaster-server');

export function printmasterUnavailable(): string | null {
  if (!existsSync(binary)) return `${binary} is missing`;
  if (!['/usr/lib/x86_64-linux-gnu/libsqlite3.so.0', '/lib/x86_64-linux-gnu/libsqlite3.so.0'].some(existsSync)) return 'libsqlite3-0 is not installed';
  return null;
}

export interface PmServer {
  url: string;
  caFile: string;
  token: string;
  tenant: string;
  dir: string;
  port: number;
  /** The admin session's Cookie header ("name=value; ..."). */
  cookie: string;
  /** The server's admin API with the admin's cookie. */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any; text: string }>;
  /** Rows from the server's own database (a fresh read-only connection each call). */
  query<T = Record<string, unknown>>(sql: string, ...args: unknown[]): T[];
  /** The server's log so far. */
  log(): string;
  stop(): Promise<void>;
  start(): Promise<void>;
  kill(): Promise<void>;
}

const live = new Set<number>();
process.on('exit', () => {
  for (const pid of live) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
});

function runStart(dir: string, port: number): Promise<Record<string, string>> {
  return new Promise((ok, fail) => {
    execFile('bash', [join(printmasterDir, 'start.sh'), dir, String(port)], { timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return fail(new Error(`printmaster-server start.sh failed: ${stderr || err.message}`));
      const vars: Record<string, string> = {};
      for (const m of stdout.matchAll(/(PM_[A-Z_]+)=(\S*)/g)) vars[m[1]] = m[2];
      if (!vars.PM_PID || !vars.PM_TOKEN) return fail(new Error(`printmaster-server start.sh printed no token: ${stdout}`));
      ok(vars);
    });
  });
}

function request(url: string, ca: string, method: string, cookie: string, body?: unknown, extra: Record<string, string> = {}): Promise<{ status: number; json: any; text: string }> {
  return new Promise((ok, fail) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = https.request(
      url,
      {
        method,
        ca,
        checkServerIdentity: () => undefined,
        headers: { ...extra, cookie, ...(data ? { 'content-type': 'application/json', 'content-length': data.length } : {}) },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {}
          ok({ status: res.statusCode ?? 0, json, text });
        });
        // An answer cut off mid-way is a failure, not a promise left pending.
        res.on('close', () => res.complete || fail(new Error(`${method} ${url}: the answer was cut off`)));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timed out`)));
    req.on('error', fail);
    req.end(data);
  });
}

/** The admin session's cookie header, from the curl cookie jar start.sh wrote. */
function cookieFromJar(jar: string): string {
  return readFileSync(jar, 'utf8')
    .split('\n')
    .filter((l) => l && (!l.startsWith('#') || l.startsWith('#HttpOnly_')))
    .map((l) => l.split('\t'))
    .filter((f) => f.length >= 7)
    .map((f) => `${f[5]}=${f[6]}`)
    .join('; ');
}

export async function startPrintmaster(opts: { tls?: { cert: string; key: string; ca: string } } = {}): Promise<PmServer> {
  // start.sh signs in as soon as the port answers; on a loaded machine the server may not have
  // made its admin account by then ("no join token"): a second start, in a fresh directory, does.
  let dir = '';
  let port = 0;
  let vars: Record<string, string> | undefined;
  for (let attempt = 1; !vars; attempt++) {
    dir = mkdtempSync(join(tmpdir(), 'pbx-pm-'));
    port = await freePort();
    try {
      vars = await runStart(dir, port);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      if (attempt >= 2) throw err;
    }
  }
  let pid = Number(vars.PM_PID);
  live.add(pid);
  let ca = readFileSync(vars.PM_CA_FILE, 'utf8');
  const cookie = cookieFromJar(vars.PM_COOKIE_JAR);
  const base = vars.PM_URL;
  const dbFile = join(dir, 'data/server.db');

  const ended = (p: number) =>
    new Promise<void>((ok) => {
      const check = () => {
        try {
          process.kill(p, 0);
          setTimeout(check, 50);
        } catch {
          ok();
        }
      };
      check();
    });

  const server: PmServer = {
    url: base,
    caFile: vars.PM_CA_FILE,
    token: vars.PM_TOKEN,
    tenant: vars.PM_TENANT,
    dir,
    port,
    cookie,
    api: (method, path, body, headers) => request(base + path, ca, method, cookie, body, headers),
    query<T>(sql: string, ...args: unknown[]): T[] {
      const db = new Database(dbFile, { readonly: true, fileMustExist: true });
      try {
        db.pragma('busy_timeout = 5000');
        return db.prepare(sql).all(...args) as T[];
      } finally {
        db.close();
      }
    },
    log: () => readFileSync(join(dir, 'server.log'), 'utf8'),
    async stop() {
      if (!pid) return;
      try {
        process.kill(pid, 'SIGTERM');
      } catch {}
      await ended(pid);
      live.delete(pid);
      pid = 0;
    },
    async start() {
      if (pid) return;
      // The same config, data and certificate: start.sh's own command, without making a new tenant.
      const logFd = openSync(join(dir, 'server.log'), 'a');
      const child = spawn(binary, ['-config', join(dir, 'config.toml')], {
        cwd: dir,
        env: { ...process.env, HOME: join(dir, 'home') },
        stdio: ['ignore', logFd, logFd],
      });
      closeSync(logFd);
      pid = child.pid!;
      live.add(pid);
      for (;;) {
        const up = await request(`${base}/`, ca, 'GET', '').then(
          () => true,
          () => false,
        );
        if (up) return;
        if (child.exitCode !== null) throw new Error(`printmaster-server exited with ${child.exitCode}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async kill() {
      await server.stop();
      if (!process.env.KEEP_TEST_DIRS) rmSync(dir, { recursive: true, force: true });
    },
  };
  if (opts.tls) {
    // Its own custom-certificate mode: the same server, data and tenant, restarted on that certificate.
    await server.stop();
    const certPath = join(dir, 'custom.crt');
    const keyPath = join(dir, 'custom.key');
    writeFileSync(certPath, opts.tls.cert);
    writeFileSync(keyPath, opts.tls.key, { mode: 0o600 });
    const config = join(dir, 'config.toml');
    writeFileSync(config, readFileSync(config, 'utf8').replace(/mode = "self-signed"/, `mode = "custom"\n  cert_path = "${certPath}"\n  key_path = "${keyPath}"`));
    ca = opts.tls.ca;
    server.caFile = join(dir, 'custom-ca.crt');
    writeFileSync(server.caFile, opts.tls.ca);
    await server.start();
  }
  return server;
}
