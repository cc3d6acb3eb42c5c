// Test helper: starts a TEST PEER (a module of test/kit that is also a program) inside a host's
// network namespace, and follows what it prints. The peers print one line per thing they did
// ("announced 3", "answered FLOOD-11-2", "hello <uuid>"), so the test counts lines by their first word.
//
//   startNsPeer(ns, moduleUrl, options, { startedBy, what }) -> once the peer printed a line starting
//       with `startedBy` (or throws with its output after 15 s or when it exits first):
//     p.count(word)   lines printed so far starting with `word`;   p.out()   everything it printed;
//     p.exited        resolves when it has exited;                  p.stop(signal)  sends it and waits.
// Peer side: `ip netns exec <ns> node <module> '<options as JSON>'`.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface NsPeer {
  child: ChildProcess;
  count(word: string): number;
  out(): string;
  exited: Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startNsPeer(ns: string, moduleUrl: string, options: object, started: { startedBy: string; what: string }): Promise<NsPeer> {
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, fileURLToPath(moduleUrl), JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const count = (word: string) => out.split('\n').filter((l) => l.startsWith(word)).length;
  const deadline = Date.now() + 15_000;
  while (count(started.startedBy) === 0) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${started.what} in ${ns} did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    count,
    out: () => out,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
