// Bounded concurrency for discovery's reads and probes.
import { paced } from '../shared/pace.js';

/** Runs at most `n` of the given tasks at once, in the order given, each started paced (shared/pace.ts). */
export function limiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    // A finished task hands its slot straight to the next one waiting.
    if (active >= n) await new Promise<void>((r) => waiting.push(r));
    else active++;
    try {
      await paced();
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}
