// A simulated clock with timers that run only when time is moved on: a whole day of a component
// that batches on timers (src/log/persistent-log.ts) runs in milliseconds, in the same order as in
// real time. Used by its unit test and by scripts/bench/log-writes.ts.
export interface SimClock {
  now(): number;
  /** setTimeout's part the components take: returns the cancel function. */
  setTimer(fn: () => void, ms: number): () => void;
  /** Moves time on by `ms`, running every timer due on the way at its own time. */
  advance(ms: number): void;
}

export function simClock(start: number): SimClock {
  let t = start;
  const timers = new Set<{ at: number; fn: () => void }>();
  return {
    now: () => t,
    setTimer(fn, ms) {
      const e = { at: t + ms, fn };
      timers.add(e);
      return () => void timers.delete(e);
    },
    advance(ms) {
      const end = t + ms;
      for (;;) {
        let due: { at: number; fn: () => void } | undefined;
        for (const e of timers) if (e.at <= end && (!due || e.at < due.at)) due = e;
        if (!due) break;
        timers.delete(due);
        t = due.at;
        due.fn();
      }
      t = end;
    },
  };
}
