// The agent's start-up, phase by phase, as one log line once the first request has been answered
// (power-on to HTTPS). Times are milliseconds from the process's start (Node's
// performance clock starts with the process), so the line says where a slow start went: Node
// itself, loading the agent's modules, the database, the certificate, listening, or the wait for
// the first answer. Always on: one clock read per phase.
import type { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';

/** cli.ts marks this when Node has started and before the command's modules are loaded. */
export const MAIN_MARK = 'printbox:main';

export interface PhaseLog {
  info(obj: object, msg: string): void;
}

export class StartupPhases {
  private last = 0;
  private readonly phases: Record<string, number> = {};

  constructor(private readonly clock: () => number = () => performance.now()) {
    const main = performance.getEntriesByName(MAIN_MARK)[0]?.startTime;
    if (main !== undefined) this.mark('node', main);
    this.mark('modules');
  }

  /**
   * The phase that ends now (or at `at`, ms from the process's start) is `name`. Each phase is the
   * difference of the rounded ends, so the phases add up to the rounded total exactly.
   */
  mark(name: string, at = this.clock()): void {
    this.phases[name] = Math.round(at) - Math.round(this.last);
    this.last = at;
  }

  /** Each phase's length so far, in order, and the time since the process started. */
  snapshot(): { phases_ms: Record<string, number>; total_ms: number } {
    return { phases_ms: { ...this.phases }, total_ms: Math.round(this.last) };
  }

  /**
   * Logs the phases once, when the server has answered its first request (the phase
   * `first_answer` runs from the last mark to then: the wait for a client plus the answer).
   */
  logAtFirstAnswer(server: EventEmitter, log: PhaseLog): void {
    onFirstAnswer(server, () => {
      this.mark('first_answer');
      log.info(this.snapshot(), 'start-up phases');
    });
  }
}

/** Calls `fn` once, when the server has sent its answer to the first request it took. */
export function onFirstAnswer(server: EventEmitter, fn: () => void): void {
  server.once('request', (_req: unknown, res: ServerResponse) => {
    res.once('finish', fn);
  });
}
