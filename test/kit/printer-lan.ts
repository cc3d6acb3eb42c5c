// Test helper: a site LAN of network namespaces with real printer software (shared/docs/lan-lab.md).
// A "box" namespace holds bridge br0 with the box's address 10.77.<n>.1/24; each printer host is
// its own namespace on the bridge (a veth pair created inside the box namespace, the peer moved
// straight into the host's: nothing in the root namespace), running its own D-Bus, its own Avahi
// and CUPS's ippeveprinter (an IPP Everywhere printer that announces itself by mDNS).
//
// API:
//   createPrinterLan(opts?)               -> PrinterLan: namespaces pbx-pb-<tag> (box) and, per host, pbx-ph<i>-<tag>.
//                                            The box has no default route unless opts.defaultRoute (then `default via
//                                            10.77.<n>.254 dev br0`: a router nobody answers for, so nothing leaves).
//   lan.addHost(name)                     -> a host namespace joined to br0 with 10.77.<n>.<10+i>/24 and fd77:<n>::<10+i>/64 (nodad).
//   lan.startPrinter(host, opts)          -> D-Bus + Avahi (host name `name`) + ippeveprinter on port 631 of every address
//                                            the host has (now or later: see site-lan.ts renumber); resolves when
//                                            ippeveprinter answers Get-Printer-Attributes (probed from the box namespace).
//                                            opts.announce false: ippeveprinter with DNS-SD off (`-r off`) and an Avahi
//                                            that publishes nothing and is on no LAN interface (ippeveprinter refuses to
//                                            start without a DNS-SD daemon): a printer that answers IPP, announces nothing.
//                                            opts.verbose: ippeveprinter -v, its log of each request in host.log.out.
//   killNamespace(ns, signal)             -> every process in the namespace sent `signal`; SIGKILL is a power cut (all
//                                            SIGSTOPped first, so none sends anything when another dies).
//   lan.stopPrinter(host)                 -> SIGTERM to ippeveprinter and Avahi (Avahi sends its goodbyes), others killed.
//   lan.destroy()                         -> every process in the namespaces killed, namespaces deleted (also on exit).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PrinterHost {
  ns: string;
  name: string;
  address: string;
  address6: string;
  dir: string;
  printer?: ChildProcess;
  /** What startPrinter was last given: a power cycle starts the same printer again. */
  printerOpts?: PrinterOptions;
  log: { out: string };
}

export interface PrinterOptions {
  make: string;
  model: string;
  queue: string;
  location?: string;
  startTimeoutMs?: number;
  announce?: boolean;
  /** ippeveprinter -v: each request it answers is in host.log.out (what a test counts reads with). */
  verbose?: boolean;
}

export interface PrinterLanOptions {
  /** Give the box namespace a default route (a real site's box has one); default false. */
  defaultRoute?: boolean;
}

export interface PrinterLan {
  tag: string;
  boxNs: string;
  boxAddress: string;
  subnet: string;
  /** 10.77.<n>: the LAN's first three octets. */
  prefix: string;
  hosts: PrinterHost[];
  addHost(name: string): PrinterHost;
  startPrinter(h: PrinterHost, opts: PrinterOptions): Promise<void>;
  stopPrinter(h: PrinterHost): Promise<void>;
  destroy(): void;
}

export function ip(...args: string[]): { ok: boolean; err: string; out: string } {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  return { ok: r.status === 0, err: (r.stderr || r.error?.message || '').trim(), out: r.stdout ?? '' };
}
export function must(...args: string[]): void {
  const r = ip(...args);
  if (!r.ok) throw new Error(`ip ${args.join(' ')}: ${r.err}`);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Why this machine cannot run the lab, or null. */
export function printerLanUnavailable(): string | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'needs root for ip netns';
  for (const bin of ['ippeveprinter', 'avahi-daemon', 'dbus-daemon', 'unshare']) {
    if (spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status !== 0) return `${bin} is not installed`;
  }
  return null;
}

const lans = new Set<PrinterLan>();
process.on('exit', () => {
  for (const l of lans) l.destroy();
});

export function killNamespace(ns: string, signal: NodeJS.Signals = 'SIGKILL'): void {
  const pids = ip('netns', 'pids', ns).out.split('\n').filter(Boolean).map(Number);
  const send = (sig: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        /* gone already */
      }
    }
  };
  // A power cut stops everything at once. Killed one by one, Avahi outlived ippeveprinter by a few
  // microseconds, saw its D-Bus client gone and sent goodbyes for its services: stopped first, no
  // process can act on another's death.
  if (signal === 'SIGKILL') send('SIGSTOP');
  send(signal);
}

/** Removes pbx-pb-/pbx-ph namespaces of test processes that no longer exist. */
function removeStale(): void {
  for (const line of ip('netns', 'list').out.split('\n')) {
    const m = /^(pbx-p(?:b|h\d+)-(\d+)(?:x\d+)?)(\s|$)/.exec(line);
    if (!m || Number(m[2]) === process.pid) continue;
    try {
      process.kill(Number(m[2]), 0);
    } catch {
      killNamespace(m[1]);
      ip('netns', 'del', m[1]);
    }
  }
}

let count = 0;
export function createPrinterLan(lanOpts: PrinterLanOptions = {}): PrinterLan {
  removeStale();
  const n = count++;
  const tag = n === 0 ? String(process.pid) : `${process.pid}x${n}`;
  const net = 77 + (n % 100);
  const boxNs = `pbx-pb-${tag}`;
  const lan: PrinterLan = {
    tag,
    boxNs,
    boxAddress: `10.77.${net}.1`,
    subnet: `10.77.${net}.0/24`,
    prefix: `10.77.${net}`,
    hosts: [],
    addHost(name) {
      const i = lan.hosts.length;
      const ns = `pbx-ph${i}-${tag}`;
      const vBox = `pv${i}b${tag}`.slice(0, 15);
      const h: PrinterHost = { ns, name, address: `10.77.${net}.${10 + i}`, address6: `fd77:${net}::${10 + i}`, dir: mkdtempSync(join(tmpdir(), `pbx-ph${i}-`)), log: { out: '' } };
      must('netns', 'add', ns);
      must('-n', boxNs, 'link', 'add', vBox, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
      must('-n', boxNs, 'link', 'set', vBox, 'master', 'br0');
      must('-n', boxNs, 'link', 'set', vBox, 'up');
      must('-n', ns, 'link', 'set', 'lo', 'up');
      must('-n', ns, 'addr', 'add', `${h.address}/24`, 'dev', 'eth0');
      must('-n', ns, 'addr', 'add', `${h.address6}/64`, 'dev', 'eth0', 'nodad');
      must('-n', ns, 'link', 'set', 'eth0', 'up');
      lan.hosts.push(h);
      return h;
    },
    async startPrinter(h, opts) {
      const conf = join(h.dir, 'avahi.conf');
      writeFileSync(conf, `[server]\nhost-name=${h.name}\nuse-ipv4=yes\nuse-ipv6=yes\nallow-interfaces=eth0\nratelimit-interval-usec=1000000\nratelimit-burst=1000\n[wide-area]\nenable-wide-area=no\n[publish]\npublish-workstation=no\npublish-hinfo=no\n`);
      h.printerOpts = opts;
      // ippeveprinter listens on what its -n name resolves to. The wildcard addresses make it answer on
      // whatever address the host has, as a real printer does when its address changes under it.
      writeFileSync(join(h.dir, 'hosts'), `127.0.0.1 localhost\n0.0.0.0 ${h.name}.local\n:: ${h.name}.local\n`);
      const spool = join(h.dir, 'spool');
      const announce = opts.announce ?? true;
      // Not announced: Avahi runs (for ippeveprinter's start) on no LAN interface, publishing nothing.
      if (!announce) writeFileSync(conf, `[server]\nhost-name=${h.name}\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces=lo\n[wide-area]\nenable-wide-area=no\n[publish]\ndisable-publishing=yes\n`);
      const script = [
        'set -e',
        'mount -t tmpfs tmpfs /run/dbus',
        'mkdir -p /run/avahi-daemon && mount -t tmpfs tmpfs /run/avahi-daemon',
        `mount --bind ${join(h.dir, 'hosts')} /etc/hosts`,
        'dbus-daemon --system --fork',
        `avahi-daemon -D --no-rlimits --no-chroot -f ${conf}`,
        // ippeveprinter refuses to start until Avahi answers on D-Bus.
        'for i in $(seq 1 100); do avahi-daemon -c && break; sleep 0.1; done',
        `mkdir -p ${spool}`,
        `exec ippeveprinter ${announce ? '' : '-r off'} ${opts.verbose ? '-v' : ''} -M "$MAKE" -m "$MODEL" ${opts.location ? '-l "$LOCATION"' : ''} -n ${h.name}.local -p 631 -d ${spool} "$QUEUE"`,
      ].join('\n');
      const child = spawn('ip', ['netns', 'exec', h.ns, 'unshare', '-m', '--propagation', 'private', 'sh', '-c', script], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, MAKE: opts.make, MODEL: opts.model, QUEUE: opts.queue, LOCATION: opts.location ?? '' },
      });
      h.printer = child;
      child.stdout!.on('data', (b: Buffer) => (h.log.out += b.toString()));
      child.stderr!.on('data', (b: Buffer) => (h.log.out += b.toString()));
      const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
      for (;;) {
        if (child.exitCode !== null) throw new Error(`ippeveprinter in ${h.ns} exited ${child.exitCode}:\n${h.log.out}`);
        const probe = spawnSync('ip', ['netns', 'exec', boxNs, 'ipptool', '-q', `ipp://${h.address}:631/ipp/print`, 'get-printer-attributes.test'], { timeout: 5000 });
        if (probe.status === 0) return;
        if (Date.now() > deadline) throw new Error(`ippeveprinter in ${h.ns} not answering:\n${h.log.out}`);
        await sleep(200);
      }
    },
    async stopPrinter(h) {
      const child = h.printer;
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      // Avahi says goodbye for what it still publishes when it is stopped.
      killNamespace(h.ns, 'SIGTERM');
      const deadline = Date.now() + 5000;
      while (ip('netns', 'pids', h.ns).out.trim() && Date.now() < deadline) await sleep(50);
      killNamespace(h.ns);
    },
    destroy() {
      for (const h of lan.hosts) {
        killNamespace(h.ns);
        ip('netns', 'del', h.ns);
        rmSync(h.dir, { recursive: true, force: true });
      }
      killNamespace(boxNs);
      ip('netns', 'del', boxNs);
      lans.delete(lan);
    },
  };
  lans.add(lan);
  must('netns', 'add', boxNs);
  must('-n', boxNs, 'link', 'set', 'lo', 'up');
  must('-n', boxNs, 'link', 'add', 'br0', 'type', 'bridge');
  must('-n', boxNs, 'addr', 'add', `${lan.boxAddress}/24`, 'dev', 'br0');
  must('-n', boxNs, 'link', 'set', 'br0', 'up');
  if (lanOpts.defaultRoute) must('-n', boxNs, 'route', 'add', 'default', 'via', `10.77.${net}.254`, 'dev', 'br0');
  return lan;
}
