// Test helper: a realistic site LAN (printer-lan.ts) with the other machines a site has, each the real
// Debian daemon in its own host namespace, none of them a printer, and a CUPS server sharing a queue
// for a printer. Also what happens to printers on a real LAN: a new address under running software
// (DHCP), and a power cut followed by a new address.
//
// API (a SiteLan is a PrinterLan with):
//   createSiteLan(opts?)                    -> createPrinterLan(opts) plus the methods below.
//   siteLanUnavailable()                    -> why this machine cannot run it (installs the packages first), or null.
//   lan.startSnmpd(host)                    -> Net-SNMP snmpd, community `public`, UDP 161 of the host's address only:
//                                              a Linux server (sysDescr "Linux ...", no Printer-MIB). Ready when it answers.
//   lan.startWsdd(host)                     -> wsdd on the host's eth0 (IPv4): a Windows-style computer (pub:Computer)
//                                              announcing itself by WS-Discovery. Ready when its HTTP port listens.
//   lan.startAvahiServices(host, types)     -> the host's own D-Bus + Avahi publishing only `types` (static service files
//                                              in a private /etc/avahi/services; `_workstation._tcp` is Avahi's own
//                                              publish-workstation=yes). Ready when the box sees the last one announced.
//   lan.startHttpOnly(host)                 -> a node HTTP server on TCP 80 of the host's address, nothing else.
//   lan.startCupsServer(host, opts)         -> D-Bus + Avahi + cupsd (own config/spool/cache/log dirs in host.dir, Listen
//                                              <address>:631, Browsing On, dnssd, DefaultShared Yes, Debian's default
//                                              policy with the admin operations open to the LAN), then `lpadmin -h
//                                              <address>:631 -p queue -E -v deviceUri -m everywhere -o printer-is-shared=true`
//                                              (-m raw when `everywhere` fails). Resolves { uri, model } when the queue
//                                              answers Get-Printer-Attributes from the box.
//   lan.renumber(host, lastOctet)           -> the host's IPv4 address changed on its veth while its software runs (nothing
//                                              restarted; Avahi re-announces). host.address is the new one.
//   lan.powerCycle(host, { newLastOctet })  -> every process of the host SIGKILLed (a power cut: no goodbye), the address
//                                              changed when asked, the printer started again with the same options (same
//                                              printer-uuid: ippeveprinter derives it from -n name, port and queue name).
//                                              Same veth: the MAC does not change.
//   lan.printerUuid(host, path?)            -> the printer-uuid (without urn:uuid:) that ipptool reads from the box.
//   lan.ippAttributes(host, path)           -> `ipptool -tv` Get-Printer-Attributes from the box: { name: value text }.
//   lan.browse(serviceType, ms?)            -> a one-shot mDNS PTR query from the box's namespace: the records heard.
//   lan.watchMdns()                         -> a passive mDNS listener in the box's namespace (it sends nothing): counts
//                                              the responses that carry a record of a given name. Avahi announces a new
//                                              service three times (about 1 s, then 2 s apart) and then stays silent until
//                                              asked: with no query on the LAN, the third announcement heard means the
//                                              printer has finished announcing.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { createPrinterLan, ip, killNamespace, must, printerLanUnavailable, type PrinterHost, type PrinterLan, type PrinterLanOptions } from './printer-lan.js';
import { repoRoot } from './snmpsim.js';

export interface MdnsRecord {
  type: string;
  name: string;
  /** TXT: the strings; SRV: {port, target}; A/AAAA/PTR: the text. */
  data: unknown;
}

export interface CupsQueue {
  /** ipp://<address>:631/printers/<queue> */
  uri: string;
  /** The lpadmin -m that worked: `everywhere`, or `raw` when everywhere failed. */
  model: 'everywhere' | 'raw';
}

export interface SiteLan extends PrinterLan {
  startSnmpd(h: PrinterHost): Promise<void>;
  startWsdd(h: PrinterHost): Promise<void>;
  startAvahiServices(h: PrinterHost, types: string[]): Promise<void>;
  startHttpOnly(h: PrinterHost): Promise<void>;
  startCupsServer(h: PrinterHost, opts: { queue: string; deviceUri: string }): Promise<CupsQueue>;
  renumber(h: PrinterHost, lastOctet: number): void;
  powerCycle(h: PrinterHost, opts?: { newLastOctet?: number }): Promise<void>;
  printerUuid(h: PrinterHost, path?: string): string;
  ippAttributes(h: PrinterHost, path: string): Record<string, string>;
  browse(serviceType: string, ms?: number): Promise<MdnsRecord[]>;
  watchMdns(): Promise<MdnsWatch>;
}

export interface MdnsWatch {
  /** Responses heard so far that carry a record named `name` (e.g. `Queue._ipp._tcp.local`). */
  count(name: string): number;
  /** Waits until `n` such responses were heard (guard `ms`). */
  until(name: string, n: number, ms?: number): Promise<void>;
  stop(): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const has = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
const SITE_BINARIES = ['snmpd', 'snmpget', 'wsdd', 'cupsd', 'lpadmin', 'ipptool'];

let checked: string | null | undefined;
/** Installs the missing Debian packages once (scripts/setup-test-deps.sh); the reason when it cannot. */
export function siteLanUnavailable(): string | null {
  if (checked !== undefined) return checked;
  const base = printerLanUnavailable();
  if (base) return (checked = base);
  if (SITE_BINARIES.some((b) => !has(b))) {
    const r = spawnSync('bash', [join(repoRoot(), 'scripts', 'setup-test-deps.sh')], { encoding: 'utf8' });
    const missing = SITE_BINARIES.filter((b) => !has(b));
    if (missing.length) return (checked = `${missing.join(', ')} not installed: ${(r.stderr || r.stdout || '').trim().slice(-300)}`);
  }
  return (checked = null);
}

function avahiConf(h: PrinterHost, publishWorkstation: boolean): string {
  return `[server]\nhost-name=${h.name}\nuse-ipv4=yes\nuse-ipv6=yes\nallow-interfaces=eth0\nratelimit-interval-usec=1000000\nratelimit-burst=1000\n[wide-area]\nenable-wide-area=no\n[publish]\npublish-workstation=${publishWorkstation ? 'yes' : 'no'}\npublish-hinfo=no\n`;
}

/** Shell lines giving the host its own D-Bus and Avahi (in the private mount namespace runInHost makes). */
function avahiLines(h: PrinterHost, conf: string, servicesDir?: string): string[] {
  return [
    'mount -t tmpfs tmpfs /run/dbus',
    'mkdir -p /run/avahi-daemon && mount -t tmpfs tmpfs /run/avahi-daemon',
    ...(servicesDir ? [`mount --bind ${servicesDir} /etc/avahi/services`] : []),
    'dbus-daemon --system --fork',
    `avahi-daemon -D --no-rlimits --no-chroot -f ${conf}`,
    'for i in $(seq 1 100); do avahi-daemon -c && break; sleep 0.1; done',
  ];
}

/** Runs a shell script in the host's namespace, in a private mount namespace; output goes to host.log. */
function runInHost(h: PrinterHost, lines: string[], env: Record<string, string> = {}) {
  const child = spawn('ip', ['netns', 'exec', h.ns, 'unshare', '-m', '--propagation', 'private', 'sh', '-c', ['set -e', ...lines].join('\n')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  child.stdout!.on('data', (b: Buffer) => (h.log.out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (h.log.out += b.toString()));
  return child;
}

async function until(what: string, h: PrinterHost, child: { exitCode: number | null }, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await ok()) return;
    if (child.exitCode !== null) throw new Error(`${what} in ${h.ns}: exited ${child.exitCode}:\n${h.log.out.slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`${what} in ${h.ns}: not ready within ${ms} ms:\n${h.log.out.slice(-3000)}`);
    await sleep(150);
  }
}

const listening = (h: PrinterHost, port: number) => spawnSync('ip', ['netns', 'exec', h.ns, 'ss', '-Hltn', `sport = :${port}`], { encoding: 'utf8' }).stdout.trim() !== '';

// A one-shot mDNS browse, run in the box namespace: one PTR query, every record heard for `ms`.
const BROWSE = String.raw`
import makeMdns from 'multicast-dns';
const [iface, type, ms] = process.argv.slice(1);
const mdns = makeMdns({ interface: iface, bind: '0.0.0.0' });
const seen = new Map();
mdns.on('response', (r) => {
  for (const a of [...r.answers, ...r.additionals]) {
    const data = a.type === 'TXT' ? [].concat(a.data).map(String) : a.data;
    seen.set(a.type + ' ' + a.name + ' ' + JSON.stringify(data), { type: a.type, name: a.name, data });
  }
});
mdns.query([{ name: type, type: 'PTR' }]);
setTimeout(() => { mdns.destroy(); process.stdout.write(JSON.stringify([...seen.values()]) + '\n'); }, Number(ms));
`;

// A passive mDNS listener, run in the box namespace: one JSON line per response, with its record names.
const WATCH = String.raw`
import dgram from 'node:dgram';
import packet from 'dns-packet';
const s = dgram.createSocket({ type: 'udp4', reuseAddr: true });
s.on('message', (m, from) => {
  let d;
  try { d = packet.decode(m); } catch { return; }
  if (d.type !== 'response') return;
  process.stdout.write(JSON.stringify({ from: from.address, names: [...d.answers, ...(d.additionals ?? [])].map((a) => a.name) }) + '\n');
});
s.bind(5353, () => { s.addMembership('224.0.0.251', process.argv[1]); console.log('{"listening":true}'); });
`;

export function createSiteLan(opts: PrinterLanOptions = {}): SiteLan {
  const base = createPrinterLan(opts);
  const lan = base as SiteLan;

  const setAddress = (h: PrinterHost, lastOctet: number) => {
    const next = `${lan.prefix}.${lastOctet}`;
    if (lan.hosts.some((o) => o.address === next)) throw new Error(`${next} is taken`);
    must('-n', h.ns, 'addr', 'del', `${h.address}/24`, 'dev', 'eth0');
    must('-n', h.ns, 'addr', 'add', `${next}/24`, 'dev', 'eth0');
    h.address = next;
  };

  lan.ippAttributes = (h, path) => {
    const r = spawnSync('ip', ['netns', 'exec', lan.boxNs, 'ipptool', '-tv', `ipp://${h.address}:631${path}`, 'get-printer-attributes.test'], { encoding: 'utf8', timeout: 10_000 });
    if (r.status !== 0) throw new Error(`ipptool ${h.address}${path}: ${r.stdout}${r.stderr}`);
    const attrs: Record<string, string> = {};
    for (const m of r.stdout.matchAll(/^\s+([a-z0-9-]+) \([^)]*\) = (.*)$/gm)) attrs[m[1]] = m[2];
    return attrs;
  };

  lan.printerUuid = (h, path = '/ipp/print') => (lan.ippAttributes(h, path)['printer-uuid'] ?? '').replace(/^urn:uuid:/, '');

  lan.browse = (serviceType, ms = 2500) =>
    new Promise((resolve, reject) => {
      const p = spawn('ip', ['netns', 'exec', lan.boxNs, process.execPath, '--input-type=module', '-e', BROWSE, lan.boxAddress, serviceType, String(ms)], { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      p.stdout!.on('data', (b: Buffer) => (out += b.toString()));
      p.stderr!.on('data', (b: Buffer) => (err += b.toString()));
      p.on('close', (code) => {
        try {
          resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as MdnsRecord[]);
        } catch {
          reject(new Error(`mDNS browse exited ${code}: ${err}${out}`));
        }
      });
    });

  lan.watchMdns = async () => {
    const p = spawn('ip', ['netns', 'exec', lan.boxNs, process.execPath, '--input-type=module', '-e', WATCH, lan.boxAddress], { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    p.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    const lines = () => out.split('\n').flatMap((l) => {
      try {
        return [JSON.parse(l) as { listening?: boolean; names?: string[] }];
      } catch {
        return [];
      }
    });
    const deadline = Date.now() + 20_000;
    while (!lines().some((l) => l.listening)) {
      if (p.exitCode !== null || Date.now() > deadline) throw new Error(`mDNS watcher in ${lan.boxNs}: ${out}`);
      await sleep(50);
    }
    const count = (name: string) => lines().filter((l) => l.names?.some((n) => n.toLowerCase() === name.toLowerCase())).length;
    return {
      count,
      async until(name, n, ms = 30_000) {
        const end = Date.now() + ms;
        while (count(name) < n) {
          if (Date.now() > end) throw new Error(`mDNS: ${count(name)} of ${n} responses carrying ${name} within ${ms} ms`);
          await sleep(100);
        }
      },
      stop: () => p.kill(),
    };
  };

  lan.startSnmpd = async (h) => {
    const conf = join(h.dir, 'snmpd.conf');
    const persist = join(h.dir, 'snmp-persist');
    mkdirSync(persist, { recursive: true });
    writeFileSync(
      conf,
      [
        'rocommunity public default',
        `sysName ${h.name}`,
        'sysLocation Server room',
        'sysContact admin@example.org',
        'sysServices 72',
        // What Debian's snmpd says of itself on a server, less the kernel's build date.
        `sysDescr Linux ${h.name} 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64`,
        '',
      ].join('\n'),
    );
    // The listening address is given once, on the command line: an agentAddress line as well makes snmpd
    // bind it twice and exit ("Error opening specified endpoint"). -m "": no MIB files (their warnings).
    const child = runInHost(h, [`exec snmpd -f -Lo -C -c ${conf} -m "" -p ${join(h.dir, 'snmpd.pid')} udp:${h.address}:161`], { SNMP_PERSISTENT_DIR: persist });
    await until('snmpd', h, child, () => spawnSync('ip', ['netns', 'exec', lan.boxNs, 'snmpget', '-v2c', '-c', 'public', '-m', '', '-t', '1', '-r', '0', '-Oqv', h.address, '1.3.6.1.2.1.1.1.0'], { encoding: 'utf8' }).stdout.startsWith('"Linux'));
  };

  lan.startWsdd = async (h) => {
    // -4: the agent's WS-Discovery is IPv4. wsdd's endpoint UUID derives from the host name: stable.
    const child = runInHost(h, [`exec wsdd -i eth0 -4 -n ${h.name.toUpperCase()} -w WORKGROUP -v`]);
    await until('wsdd', h, child, () => listening(h, 5357));
  };

  lan.startAvahiServices = async (h, types) => {
    const services = join(h.dir, 'avahi-services');
    mkdirSync(services, { recursive: true });
    const ports: Record<string, number> = { '_ssh._tcp': 22, '_smb._tcp': 445, '_sftp-ssh._tcp': 22, '_http._tcp': 80, '_device-info._tcp': 0 };
    for (const t of types.filter((x) => x !== '_workstation._tcp')) {
      writeFileSync(
        join(services, `${t.replace(/[^a-z0-9]/gi, '')}.service`),
        `<?xml version="1.0" standalone='no'?>\n<!DOCTYPE service-group SYSTEM "avahi-service.dtd">\n<service-group>\n  <name replace-wildcards="yes">%h</name>\n  <service>\n    <type>${t}</type>\n    <port>${ports[t] ?? 9}</port>\n  </service>\n</service-group>\n`,
      );
    }
    const conf = join(h.dir, 'avahi.conf');
    writeFileSync(conf, avahiConf(h, types.includes('_workstation._tcp')));
    // Kept running: the shell waits on a sleep so that the mount namespace (and Avahi's D-Bus) stays.
    const child = runInHost(h, [...avahiLines(h, conf, services), 'exec sleep infinity']);
    const last = types[types.length - 1];
    await until('Avahi services', h, child, async () => !last || (await lan.browse(`${last}.local`, 1200)).some((r) => r.type === 'PTR' && String(r.data).startsWith(h.name)));
  };

  lan.startHttpOnly = async (h) => {
    const script = `require('node:http').createServer((q, s) => { s.setHeader('content-type', 'text/html'); s.end('<html><head><title>NAS</title></head><body>files</body></html>'); }).listen(80, process.argv[1], () => console.log('listening'));`;
    const child = runInHost(h, [`exec "${process.execPath}" -e "$SCRIPT" ${h.address}`], { SCRIPT: script });
    await until('HTTP server', h, child, () => h.log.out.includes('listening'));
  };

  lan.startCupsServer = async (h, opts) => {
    const root = join(h.dir, 'cups');
    const dirs = ['etc', 'spool', 'cache', 'state', 'log', 'tmp'];
    for (const d of dirs) mkdirSync(join(root, d), { recursive: true });
    // cupsd's filters and its spool run as lp: let them reach the tree.
    for (const d of [h.dir, root, ...dirs.map((d) => join(root, d))]) chmodSync(d, 0o755);
    chmodSync(join(root, 'spool'), 0o1777);
    chmodSync(join(root, 'tmp'), 0o1777);
    writeFileSync(
      join(root, 'etc', 'cups-files.conf'),
      [
        `ServerRoot ${join(root, 'etc')}`,
        `RequestRoot ${join(root, 'spool')}`,
        `CacheDir ${join(root, 'cache')}`,
        `StateDir ${join(root, 'state')}`,
        `TempDir ${join(root, 'tmp')}`,
        `AccessLog ${join(root, 'log', 'access_log')}`,
        `ErrorLog ${join(root, 'log', 'error_log')}`,
        `PageLog ${join(root, 'log', 'page_log')}`,
        // The temp tree is not root:lp 0755 as /etc/cups is: not a reason to stop.
        'FatalErrors none',
        '',
      ].join('\n'),
    );
    // Debian's default policy, except that the admin operations need no authentication (lpadmin over TCP).
    writeFileSync(
      join(root, 'etc', 'cupsd.conf'),
      `LogLevel info
Listen ${h.address}:631
ServerAlias *
Browsing On
BrowseLocalProtocols dnssd
DefaultShared Yes
WebInterface Yes
DefaultAuthType Basic
<Location />
  Order allow,deny
  Allow all
</Location>
<Location /admin>
  Order allow,deny
  Allow all
</Location>
<Policy default>
  JobPrivateAccess default
  JobPrivateValues default
  SubscriptionPrivateAccess default
  SubscriptionPrivateValues default
  <Limit Create-Job Print-Job Print-URI Validate-Job>
    Order deny,allow
  </Limit>
  <Limit Send-Document Send-URI Hold-Job Release-Job Restart-Job Purge-Jobs Set-Job-Attributes Create-Job-Subscription Renew-Subscription Cancel-Subscription Get-Notifications Reprocess-Job Cancel-Current-Job Suspend-Current-Job Resume-Job Cancel-My-Jobs Close-Job CUPS-Move-Job>
    Require user @OWNER @SYSTEM
    Order deny,allow
  </Limit>
  <Limit CUPS-Get-Document>
    AuthType Default
    Require user @OWNER @SYSTEM
    Order deny,allow
  </Limit>
  <Limit CUPS-Add-Modify-Printer CUPS-Delete-Printer CUPS-Add-Modify-Class CUPS-Delete-Class CUPS-Set-Default CUPS-Get-Devices Pause-Printer Resume-Printer Enable-Printer Disable-Printer CUPS-Accept-Jobs CUPS-Reject-Jobs>
    Order deny,allow
  </Limit>
  <Limit Cancel-Job CUPS-Authenticate-Job>
    Require user @OWNER @SYSTEM
    Order deny,allow
  </Limit>
  <Limit All>
    Order deny,allow
  </Limit>
</Policy>
`,
    );
    const conf = join(h.dir, 'avahi.conf');
    writeFileSync(conf, avahiConf(h, false));
    writeFileSync(join(h.dir, 'hosts'), `127.0.0.1 localhost\n${h.address} ${h.name}.local\n${h.address6} ${h.name}.local\n`);
    const child = runInHost(h, [...avahiLines(h, conf), `mount --bind ${join(h.dir, 'hosts')} /etc/hosts`, `exec cupsd -f -c ${join(root, 'etc', 'cupsd.conf')} -s ${join(root, 'etc', 'cups-files.conf')}`]);
    await until('cupsd', h, child, () => listening(h, 631));
    const server = `${h.address}:631`;
    let model: CupsQueue['model'] = 'everywhere';
    const add = (m: string) => spawnSync('ip', ['netns', 'exec', h.ns, 'lpadmin', '-h', server, '-p', opts.queue, '-E', '-v', opts.deviceUri, '-m', m, '-o', 'printer-is-shared=true'], { encoding: 'utf8', timeout: 60_000 });
    let r = add('everywhere');
    if (r.status !== 0) {
      h.log.out += `lpadmin -m everywhere failed: ${r.stderr}${r.stdout}\n`;
      model = 'raw';
      r = add('raw');
      if (r.status !== 0) throw new Error(`lpadmin in ${h.ns}: ${r.stderr}${r.stdout}\n${h.log.out.slice(-2000)}`);
    }
    const uri = `ipp://${server}/printers/${opts.queue}`;
    await until('the CUPS queue', h, child, () => spawnSync('ip', ['netns', 'exec', lan.boxNs, 'ipptool', '-q', uri, 'get-printer-attributes.test'], { timeout: 5000 }).status === 0);
    return { uri, model };
  };

  lan.renumber = (h, lastOctet) => setAddress(h, lastOctet);

  lan.powerCycle = async (h, o = {}) => {
    const opts = h.printerOpts;
    if (!opts) throw new Error(`${h.ns}: no printer was started there`);
    killNamespace(h.ns, 'SIGKILL');
    const deadline = Date.now() + 10_000;
    while (ip('netns', 'pids', h.ns).out.trim()) {
      if (Date.now() > deadline) throw new Error(`${h.ns}: processes survive SIGKILL`);
      await sleep(50);
    }
    if (o.newLastOctet !== undefined) setAddress(h, o.newLastOctet);
    await lan.startPrinter(h, opts);
  };

  return lan;
}
