// Paced starts: a burst of new work (a scan's first connections, a round's first reads, the
// replacements when a second's worth of probes time out together) is started a few at a time per
// turn of the event loop, so timers (the watchdog's ping) and requests get a turn in between.
// Under QEMU's TCG, or on a slow board beside other work, starting 256 connections in one turn
// held the loop for tens of seconds; natively each turn stays well under a millisecond.

/** Starts allowed in one turn of the event loop; the rest wait for the next turn. */
export const STARTS_PER_TURN = 16;

let startedThisTurn = 0;
let turnEnd: NodeJS.Immediate | undefined;

/** Resolves on the next turn of the event loop, after the timers and I/O due meanwhile. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Resolves at once while this turn has starts left, else on a later turn that has. */
export async function paced(): Promise<void> {
  for (;;) {
    // The count ends with the turn: an immediate queued now runs before any queued after it.
    turnEnd ??= setImmediate(() => {
      turnEnd = undefined;
      startedThisTurn = 0;
    });
    if (startedThisTurn < STARTS_PER_TURN) {
      startedThisTurn++;
      return;
    }
    await nextTurn();
  }
}
