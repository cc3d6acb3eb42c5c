// The queue every password hash of a request goes through (scrypt: 32 MiB and about 100 ms each,
// on libuv's thread pool). Unqueued, a burst of sign-ins fills the pool's four threads and every
// other hash, and every file operation, waits behind all of it. Here at most CONCURRENCY hashes
// run; waiting jobs are taken in turn per client address (round robin), so one address's burst
// delays another address by at most one hash per address waiting; jobs of clients that have proved
// themselves (a device cookie, a session) go first. The wait list is bounded: when full, a request
// is refused before it is counted or hashed (the caller answers 429).
const CONCURRENCY = 2;
// Untrusted jobs may fill this many places; the rest of MAX_WAITING is kept for proved clients.
const MAX_WAITING_UNTRUSTED = 24;
const MAX_WAITING = 32;

interface Job {
  run(): void;
}

export class HashQueue {
  private running = 0;
  private waiting = 0;
  private waitingUntrusted = 0;
  private readonly proved: Job[] = [];
  // Per address, in the order addresses started waiting; the next job comes from the first
  // address, which then goes to the back if it has more.
  private readonly byAddress = new Map<string, Job[]>();

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
      const job: Job = {
        run: () => {
          this.running++;
          work()
            .then(resolve, reject)
            .finally(() => {
              this.running--;
              this.next();
            });
        },
      };
      this.waiting++;
      if (proved) this.proved.push(job);
      else {
        this.waitingUntrusted++;
        const list = this.byAddress.get(address);
        if (list) list.push(job);
        else this.byAddress.set(address, [job]);
      }
      this.next();
    });
  }

  /** Hashes running and waiting (for the tests' and the log's figures). */
  load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting };
  }

  private next(): void {
    while (this.running < this.concurrency && this.waiting > 0) {
      let job = this.proved.shift();
      if (!job) {
        const [address, list] = this.byAddress.entries().next().value as [string, Job[]];
        job = list.shift()!;
        this.byAddress.delete(address);
        if (list.length > 0) this.byAddress.set(address, list); // to the back of the turn
        this.waitingUntrusted--;
      }
      this.waiting--;
      job.run();
    }
  }
}
