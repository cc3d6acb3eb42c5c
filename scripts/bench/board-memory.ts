// The agent under another board's memory limits, on this machine: the figures the box's generator
// (rootfs-overlay/usr/lib/systemd/system-generators/printbox-agent-memory) writes for a board's
// MemTotal, got by running that generator on a made-up /proc/meminfo, and a memory cgroup holding
// the agent to them as systemd holds the box's agent (MemoryMax; MemoryHigh where the machine has
// cgroup v2's memory controller: v1 has no such limit). Root only (cgroups).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const GENERATOR = join(dirname(fileURLToPath(import.meta.url)), '../../../rootfs-overlay/usr/lib/systemd/system-generators/printbox-agent-memory');

export interface BoardLimits {
  memTotalKiB: number;
  memoryMax: number;
  memoryHigh: number;
  heapMb: number;
  /** The drop-in as the generator wrote it. */
  dropIn: string;
}

const bytes = (v: string) => {
  const m = /^(\d+)([KMG]?)$/.exec(v);
  if (!m) throw new Error(`not a size: ${v}`);
  return Number(m[1]) * 1024 ** ' KMG'.indexOf(m[2] || ' ');
};

/** What the generator writes for a board whose kernel reports MemTotal (kB). */
export function boardLimits(memTotalKiB: number): BoardLimits {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-board-'));
  try {
    writeFileSync(join(dir, 'meminfo'), `MemTotal:       ${memTotalKiB} kB\nMemFree:        ${Math.floor(memTotalKiB / 2)} kB\n`);
    const r = spawnSync('sh', [GENERATOR, join(dir, 'out'), join(dir, 'early'), join(dir, 'late')], { env: { ...process.env, PRINTBOX_MEMINFO: join(dir, 'meminfo') }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`the generator failed: ${r.stderr}`);
    const dropIn = readFileSync(join(dir, 'out/printbox-agent.service.d/50-printbox-memory.conf'), 'utf8');
    const get = (re: RegExp) => re.exec(dropIn)?.[1] ?? assertNever(re);
    return {
      memTotalKiB,
      memoryMax: bytes(get(/^MemoryMax=(\S+)$/m)),
      memoryHigh: bytes(get(/^MemoryHigh=(\S+)$/m)),
      heapMb: Number(get(/^Environment=PRINTBOX_HEAP_MB=(\d+)$/m)),
      dropIn,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function assertNever(re: RegExp): never {
  throw new Error(`the generator's drop-in has no ${re}`);
}

export interface MemoryCgroup {
  dir: string;
  version: 1 | 2;
  /** The command line that starts `cmd args` inside the cgroup (the same PID: sh execs it). */
  wrap(cmd: string, args: string[]): [string, string[]];
  /** The cgroup's peak charge (RSS and page cache), bytes. */
  peak(): number;
  /** How many times the kernel's OOM killer killed a process of the cgroup. */
  oomKills(): number;
  /** How often an allocation hit the limit (v1: memory.failcnt; v2: memory.events max). */
  limitHits(): number;
  remove(): void;
}

/** A new memory cgroup below this process's own, limited to the board's MemoryMax (and MemoryHigh on v2). */
export function memoryCgroup(name: string, limits: Pick<BoardLimits, 'memoryMax' | 'memoryHigh'>): MemoryCgroup {
  const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  const v2Controllers = existsSync('/sys/fs/cgroup/cgroup.controllers') ? readFileSync('/sys/fs/cgroup/cgroup.controllers', 'utf8') : '';
  let dir: string;
  let version: 1 | 2;
  if (/\bmemory\b/.test(v2Controllers)) {
    // cgroup v2: a child of this process's cgroup can have a memory limit only if the parent
    // delegates the controller; a leaf next to the root's children keeps it simple.
    version = 2;
    dir = join('/sys/fs/cgroup', `${name}-${process.pid}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.max'), String(limits.memoryMax));
    writeFileSync(join(dir, 'memory.high'), String(limits.memoryHigh));
  } else {
    const v1 = own.find((l) => /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:/.test(l));
    if (!v1 || !existsSync('/sys/fs/cgroup/memory')) throw new Error('no memory cgroup controller on this machine');
    version = 1;
    dir = join('/sys/fs/cgroup/memory', v1.split(':')[2], `${name}-${process.pid}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limits.memoryMax));
    // No swap may stand in for the limit (the box has none).
    if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), String(limits.memoryMax));
  }
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  const field = (file: string, key: string) => Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(read(file))?.[1] ?? NaN);
  return {
    dir,
    version,
    wrap: (cmd, args) => ['sh', ['-c', 'echo $$ >"$0/cgroup.procs" && exec "$@"', dir, cmd, ...args]],
    peak: () => Number(read(version === 2 ? 'memory.peak' : 'memory.max_usage_in_bytes')),
    oomKills: () => (version === 2 ? field('memory.events', 'oom_kill') : field('memory.oom_control', 'oom_kill')),
    limitHits: () => (version === 2 ? field('memory.events', 'max') : Number(read('memory.failcnt'))),
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // still has a process (an agent that did not exit): left for the kernel to report
      }
    },
  };
}

/** The process's peak RSS (VmHWM), MiB. */
export function peakRssMiB(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}
