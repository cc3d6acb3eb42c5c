// Serves real printers' snmprec recordings with Debian's snmpsimd over real UDP on loopback.
//
// - v1/v2c: one snmpsimd process with --v2c-arch and many --agent-udpv4-endpoint lines; the N-th
//   endpoint answers community `public` from DATA/public/1.3.6.1.6.1.1.N.snmprec (a symlink to a
//   recording, or a real file for endpoints whose counters move between polls).
// - v3: a second process (default architecture) with one USM user; the data file is chosen by the
//   SNMPv3 context name (`<context>.snmprec`): an empty context matches no file in snmpsim.
// As root, snmpsimd must drop privileges (--process-user=nobody --process-group=nogroup), so the
// work directory, data and cache are made readable/writable by nobody.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSession, type SnmpCredential } from '../../src/snmp/client.js';

/** The repository root (works from test/kit and from dist/test/kit). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'test'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('repository root not found');
}

/** Absolute path of a recording under test/fixtures/snmp (e.g. "printmaster/kyocera_p2040.snmprec"). */
export function fixturePath(rel: string): string {
  return join(repoRoot(), 'test', 'fixtures', 'snmp', rel);
}

let depsChecked: string | null | undefined;

/** Makes sure snmpsimd is installed (runs scripts/setup-test-deps.sh once). Returns a reason when it is not usable. */
export function ensureSnmpsim(): string | null {
  if (depsChecked !== undefined) return depsChecked;
  const has = () => spawnSync('sh', ['-c', 'command -v snmpsimd'], { stdio: 'ignore' }).status === 0;
  if (!has()) {
    const r = spawnSync('bash', [join(repoRoot(), 'scripts', 'setup-test-deps.sh')], { encoding: 'utf8' });
    if (r.status !== 0 || !has()) {
      depsChecked = `snmpsimd unavailable: ${(r.stderr || r.stdout || '').trim().slice(-300)}`;
      return depsChecked;
    }
  }
  depsChecked = null;
  return null;
}

export interface SimEndpoint {
  /** 127.x.y.z */
  address: string;
  /** Absolute path of an .snmprec recording. */
  recording: string;
  /** Serve from a private copy so that switchRecording() can replace it (moving counters). */
  switchable?: boolean;
}

export interface SimV3 {
  address: string;
  recording: string;
  user: string;
  authProto: 'SHA' | 'MD5';
  authKey: string;
  privProto: 'AES' | 'DES';
  privKey: string;
  /** Context name that selects the recording (default "printer"). */
  context?: string;
  /** More USM users on the same instance (e.g. MD5/DES beside SHA/AES). */
  extraUsers?: { user: string; authProto: 'SHA' | 'MD5'; authKey: string; privProto: 'AES' | 'DES'; privKey: string }[];
}

export interface SnmpSimOptions {
  endpoints: SimEndpoint[];
  v3?: SimV3;
  /** UDP port on every address; default: a free port found on the first address. */
  port?: number;
  /** How long to wait for the simulator to answer (ms, default 20 s). */
  startTimeoutMs?: number;
  /** Run the v1/v2c simulator inside this network namespace (its addresses must exist there; give `port`). */
  netns?: string;
  /** No log file (snmpsimd writes some lines per request): for benchmarks, where it costs the simulator's rate. */
  quiet?: boolean;
}

export interface SnmpSim {
  port: number;
  /** Process ids of the snmpsimd instances (v2c first). */
  pids: number[];
  community: string;
  workDir: string;
  endpoints: SimEndpoint[];
  v3?: SimV3 & { context: string };
  /** Replaces a switchable endpoint's recording; snmpsim re-reads it on the next request. */
  switchRecording(address: string, recording: string): void;
  stop(): Promise<void>;
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
let nobodyIds: { uid: number; gid: number } | null | undefined;

function nobody(): { uid: number; gid: number } | null {
  if (nobodyIds !== undefined) return nobodyIds;
  const uid = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  const gid = spawnSync('getent', ['group', 'nogroup'], { encoding: 'utf8' });
  nobodyIds = uid.status === 0 && gid.status === 0 ? { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.split(':')[2]) } : null;
  return nobodyIds;
}

function ownByNobody(path: string): void {
  const ids = nobody();
  if (isRoot && ids) chownSync(path, ids.uid, ids.gid);
}

/** A UDP port that is free on `address` right now. */
export async function freeUdpPort(address: string): Promise<number> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(0, address, () => resolve());
  });
  const port = sock.address().port;
  await new Promise<void>((resolve) => sock.close(() => resolve()));
  return port;
}

function privilegeArgs(): string[] {
  return isRoot ? ['--process-user=nobody', '--process-group=nogroup'] : [];
}

function spawnSim(args: string[], logFile: string, netns?: string, quiet = false): ChildProcess {
  const argv = ['snmpsimd', ...args, ...privilegeArgs(), quiet ? '--logging-method=null' : `--logging-method=file:${logFile}`];
  // `ip netns exec` execs the command in place: the child's pid is snmpsimd's.
  const [cmd, ...rest] = netns ? ['ip', 'netns', 'exec', netns, ...argv] : argv;
  const child = spawn(cmd, rest, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  (child as ChildProcess & { stderrTail: () => string }).stderrTail = () => stderr;
  return child;
}

async function waitAnswer(child: ChildProcess, credential: SnmpCredential, host: string, port: number, deadline: number, logFile: string, netns?: string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const tail = (child as ChildProcess & { stderrTail?: () => string }).stderrTail?.() ?? '';
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
      throw new Error(`snmpsimd exited (${child.exitCode ?? child.signalCode}): ${tail}\n${log}`);
    }
    if (netns) {
      // The simulator lives in a namespace this process cannot reach: ask from inside it.
      const r = spawnSync('ip', ['netns', 'exec', netns, 'snmpget', '-v2c', '-c', 'public', '-t', '0.5', '-r', '0', `${host}:${port}`, '1.3.6.1.2.1.1.3.0'], { stdio: 'ignore' });
      if (r.status === 0) return;
      if (Date.now() > deadline) throw new Error(`snmpsimd did not answer on ${host}:${port} in ${netns} in time`);
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    const s = openSession(credential, { host, port, timeoutMs: 300, allowedRanges: ['127.0.0.0/8'] });
    try {
      await s.get(['1.3.6.1.2.1.1.3.0']);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`snmpsimd did not answer on ${host}:${port} in time`);
    } finally {
      s.close();
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

/** Starts the simulator(s) and resolves once every instance answers. */
export async function startSnmpSim(opts: SnmpSimOptions): Promise<SnmpSim> {
  const reason = ensureSnmpsim();
  if (reason) throw new Error(reason);
  if (opts.endpoints.length === 0 && !opts.v3) throw new Error('no endpoints');
  const firstAddr = opts.endpoints[0]?.address ?? opts.v3!.address;
  if (opts.netns && !opts.port) throw new Error('netns needs an explicit port');
  const port = opts.port ?? (await freeUdpPort(firstAddr));
  const workDir = mkdtempSync(join(os.tmpdir(), 'printbox-snmpsim-'));
  chmodSync(workDir, 0o755);
  const recDir = join(workDir, 'recordings');
  const dataDir = join(workDir, 'data');
  const pubDir = join(dataDir, 'public');
  const cacheDir = join(workDir, 'cache');
  for (const d of [recDir, dataDir, pubDir, cacheDir]) {
    mkdirSync(d, { recursive: true });
    chmodSync(d, 0o755);
  }
  ownByNobody(cacheDir);

  // One readable copy of each distinct recording; endpoints symlink to it (shared index).
  const copies = new Map<string, string>();
  const copyOf = (src: string): string => {
    let dst = copies.get(src);
    if (!dst) {
      dst = join(recDir, `${copies.size}-${basename(src)}`);
      copyFileSync(src, dst);
      chmodSync(dst, 0o644);
      copies.set(src, dst);
    }
    return dst;
  };

  const argLines: string[] = [];
  const switchPaths = new Map<string, string>();
  opts.endpoints.forEach((ep, n) => {
    argLines.push(`--agent-udpv4-endpoint=${ep.address}:${port}`);
    const file = join(pubDir, `1.3.6.1.6.1.1.${n}.snmprec`);
    if (ep.switchable) {
      copyFileSync(ep.recording, file);
      chmodSync(file, 0o644);
      switchPaths.set(ep.address, file);
    } else {
      symlinkSync(copyOf(ep.recording), file);
    }
  });
  const argsFile = join(workDir, 'endpoints.args');
  writeFileSync(argsFile, argLines.join('\n') + '\n');

  const children: ChildProcess[] = [];
  const deadline = Date.now() + (opts.startTimeoutMs ?? 20_000);
  const stopAll = async () => {
    await Promise.all(children.map(stopChild));
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    if (opts.endpoints.length > 0) {
      const log = join(workDir, 'v2c.log');
      const child = spawnSim(['--v2c-arch', `--data-dir=${dataDir}`, `--cache-dir=${cacheDir}`, `--args-from-file=${argsFile}`], log, opts.netns, opts.quiet);
      children.push(child);
      const cred: SnmpCredential = { version: 'v2c', community: 'public' };
      await waitAnswer(child, cred, opts.endpoints[0].address, port, deadline, log, opts.netns);
      await waitAnswer(child, cred, opts.endpoints[opts.endpoints.length - 1].address, port, deadline, log, opts.netns);
    }
    let v3: (SimV3 & { context: string }) | undefined;
    if (opts.v3) {
      v3 = { ...opts.v3, context: opts.v3.context ?? 'printer' };
      const v3Data = join(workDir, 'v3data');
      const v3Cache = join(workDir, 'v3cache');
      mkdirSync(v3Data);
      chmodSync(v3Data, 0o755);
      mkdirSync(v3Cache);
      ownByNobody(v3Cache);
      symlinkSync(copyOf(v3.recording), join(v3Data, `${v3.context}.snmprec`));
      const log = join(workDir, 'v3.log');
      const child = spawnSim(
        [
          `--data-dir=${v3Data}`,
          `--cache-dir=${v3Cache}`,
          `--agent-udpv4-endpoint=${v3.address}:${port}`,
          `--v3-user=${v3.user}`,
          `--v3-auth-key=${v3.authKey}`,
          `--v3-auth-proto=${v3.authProto}`,
          `--v3-priv-key=${v3.privKey}`,
          `--v3-priv-proto=${v3.privProto}`,
          ...(v3.extraUsers ?? []).flatMap((u) => [
            `--v3-user=${u.user}`,
            `--v3-auth-key=${u.authKey}`,
            `--v3-auth-proto=${u.authProto}`,
            `--v3-priv-key=${u.privKey}`,
            `--v3-priv-proto=${u.privProto}`,
          ]),
        ],
        log,
      );
      children.push(child);
      await waitAnswer(
        child,
        { version: 'v3', user: v3.user, authProtocol: v3.authProto, authKey: v3.authKey, privProtocol: v3.privProto, privKey: v3.privKey, context: v3.context },
        v3.address,
        port,
        deadline,
        log,
      );
    }
    return {
      port,
      pids: children.map((c) => c.pid ?? 0),
      community: 'public',
      workDir,
      endpoints: opts.endpoints,
      v3,
      switchRecording(address: string, recording: string) {
        const file = switchPaths.get(address);
        if (!file) throw new Error(`${address} was not started switchable`);
        // snmpsim reloads a data file whose mtime changed (whole seconds) and rebuilds its index
        // when the text is newer than the index: move the mtime clearly forward.
        const before = statSync(file).mtimeMs;
        const tmp = `${file}.tmp`;
        copyFileSync(recording, tmp);
        chmodSync(tmp, 0o644);
        const t = new Date(Math.max(before, Date.now()) + 5_000);
        utimesSync(tmp, t, t);
        renameSync(tmp, file);
      },
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/**
 * Writes a copy of `src` whose Counter32/Counter64 values and Printer-MIB marker life counts
 * (prtMarkerLifeCount, 1.3.6.1.2.1.43.10.2.1.4) are raised by `delta`: the "counters moved" recording.
 */
export function writeMovedCounters(src: string, dst: string, delta: number): void {
  const lines = readFileSync(src, 'utf8').split('\n');
  const out = lines.map((line) => {
    const m = /^([0-9.]+)\|(65|70)\|([0-9]+)$/.exec(line);
    if (m) {
      const v = BigInt(m[3]) + BigInt(delta);
      return m[2] === '65' && v > 0xffffffffn ? line : `${m[1]}|${m[2]}|${v}`;
    }
    const life = /^(1\.3\.6\.1\.2\.1\.43\.10\.2\.1\.4\.[0-9.]+)\|(2|65|66)\|([0-9]+)$/.exec(line);
    if (life) return `${life[1]}|${life[2]}|${Number(life[3]) + delta}`;
    return line;
  });
  writeFileSync(dst, out.join('\n'));
  chmodSync(dst, 0o644);
}
