// Bounds credential guessing (docs/decisions/0015-auth-modes-and-sessions.md; docs/api.md,
// Authentication). An attempt is counted against its keys when it STARTS, as if it were going to
// fail: an attempt still being checked holds its place, so a burst of concurrent requests gets no
// more checks than one request after another would. A success clears the keys it was counted on.
// From the FREE_FAILURES-th attempt on, a key is locked while that attempt runs and, once it has
// failed, for a delay that doubles (1 s, 2 s, 4 s ... 15 min) from its end; a locked key answers
// 429 with Retry-After before anything is checked.
//
// Which keys an attempt is counted on decides who can be locked out by whom (signInKeys below):
// a client holding a device cookie for the account (device-cookie.ts) is counted on that cookie
// alone; any other client on its address and on the account name, so the account's lock-out
// binds every untrusted client but never a browser the technician has signed in from before.
const FREE_FAILURES = 5;
const MAX_DELAY_MS = 15 * 60_000;
// A key forgets its failures after this long without one. A day, so that waiting for the
// account's count to be forgotten gains an attacker less than retrying at every lock's end
// (docs/api.md works the figures out; test/unit/auth/login-limits.test.ts checks them).
const FORGET_MS = 24 * 60 * 60_000;
// Bounds memory under a spray of addresses or names; the entry with the oldest attempt goes first.
const MAX_KEYS = 10_000;

interface Entry {
  attempts: number;
  /** Attempts started and not yet ended. */
  running: number;
  lockedUntil: number;
  lastAttempt: number;
}

const delayMs = (attempts: number) => Math.min(MAX_DELAY_MS, 1000 * 2 ** (attempts - FREE_FAILURES));

/** A counted attempt: tell the limiter how it ended. */
export interface Attempt {
  /** The credential was right: the attempt's keys are cleared. */
  succeeded(): void;
  /** The credential was wrong (it was counted when it started): the worst key's count, for the log. */
  failed(): number;
  /** Nothing was checked after all (the central server unreachable): the count is taken back. */
  abandoned(): void;
}

export type Refusal = { wait: number; key: string };

export class LoginLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The longest wait (seconds) among the keys and the key that imposes it; wait 0 = go ahead. */
  check(keys: string[]): Refusal {
    const t = this.now();
    let until = 0;
    let key = '';
    for (const k of keys) {
      const e = this.live(k, t);
      // An attempt past the free ones still running: locked until it ends, then for its delay.
      const lockedUntil = e ? Math.max(e.lockedUntil, e.attempts >= FREE_FAILURES && e.running > 0 ? t + delayMs(e.attempts) : 0) : 0;
      // Ties go to the later key: the account's lock is the one worth naming.
      if (lockedUntil > t && lockedUntil >= until) [until, key] = [lockedUntil, k];
    }
    return { wait: until > t ? Math.ceil((until - t) / 1000) : 0, key };
  }

  /** Seconds to wait before another attempt with these keys may be checked; 0 = go ahead. */
  retryAfter(keys: string[]): number {
    return this.check(keys).wait;
  }

  /**
   * Starts an attempt: refused when a key is locked; otherwise counted on every key now (a key
   * that reaches FREE_FAILURES is locked while it runs) and returned for its outcome.
   */
  begin(keys: string[]): Attempt | Refusal {
    const refusal = this.check(keys);
    if (refusal.wait > 0) return refusal;
    const t = this.now();
    let worst = 0;
    const counted: [string, Entry][] = [];
    for (const k of keys) {
      const e = this.live(k, t) ?? { attempts: 0, running: 0, lockedUntil: 0, lastAttempt: t };
      counted.push([k, e]);
      e.attempts++;
      e.running++;
      e.lastAttempt = t;
      this.entries.delete(k); // re-insert: Map order is then oldest attempt first
      this.entries.set(k, e);
      worst = Math.max(worst, e.attempts);
    }
    while (this.entries.size > MAX_KEYS) this.entries.delete(this.entries.keys().next().value as string);
    let ended = false;
    const end = (how: (e: Entry, t: number) => void) => {
      if (ended) return;
      ended = true;
      const t = this.now();
      for (const [k, e] of counted) {
        if (this.entries.get(k) !== e) continue; // cleared by a success meanwhile, or forgotten
        e.running = Math.max(0, e.running - 1);
        how(e, t);
      }
    };
    return {
      succeeded: () => {
        ended = true;
        this.succeeded(keys);
      },
      failed: () => {
        // The lock runs from the failure's end: a slow check does not eat its delay.
        end((e, t) => e.attempts >= FREE_FAILURES && (e.lockedUntil = Math.max(e.lockedUntil, t + delayMs(e.attempts))));
        return worst;
      },
      abandoned: () => end((e) => (e.attempts = Math.max(0, e.attempts - 1))),
    };
  }

  /** Clears the keys (a right credential). */
  succeeded(keys: string[]): void {
    for (const k of keys) this.entries.delete(k);
  }

  private live(key: string, t: number): Entry | undefined {
    const e = this.entries.get(key);
    if (e && t - e.lastAttempt > FORGET_MS && e.lockedUntil <= t) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }
}

export const isRefusal = (a: Attempt | Refusal): a is Refusal => 'wait' in a;

/** The keys of a sign-in attempt from a client WITHOUT a valid device cookie for the account. */
export const limiterKeys = (clientAddress: string, username: string): string[] => [
  `addr:${clientAddress}`,
  `user:${username.toLowerCase()}`,
];

/**
 * The keys of a sign-in attempt: a valid device cookie for this account (its id) is limited on
 * its own failures only; anyone else on the address and the account's shared count.
 */
export const signInKeys = (clientAddress: string, username: string, deviceId: string | undefined): string[] =>
  deviceId ? [`device:${deviceId}`] : limiterKeys(clientAddress, username);

/** Onboarding: setup-code attempts are limited per address only (60 random bits need no global lock). */
export const setupKeys = (clientAddress: string): string[] => [`setup:${clientAddress}`];

/** What a 429 says, by the key that imposed it. */
export function refusalMessage(r: Refusal): string {
  const kind = r.key.slice(0, r.key.indexOf(':'));
  const what =
    kind === 'user'
      ? 'for this account (a browser that has signed in to it here before is not held back)'
      : kind === 'device'
        ? 'from this browser'
        : kind === 'session'
          ? 'in this session'
          : 'from this address';
  return `too many failed attempts ${what}: try again in ${r.wait} s`;
}
