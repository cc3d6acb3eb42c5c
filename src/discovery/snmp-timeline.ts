// Where each address of a range scan stands in its SNMP read: not started, asked, answered, ended.
// The IPP read of a host whose port 631 is open (discovery/port-probe.ts) is started beside that
// host's own SNMP read, once its agent has had a moment to answer and has not, instead of after the
// whole scan: so it fits inside the time the scan spends on that host anyway, and a /24 with port
// probes takes no longer than one without.

interface Entry {
  startedAt?: number;
  answered: boolean;
  started: Promise<void>;
  start: () => void;
  answer: () => void;
  answeredP: Promise<void>;
  ended: Promise<void>;
  end: () => void;
}

export class SnmpTimeline {
  private readonly entries = new Map<string, Entry>();
  private over = false;

  constructor(private readonly now: () => number = Date.now) {}

  private entry(address: string): Entry {
    let e = this.entries.get(address);
    if (!e) {
      const e2 = { answered: false } as Entry;
      e2.started = new Promise<void>((r) => (e2.start = r));
      e2.answeredP = new Promise<void>((r) => (e2.answer = r));
      e2.ended = new Promise<void>((r) => (e2.end = r));
      if (this.over) {
        e2.start();
        e2.end();
      }
      this.entries.set(address, e2);
      e = e2;
    }
    return e;
  }

  /** The address's identity probe is being sent. */
  started(address: string): void {
    const e = this.entry(address);
    e.startedAt ??= this.now();
    e.start();
  }

  /** Its agent answered the identity probe (its full read follows). */
  answered(address: string): void {
    const e = this.entry(address);
    e.answered = true;
    e.answer();
  }

  /** Its SNMP read ended, answered or not. */
  ended(address: string): void {
    this.entry(address).end();
  }

  /** The scan is over (done or stopped): every address not reached counts as started and ended. */
  finish(): void {
    this.over = true;
    for (const e of this.entries.values()) {
      e.start();
      e.end();
    }
  }

  hasAnswered(address: string): boolean {
    return this.entry(address).answered;
  }

  /** When its identity probe was sent (undefined: never, the scan ended first). */
  startedAt(address: string): number | undefined {
    return this.entry(address).startedAt;
  }

  whenStarted(address: string): Promise<void> {
    return this.entry(address).started;
  }

  whenEnded(address: string): Promise<void> {
    return this.entry(address).ended;
  }

  /** Resolves when its agent answered, its read ended, or `ms` after now, whichever is first. */
  async answeredWithin(address: string, ms: number): Promise<void> {
    const e = this.entry(address);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([e.answeredP, e.ended, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }
}
