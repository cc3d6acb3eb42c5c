// Test helper: TCP relays between the test's own network namespace and namespaces the test
// created (test/kit/lan.ts), byte for byte. Each relay is two halves joined by a Unix socket in
// a temporary directory: Unix sockets live on the file system, not in a network namespace, so
// no address or route is ever added to the test's namespace.
//
//   relayInto(ns, host, port, targetPort)   -> listens on host:port INSIDE ns; each connection is carried to
//                                              127.0.0.1:targetPort of the test (a printer, a webhook receiver or
//                                              a mail server of the test's, seen by the box at a LAN address).
//   relayOutOf(ns, host, port)              -> listens on 127.0.0.1:<free port> of the test; each connection is
//                                              carried to host:port inside ns (the agent in the box namespace).
//   startAgentInLan(lan, opts)              -> the real agent in the box namespace (startAgentInBox) as an Agent
//                                              (kit/agent.ts): httpsPort is a relayOutOf port on the test's
//                                              127.0.0.1 that reaches the box's 127.0.0.1:https_port (so requests
//                                              come from the box's loopback: the local administrator, as with
//                                              startAgent); opts.expose: ports of the test's 127.0.0.1 also served
//                                              on the box's 127.0.0.1 (the same numbers: a mail or central server).
// Everything started here is ended by Relay.stop / Agent.stop and on process exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpRequest, httpsRequest, jsonShortcuts, type Agent, type AgentOptions } from './agent.js';
import { startAgentInBox, type BoxAgent, type Lan } from './lan.js';

export interface Relay {
  /** The listening port (for relayOutOf: on the test's 127.0.0.1). */
  port: number;
  stop(): void;
}

// argv: mode ('tcp-to-unix' | 'unix-to-tcp'), socket path, host, port. Prints "ready" once listening.
const HALF = String.raw`
const net = require('node:net');
const [mode, sock, host, port] = process.argv.slice(1);
const pipe = (c, u) => {
  c.pipe(u).pipe(c);
  c.on('error', () => u.destroy());
  u.on('error', () => c.destroy());
  c.on('close', () => u.destroy());
  u.on('close', () => c.destroy());
};
const server = net.createServer((c) => pipe(c, mode === 'tcp-to-unix' ? net.connect(sock) : net.connect(Number(port), host)));
const ready = () => console.log('ready');
if (mode === 'tcp-to-unix') server.listen(Number(port), host, ready);
else server.listen(sock, ready);
`;

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

function pipe(c: net.Socket, u: net.Socket): void {
  c.pipe(u).pipe(c);
  c.on('error', () => u.destroy());
  u.on('error', () => c.destroy());
  c.on('close', () => u.destroy());
  u.on('close', () => c.destroy());
}

function startHalf(ns: string, args: string[]): Promise<ChildProcess> {
  const p = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', HALF, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(p);
  p.on('exit', () => children.delete(p));
  let err = '';
  p.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve, reject) => {
    p.stdout!.on('data', (b: Buffer) => b.toString().includes('ready') && resolve(p));
    p.once('exit', (code) => reject(new Error(`relay in ${ns} (${args.join(' ')}) exited ${code}: ${err}`)));
  });
}

export async function relayInto(ns: string, host: string, port: number, targetPort: number): Promise<Relay> {
  const dir = mkdtempSync(join(tmpdir(), 'pbx-relay-'));
  const sock = join(dir, 'r.sock');
  const here = net.createServer((c) => pipe(c, net.connect(targetPort, '127.0.0.1')));
  await new Promise<void>((r) => here.listen(sock, r));
  const there = await startHalf(ns, ['tcp-to-unix', sock, host, String(port)]);
  return {
    port,
    stop() {
      there.kill('SIGKILL');
      here.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function relayOutOf(ns: string, host: string, port: number): Promise<Relay> {
  const dir = mkdtempSync(join(tmpdir(), 'pbx-relay-'));
  const sock = join(dir, 'r.sock');
  const there = await startHalf(ns, ['unix-to-tcp', sock, host, String(port)]);
  const here = net.createServer((c) => pipe(c, net.connect(sock)));
  await new Promise<void>((r) => here.listen(0, '127.0.0.1', r));
  return {
    port: (here.address() as net.AddressInfo).port,
    stop() {
      here.close();
      there.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface LanAgent extends Agent {
  /** The agent as lan.ts starts it (its real ports are box.config). */
  box(): BoxAgent;
}

export async function startAgentInLan(lan: Lan, opts: AgentOptions & { expose?: number[] } = {}): Promise<LanAgent> {
  const exposed: Relay[] = [];
  for (const p of opts.expose ?? []) exposed.push(await relayInto(lan.boxNs, '127.0.0.1', p, p));
  let box = await startAgentInBox(lan, opts);
  const cfg = box.config;
  const https = await relayOutOf(lan.boxNs, '127.0.0.1', cfg.httpsPort);
  const http = cfg.httpPort ? await relayOutOf(lan.boxNs, '127.0.0.1', cfg.httpPort) : undefined;
  const agent: LanAgent = {
    ...cfg,
    httpsPort: https.port,
    httpPort: http?.port ?? 0,
    get proc() {
      return box.proc;
    },
    box: () => box,
    request(path, o = {}) {
      if (o.http) {
        if (!http) throw new Error('HTTP listener disabled in this config');
        return httpRequest(http.port, path, o);
      }
      if (o.insecure || o.ca) return httpsRequest(https.port, path, o);
      const ca = existsSync(cfg.certPath) ? readFileSync(cfg.certPath) : undefined;
      return httpsRequest(https.port, path, { ...o, ca, insecure: !ca });
    },
    ...jsonShortcuts((path, o) => agent.request(path, o)),
    stdout: () => box.stdout(),
    stderr: () => box.stderr(),
    alive: () => box.alive(),
    async stop(o = {}) {
      if (o.signal && box.alive()) box.proc.kill(o.signal);
      const code = await box.stop(o);
      https.stop();
      http?.stop();
      for (const r of exposed) r.stop();
      return code;
    },
    async restart() {
      await box.stop({ keepDir: true });
      box = await startAgentInBox(lan, { ...opts, config: cfg, seed: undefined });
    },
  };
  return agent;
}
