// The queue every password hash of a request goes through (scrypt: 32 MiB and about 100 ms each,
// on libuv's thread pool). Unqueued, a burst of sign-ins fills the pool's four threads and every
// other hash, and every file operation, waits behind all of it. Here at most CONCURRENCY hashes
// run. Waiting jobs are taken by client address: first the address with the fewest hashes
// running, then the one whose last turn is oldest, so a sign-in from an address with nothing
// running waits only for the first running hash to end, whatever another address has queued.
// Jobs of clients that have proved themselves (a device cookie, a session) go first. The wait
// list is bounded: when full, a request is refused before it is counted or hashed (the caller
// answers 429).
const CONCURRENCY = 2;
// Untrusted jobs may fill this many places; the rest of MAX_WAITING is kept for proved clients.
const MAX_WAITING_UNTRUSTED = 24;
const MAX_WAITING = 32;

interface Job {
  run(): void;
}

interface Turn {
  waiting: Job[];
  running: number;
  lastTurn: number;
}

export class HashQueue {
  private running = 0;
  private waiting = 0;
  private waitingUntrusted = 0;
  private turns = 0;
  private readonly proved: Job[] = [];
  // Addresses with hashes waiting or running (untrusted jobs only).
  private readonly byAddress = new Map<string, Turn>();

  constructor(
    private readonly concurrency = CONCURRENCY,
    private readonly maxWaiting = MAX_WAITING,
    private readonly maxWaitingUntrusted = MAX_WAITING_UNTRUSTED,
  ) {}

  /** Whether a job of this kind would be taken now (checked before the attempt is counted). */
  hasRoom(proved: boolean): boolean {
    if (this.running < this.concurrency && this.waiting === 0) return true;
    return this.waiting < this.maxWaiting && (proved || this.waitingUntrusted < this.maxWaitingUntrusted);
  }

  /** Runs `work` when its turn comes; throws at once if there is no room (ask hasRoom first). */
  run<T>(address: string, proved: boolean, work: () => Promise<T>): Promise<T> {
    if (!this.hasRoom(proved)) throw new Error('hash queue full');
    return new Promise<T>((resolve, reject) => {
      const turn = proved ? undefined : this.turnOf(address);
      const job: Job = {
        run: () => {
          this.running++;
          if (turn) turn.running++;
          work()
            .then(resolve, reject)
            .finally(() => {
              this.running--;
              if (turn && --turn.running === 0 && turn.waiting.length === 0) this.byAddress.delete(address);
              this.next();
            });
        },
      };
      this.waiting++;
      if (turn) {
        this.waitingUntrusted++;
        turn.waiting.push(job);
      } else this.proved.push(job);
      this.next();
    });
  }

  /** Hashes running and waiting (for the tests' and the log's figures). */
  load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting };
  }

  private turnOf(address: string): Turn {
    let turn = this.byAddress.get(address);
    if (!turn) this.byAddress.set(address, (turn = { waiting: [], running: 0, lastTurn: -1 }));
    return turn;
  }

  private next(): void {
    while (this.running < this.concurrency && this.waiting > 0) {
      let job = this.proved.shift();
      if (!job) {
        let best: Turn | undefined;
        for (const t of this.byAddress.values()) {
          if (t.waiting.length === 0) continue;
          if (!best || t.running < best.running || (t.running === best.running && t.lastTurn < best.lastTurn)) best = t;
        }
        job = best!.waiting.shift()!;
        best!.lastTurn = this.turns++;
        this.waitingUntrusted--;
      }
      this.waiting--;
      job.run();
    }
  }
}
