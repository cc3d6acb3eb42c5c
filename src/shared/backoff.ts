// How long to wait before trying the server again: 5 s, doubling to 5 min (server-protocol.md),
// back to 5 s after a success. Jitter (+-20%) keeps a fleet of boxes that lost the server together
// from coming back in step.
const MIN_MS = 5_000;
const MAX_MS = 300_000;

export class Backoff {
  private nextMs = MIN_MS;

  constructor(private readonly jitter = false) {}

  /** The wait before the next try; each call doubles the one after it. */
  next(): number {
    const wait = this.jitter ? Math.round(this.nextMs * (0.8 + Math.random() * 0.4)) : this.nextMs;
    this.nextMs = Math.min(this.nextMs * 2, MAX_MS);
    return wait;
  }

  reset(): void {
    this.nextMs = MIN_MS;
  }
}

/**
 * At most one go per `periodMs`: what a success may set off at once (a redial when a heartbeat
 * gets through while the channel is down) stays bounded against a server that flaps. A clock
 * stepped back allows a go rather than waiting out the step. `now` is injectable for tests.
 */
export class OncePer {
  private last: number | undefined;

  constructor(
    private readonly periodMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a go is allowed now; if so, the next one waits `periodMs`. */
  take(): boolean {
    const t = this.now();
    if (this.last !== undefined && t >= this.last && t - this.last < this.periodMs) return false;
    this.last = t;
    return true;
  }
}
