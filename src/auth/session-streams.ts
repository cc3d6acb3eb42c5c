// Long-lived channels bound to a session (the event streams of GET /events). A cookie refused on
// the next request is not enough: a stream is one request, so it would keep delivering after a
// sign-out. Each bound channel is ended at once when its session ends: the store says so
// (SessionStore.onEnd: logout, password change, eviction, an expiry it noticed), and a timer at
// the session's expiry asks the store again, so an expiry nobody else noticed ends it too.
// `recheck` covers what no event reaches this process for (`printbox-agent passwd` run beside it).
import { sessionKey, type Session, type SessionEnd, type SessionStore } from './sessions.js';

/** setTimeout's part this module takes (a simulated clock in tests): returns the cancel function. */
export interface Timers {
  setTimer(fn: () => void, ms: number): () => void;
}

const realTimers: Timers = {
  setTimer(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

// setTimeout's longest delay (about 24.8 days); a session may last 30: the timer is set again.
const MAX_DELAY_MS = 2 ** 31 - 1;

export interface Binding {
  /** The channel closed on its own: forget it (its `end` is not called). */
  unbind(): void;
  /** Asks the store whether the session still lives; ends the channel when it does not. */
  recheck(): void;
}

export class SessionStreams {
  private readonly byKey = new Map<string, Set<(why: SessionEnd) => void>>();

  constructor(
    private readonly sessions: SessionStore,
    private readonly now: () => number = Date.now,
    private readonly timers: Timers = realTimers,
  ) {
    sessions.onEnd((key, why) => {
      const enders = this.byKey.get(key);
      if (!enders) return;
      this.byKey.delete(key);
      for (const end of [...enders]) end(why);
    });
  }

  /** How many channels are bound now (for tests and status). */
  get size(): number {
    let n = 0;
    for (const set of this.byKey.values()) n += set.size;
    return n;
  }

  /** Binds a channel to the session of `token`; `end` is called once, when that session ends. */
  bind(token: string, session: Session, end: (why: SessionEnd) => void): Binding {
    const key = sessionKey(token);
    let cancelTimer = () => {};
    let done = false;
    const forget = () => {
      done = true;
      cancelTimer();
      const set = this.byKey.get(key);
      set?.delete(ender);
      if (set?.size === 0) this.byKey.delete(key);
    };
    const ender = (why: SessionEnd) => {
      if (done) return;
      forget();
      end(why);
    };
    const recheck = () => {
      if (done) return;
      // An expired session is deleted by get(), and the store's event ends this channel; one
      // ended by another process is simply gone, and ended here.
      if (!this.sessions.get(token)) ender('ended');
    };
    const arm = () => {
      const wait = Math.min(Math.max(0, session.expires - this.now()), MAX_DELAY_MS);
      cancelTimer = this.timers.setTimer(() => {
        recheck();
        if (!done) arm();
      }, wait);
    };
    const set = this.byKey.get(key) ?? new Set();
    set.add(ender);
    this.byKey.set(key, set);
    arm();
    return { unbind: forget, recheck };
  }
}
