// Runs a script inside a network namespace of its own that has only a loopback interface, so that
// nothing it starts can reach another machine whatever it is told: the fuzzer's requests can set
// the agent's scan ranges, allowed ranges and server URL to anything. As root `unshare --net`;
// otherwise an unprivileged user namespace (`unshare --user --map-root-user --net`) when the
// kernel allows it.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const MARK = 'PRINTBOX_SOAK_ISOLATED';

/** The network interfaces of this process's namespace (from /proc/net/dev, which is per namespace). */
export function interfaces(): string[] {
  return readFileSync('/proc/net/dev', 'utf8')
    .split('\n')
    .slice(2)
    .map((l) => l.split(':')[0].trim())
    .filter(Boolean);
}

/** True when this process runs in a namespace whose only interface is lo. */
export const isolated = (): boolean => interfaces().every((i) => i === 'lo');

function unshareArgs(): string[] | null {
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const args = asRoot ? ['--net'] : ['--user', '--map-root-user', '--net'];
  const probe = spawnSync('unshare', [...args, 'true'], { stdio: 'ignore' });
  return probe.status === 0 ? args : null;
}

/** Why this machine cannot isolate a run, or null when it can. */
export function isolationUnavailable(): string | null {
  if (isolated()) return null;
  return unshareArgs() ? null : 'cannot create a network namespace (unshare --net as root, or a user namespace)';
}

/**
 * Starts `node <script> <args>` in a fresh network namespace with lo up; resolves its exit code and
 * standard output (standard error goes to ours). Throws when no namespace can be made.
 */
export function runIsolated(script: string, args: string[], echo = false): Promise<{ code: number | null; stdout: string }> {
  const ns = unshareArgs();
  if (!ns) throw new Error(isolationUnavailable() ?? 'no network namespace');
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', [...ns, '--', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', process.execPath, script, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, [MARK]: '1' },
    });
    let stdout = '';
    child.stdout!.on('data', (b: Buffer) => {
      stdout += b.toString('utf8');
      if (echo) process.stdout.write(b);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

/** True in the child runIsolated started (so a script's main does not start itself again). */
export const startedIsolated = (): boolean => process.env[MARK] === '1';
