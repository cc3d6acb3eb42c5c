// A schedule kept from targets, not from the time each run happened: the next run is due one
// interval after the previous one was DUE. Comparing "now - last run >= interval" at a minute
// tick loses a whole interval to a few milliseconds of drift (the tick after a 1-minute round
// comes 59,997 ms after it, and waits for the next), so a 1-minute poll read every 2 minutes.
//
// A run is taken at the first check within `slack` of its due time. Missed runs (a round longer
// than the interval, a suspended VM, a clock stepped forward) are not made up: the next one is the
// first due time still ahead. A clock stepped back, or an interval shortened, plans afresh from now.

export class DueTimes {
  private next: number | undefined;

  /** `slackMs`: how early a check may take a run (at most half the interval is used). */
  constructor(private readonly slackMs = 30_000) {}

  /** Plans the first run one interval after `t` (a run at start-up is the caller's). */
  start(t: number, intervalMs: number): void {
    this.next = t + intervalMs;
  }

  /** When the next run is due (epoch ms), once started. */
  get dueAt(): number | undefined {
    return this.next;
  }

  /** Whether a run is due at `t`; when it is, the one after it is planned. */
  take(t: number, intervalMs: number): boolean {
    if (this.next === undefined || this.next - t > intervalMs) {
      this.start(t, intervalMs);
      return false;
    }
    if (t < this.next - Math.min(this.slackMs, intervalMs / 2)) return false;
    this.next += intervalMs;
    if (this.next <= t) this.next += Math.ceil((t - this.next + 1) / intervalMs) * intervalMs;
    return true;
  }
}
