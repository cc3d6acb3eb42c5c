// What the benchmarks share: a free loopback port, a process's CPU time and RSS from /proc, the
// Node flags the agent's unit runs it with (so a benchmark measures what the box runs), and
// servers pinned apart from the load generator.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const freePort = (): Promise<number> =>
  new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => res(typeof a === 'object' && a ? a.port : 0));
    });
  });

/** User + system CPU time of a process, in ms (100 clock ticks a second). */
export function cpuMs(pid: number): number {
  const rest = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(rest[11]) + Number(rest[12])) * 10;
}

export const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/**
 * Waits until a process has used at most `percent` % of a core over one `windowMs` window (its
 * start-up or settings-change work done: an agent judges every saved printer's alerts after it
 * starts and after a settings change, about 10 ms each with a long history), or the deadline; resolves
 * the ms it waited. Timed figures taken before that measure the agent's background work, not the
 * request.
 */
export async function waitCpuIdle(pid: number, deadline: number, percent = 5, windowMs = 2_000): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const c0 = cpuMs(pid);
    await new Promise((r) => setTimeout(r, windowMs));
    if (cpuMs(pid) - c0 <= (windowMs * percent) / 100 || Date.now() > deadline) return Date.now() - t0;
  }
}

/** The CPUs a process may run on (its affinity list as taskset prints it: "0-1", "0,2-3"). */
function affinity(pid: number): string {
  return execFileSync('taskset', ['-cp', String(pid)], { encoding: 'utf8' }).split(': ')[1].trim();
}

const setAffinity = (pid: number, cpus: string) => execFileSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });

/**
 * Runs `fn` with the servers on one core of their own (the last this process may use) and this
 * process, the load generator (autocannon), on the others; then puts every affinity back.
 * Unpinned, on this 2-core machine the scheduler moved server and client between the cores from
 * moment to moment: one build's `latest` gave CPU ratios (agent against minimal server) of 0.54 to
 * 1.00 over six runs; pinned, 0.55 to 0.69 over eight (docs/performance.md, `latest`). For CPU per
 * request only: pinned, a server's own threads share its one core, which lengthens its latencies.
 * One core only: nothing to separate, `fn` runs as is.
 */
export async function pinnedApart<T>(serverPids: number[], fn: () => Promise<T>): Promise<T> {
  const mine = affinity(process.pid);
  const cpus = mine.split(',').flatMap((r) => {
    const [a, b = a] = r.split('-').map(Number);
    return Array.from({ length: b - a + 1 }, (_, i) => a + i);
  });
  if (cpus.length < 2) return fn();
  const before = serverPids.map((pid) => [pid, affinity(pid)] as const);
  for (const pid of serverPids) setAffinity(pid, String(cpus[cpus.length - 1]));
  setAffinity(process.pid, cpus.slice(0, -1).join(','));
  try {
    return await fn();
  } finally {
    setAffinity(process.pid, mine);
    for (const [pid, cpusBefore] of before) setAffinity(pid, cpusBefore);
  }
}

const agentUnit = () => readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../../systemd/printbox-agent.service'), 'utf8');

/**
 * The Node flags of systemd/printbox-agent.service's ExecStart (between the node binary and the
 * agent), with `${NAME}` taken from the unit's `Environment=NAME=value` (the heap cap's
 * PRINTBOX_HEAP_MB: a 1 GB board's) or from `vars` (another board's, as the memory generator
 * writes them: board-memory.ts).
 */
export function unitNodeFlags(vars: Record<string, string> = {}): string[] {
  const unit = agentUnit();
  const values: Record<string, string> = {};
  for (const [, name, value] of unit.matchAll(/^Environment=([A-Z_]+)=(\S+)$/gm)) values[name] = value;
  Object.assign(values, vars);
  const flags = /^ExecStart=\S+\/node((?:\s+--\S+)*)\s+\S+(?:cli|printbox-agent)\.js/m.exec(unit)?.[1].trim().split(/\s+/).filter(Boolean) ?? [];
  return flags.map((f) =>
    f.replace(/\$\{([A-Z_]+)\}/g, (_, name: string) => {
      if (values[name] === undefined) throw new Error(`printbox-agent.service: ${name} has no Environment= value`);
      return values[name];
    }),
  );
}

/** The unit's `Environment=NAME=value` lines that shape memory and threads (MALLOC_*, UV_*), as the box runs them. */
export function unitEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, name, value] of agentUnit().matchAll(/^Environment=((?:MALLOC|UV)_[A-Z_]+)=(\S+)$/gm)) env[name] = value;
  return env;
}

/** The unit's LimitNOFILE (soft and hard limit on open files), or undefined when it sets none. */
export function unitFileLimit(): number | undefined {
  const m = /^LimitNOFILE=(\d+)$/m.exec(agentUnit());
  return m ? Number(m[1]) : undefined;
}

/** The unit's MemoryMax in bytes (K, M, G suffixes), or undefined when it sets none. */
export function unitMemoryMax(): number | undefined {
  const m = /^MemoryMax=(\d+)([KMG]?)$/m.exec(agentUnit());
  return m ? Number(m[1]) * 1024 ** ' KMG'.indexOf(m[2] || ' ') : undefined;
}
