// Test helper: hosts on the site network that a box's secrets could be sent to, and a browser's
// event stream, both run inside the laptop namespace of a Lan (test/kit/lan.ts).
//   startLanSinks(lan, addresses)  -> on each address (198.18.7.2 the attacker's, 198.18.7.3 the
//                                     site's own): an SMTP server that accepts any AUTH and records
//                                     it (user and password), and an HTTPS server that records every
//                                     request (enrollment calls answered 503). Both present one
//                                     certificate for every address (`cert`, also written to
//                                     `caFile`): trust it, and an attacker's server is as trusted as
//                                     the site's, as with a real certificate for the attacker's own
//                                     name. `heard` holds everything recorded, in order.
//   openLanEventStream(lan, port, cookie) -> GET /events from lan.laptop with the cookie; `lines`
//                                     holds what was heard ({status}, {event, data}, {end}).
// Both are child processes of `ip netns exec`; stop() ends them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from 'selfsigned';
import type { Lan } from './lan.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface Heard {
  kind: 'smtp_connect' | 'smtp_auth' | 'smtp_mail' | 'https';
  addr: string;
  user?: string;
  password?: string;
  method?: string;
  path?: string;
  body?: string;
  raw?: string;
  headers?: Record<string, string>;
}

export interface LanSinks {
  ports: Record<string, { smtp: number; https: number }>;
  cert: string;
  caFile: string;
  heard: Heard[];
  stop(): void;
}

interface Child {
  proc: ChildProcess;
  lines: Record<string, unknown>[];
  stop(): void;
}

function startChild(ns: string, script: string, input: unknown): Child {
  const proc = spawn('ip', ['netns', 'exec', ns, process.execPath, join(here, script)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  proc.stdout!.setEncoding('utf8');
  proc.stdout!.on('data', (d: string) => {
    partial += d;
    for (let at = partial.indexOf('\n'); at >= 0; at = partial.indexOf('\n')) {
      lines.push(JSON.parse(partial.slice(0, at)) as Record<string, unknown>);
      partial = partial.slice(at + 1);
    }
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
  proc.on('exit', (code) => {
    if (code) lines.push({ child_failed: `${script} exited ${code}: ${err}` });
  });
  proc.stdin!.end(JSON.stringify(input));
  process.once('exit', () => proc.kill('SIGKILL'));
  return { proc, lines, stop: () => void proc.kill('SIGKILL') };
}

async function waitFor<T>(what: string, f: () => T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startLanSinks(lan: Lan, addresses: string[]): Promise<LanSinks> {
  const pems = await generate([{ name: 'commonName', value: 'site mail and server' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: addresses.map((ip) => ({ type: 7, ip })) },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), 'pbx-sinks-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, pems.cert);
  const child = startChild(lan.laptopNs, 'lan-sinks-child.js', { cert: pems.cert, key: pems.private, addresses });
  const ready = await waitFor('the sinks to listen', () => {
    const failed = child.lines.find((l) => l.child_failed);
    if (failed) throw new Error(String(failed.child_failed));
    return child.lines.find((l) => l.ready)?.ready as LanSinks['ports'] | undefined;
  });
  return {
    ports: ready,
    cert: pems.cert,
    caFile,
    get heard() {
      return child.lines.filter((l) => l.kind) as unknown as Heard[];
    },
    stop() {
      child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface LanEventStream {
  /** {status}, {event, data}, {end}, in the order heard. */
  lines: Record<string, unknown>[];
  events(): { event: string; data: unknown }[];
  /** The reason the stream ended, once it has. */
  ended(): string | undefined;
  stop(): void;
}

export function openLanEventStream(lan: Lan, port: number, cookie: string): LanEventStream {
  const child = startChild(lan.laptopNs, 'lan-sse-child.js', { host: lan.boxAddress, port, from: lan.laptop, cookie });
  return {
    lines: child.lines,
    events: () => child.lines.filter((l) => l.event) as { event: string; data: unknown }[],
    ended: () => (child.lines.find((l) => l.end ?? l.child_failed)?.end as string | undefined) ?? (child.lines.find((l) => l.child_failed)?.child_failed as string | undefined),
    stop: child.stop,
  };
}
