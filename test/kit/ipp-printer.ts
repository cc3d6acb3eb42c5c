// Test helper: a printer's web page, served by CUPS's `ippeveprinter` (cups-ipp-utils), reachable
// on 127.0.0.1:<port> of the test's own network namespace.
//
//   ippPrinterUnavailable()  -> null when it can run here (root, ip netns, ippeveprinter, avahi), else why not
//   startIppPrinter(opts)    -> an IppPrinter: `port` on 127.0.0.1 answers what the printer serves
//   IppPrinter.stop()        -> ends its processes, deletes its namespace and directory
//
// ippeveprinter will not start without DNS-SD (an Avahi daemon on a D-Bus system bus), and Avahi
// announces on the network it runs in. So the printer, its own D-Bus and its own Avahi run in a
// network namespace of their own that has only a loopback interface (nothing is announced
// anywhere), with private /run/dbus and /run/avahi-daemon (unshare -m) and an /etc/hosts naming
// its host. A relay in that namespace listens on a Unix socket in the test's directory (Unix
// sockets do not belong to a network namespace) and one here on 127.0.0.1 forwards each
// connection to it, byte for byte.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface IppPrinter {
  /** Port on 127.0.0.1 where the printer's web page answers (plain HTTP). */
  port: number;
  make: string;
  model: string;
  queue: string;
  /** What the printer's processes printed so far. */
  log(): string;
  stop(): Promise<void>;
}

export function ippPrinterUnavailable(): string | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'needs root for ip netns';
  for (const bin of ['/usr/sbin/ippeveprinter', '/usr/sbin/avahi-daemon', '/usr/bin/dbus-daemon', '/usr/bin/unshare']) {
    if (!existsSync(bin)) return `${bin} is missing (apt-get install cups-ipp-utils avahi-daemon dbus util-linux)`;
  }
  const probe = `pbx-ipprobe-${process.pid}`;
  const r = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (r.status !== 0) return `ip netns unavailable: ${(r.stderr || '').trim()}`;
  spawnSync('ip', ['netns', 'del', probe]);
  return null;
}

let count = 0;
const namespaces = new Set<string>();
process.on('exit', () => {
  for (const ns of namespaces) killNamespace(ns);
});

function killNamespace(ns: string): void {
  const pids = spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  spawnSync('ip', ['netns', 'del', ns]);
  namespaces.delete(ns);
}

const RELAY = `
const net = require('node:net');
const [sock, port] = process.argv.slice(1);
net.createServer((c) => {
  const u = net.connect(Number(port), '127.0.0.1');
  c.pipe(u).pipe(c);
  c.on('error', () => u.destroy());
  u.on('error', () => c.destroy());
}).listen(sock);
`;

export async function startIppPrinter(opts: { make?: string; model?: string; queue?: string; readyTimeoutMs?: number } = {}): Promise<IppPrinter> {
  const make = opts.make ?? 'Acme';
  const model = opts.model ?? 'LaserWriter 9000';
  const queue = opts.queue ?? 'Front Desk';
  const ns = `pbx-ipp-${process.pid}x${count++}`;
  const dir = mkdtempSync(join(tmpdir(), 'pbx-ipp-'));
  const spool = join(dir, 'spool');
  mkdirSync(spool);
  writeFileSync(join(dir, 'hosts'), '127.0.0.1 localhost printer\n::1 localhost printer\n');
  writeFileSync(
    join(dir, 'avahi.conf'),
    '[server]\nhost-name=printer\nallow-interfaces=lo\nenable-dbus=yes\n[wide-area]\nenable-wide-area=no\n[publish]\npublish-workstation=no\n',
  );
  const sock = join(dir, 'relay.sock');

  killNamespace(ns);
  const add = spawnSync('ip', ['netns', 'add', ns], { encoding: 'utf8' });
  if (add.status !== 0) throw new Error(`ip netns add ${ns}: ${add.stderr}`);
  namespaces.add(ns);
  spawnSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);

  let output = '';
  const procs: ChildProcess[] = [];
  const run = (args: string[]) => {
    const p = spawn('ip', ['netns', 'exec', ns, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    p.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    procs.push(p);
    return p;
  };
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  run([
    'unshare', '-m', '--propagation', 'private', 'sh', '-c',
    [
      'mount -t tmpfs tmpfs /run/dbus',
      'mkdir -p /run/avahi-daemon && mount -t tmpfs tmpfs /run/avahi-daemon',
      `mount --bind ${q(join(dir, 'hosts'))} /etc/hosts`,
      'dbus-daemon --system --fork',
      `avahi-daemon -D --no-rlimits -f ${q(join(dir, 'avahi.conf'))}`,
      // Avahi answers on D-Bus a moment after it forks.
      'for i in $(seq 50); do [ -e /run/avahi-daemon/pid ] && break; sleep 0.1; done',
      `exec ippeveprinter -M ${q(make)} -m ${q(model)} -n printer -p 631 -d ${q(spool)} ${q(queue)}`,
    ].join(' && '),
  ]);
  run([process.execPath, '-e', RELAY, sock, '631']);

  const outside = net.createServer((c) => {
    const u = net.connect(sock);
    c.pipe(u).pipe(c);
    c.on('error', () => u.destroy());
    u.on('error', () => c.destroy());
  });
  await new Promise<void>((r) => outside.listen(0, '127.0.0.1', r));
  const port = (outside.address() as net.AddressInfo).port;

  const stop = async () => {
    outside.close();
    killNamespace(ns);
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  for (;;) {
    const status = await new Promise<number>((ok) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/', agent: false, timeout: 2000 }, (res) => {
        res.resume();
        res.on('end', () => ok(res.statusCode ?? 0));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => ok(0));
    });
    if (status === 200) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`ippeveprinter did not serve its page within the time allowed (last status ${status})\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, make, model, queue, log: () => output, stop };
}
