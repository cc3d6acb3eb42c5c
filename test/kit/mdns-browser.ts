// Test helper: the box's mDNS browser (src/discovery/mdns.ts, MdnsListener) alone, run inside the
// box's namespace of a namespace LAN (printer-lan.ts) as a child process: what it reports
// (announce, gone) and logs comes back as JSON lines.
//
// API (test side):
//   startBrowserInBox(lan) -> a BoxBrowser, once the listener has started:
//     b.events()     every { event: 'announce', p } / { event: 'gone', g } so far, in order;
//     b.logs()       the listener's log lines (pino JSON) so far;
//     b.status()     the listener's status() (asked for over stdin);
//     b.stop()       stops the listener (its log says so) and ends the child.
// Child side: `ip netns exec <boxNs> node mdns-browser.js`.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import pino from 'pino';
import { MdnsListener, type MdnsStatus } from '../../src/discovery/mdns.js';
import { type AnnouncedPrinter } from '../../src/discovery/announced-printer.js';

export type BrowserEvent =
  | { event: 'announce'; p: AnnouncedPrinter }
  | { event: 'gone'; g: { address: string; name: string; host?: string; why: 'goodbye' | 'expired' } };

export interface BoxBrowser {
  events(): BrowserEvent[];
  logs(): Record<string, unknown>[];
  status(): Promise<MdnsStatus>;
  stop(): Promise<void>;
}

export async function startBrowserInBox(lan: { boxNs: string }): Promise<BoxBrowser> {
  const child: ChildProcess = spawn('ip', ['netns', 'exec', lan.boxNs, process.execPath, fileURLToPath(import.meta.url)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  let raw = '';
  createInterface({ input: child.stdout! }).on('line', (l) => {
    raw += `${l}\n`;
    try {
      lines.push(JSON.parse(l) as Record<string, unknown>);
    } catch {
      /* not ours */
    }
  });
  child.stderr!.on('data', (b: Buffer) => (raw += b.toString()));
  const wait = async (what: string, ok: () => boolean) => {
    const deadline = Date.now() + 15_000;
    while (!ok()) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`mDNS browser: no ${what}:\n${raw}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await wait('start', () => lines.some((l) => l.msg === 'mDNS: listening for printers'));
  return {
    events: () => lines.filter((l) => l.event === 'announce' || l.event === 'gone') as unknown as BrowserEvent[],
    logs: () => lines.filter((l) => typeof l.msg === 'string'),
    async status() {
      const n = lines.filter((l) => l.event === 'status').length;
      child.stdin!.write('status\n');
      await wait('status', () => lines.filter((l) => l.event === 'status').length > n);
      return lines.filter((l) => l.event === 'status').at(-1)!.status as MdnsStatus;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end();
      await exited;
    },
  };
}

// ---- the child, inside the box's namespace ----

function runBrowser(): void {
  const log = pino({ level: 'debug' });
  const print = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
  const listener = new MdnsListener({
    log,
    onAnnounce: (p) => print({ event: 'announce', p }),
    onGoodbye: (g) => print({ event: 'gone', g }),
  });
  listener.start();
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (l) => {
    if (l.trim() === 'status') print({ event: 'status', status: listener.status() });
  });
  // stdin closed: the test is done (or gone).
  rl.on('close', () => {
    listener.stop();
    setTimeout(() => process.exit(0), 100);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) runBrowser();
