// Bounds password guessing (decisions.md, Auth): failed logins are counted per client address and
// per account name. After FREE_FAILURES, each further failure locks that key for a delay that
// doubles (1 s, 2 s, 4 s ... 15 min). A locked key answers 429 with Retry-After before any
// password is checked, so guessing costs the attacker time, not the box CPU.
const FREE_FAILURES = 5;
const MAX_DELAY_MS = 15 * 60_000;
// A key forgets its failures after this long without one.
const FORGET_MS = 60 * 60_000;
// Bounds memory under a spray of addresses or names; the oldest entries go first.
const MAX_KEYS = 10_000;

interface Entry {
  failures: number;
  lockedUntil: number;
  lastFailure: number;
}

export class LoginLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds to wait before another attempt with these keys may be checked; 0 = go ahead. */
  retryAfter(keys: string[]): number {
    const t = this.now();
    let until = 0;
    for (const k of keys) until = Math.max(until, this.live(k, t)?.lockedUntil ?? 0);
    return until > t ? Math.ceil((until - t) / 1000) : 0;
  }

  /** Counts a failed attempt against every key; returns the failure count of the worst key. */
  failed(keys: string[]): number {
    const t = this.now();
    let worst = 0;
    for (const k of keys) {
      const e = this.live(k, t) ?? { failures: 0, lockedUntil: 0, lastFailure: t };
      e.failures++;
      e.lastFailure = t;
      if (e.failures >= FREE_FAILURES) {
        e.lockedUntil = t + Math.min(MAX_DELAY_MS, 1000 * 2 ** (e.failures - FREE_FAILURES));
      }
      this.entries.delete(k); // re-insert: Map order is then oldest failure first
      this.entries.set(k, e);
      worst = Math.max(worst, e.failures);
    }
    while (this.entries.size > MAX_KEYS) this.entries.delete(this.entries.keys().next().value as string);
    return worst;
  }

  succeeded(keys: string[]): void {
    for (const k of keys) this.entries.delete(k);
  }

  private live(key: string, t: number): Entry | undefined {
    const e = this.entries.get(key);
    if (e && t - e.lastFailure > FORGET_MS && e.lockedUntil <= t) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }
}

/** The limiter keys of one attempt: the client's address and the account name. */
export const limiterKeys = (clientAddress: string, username: string): string[] => [
  `addr:${clientAddress}`,
  `user:${username.toLowerCase()}`,
];
