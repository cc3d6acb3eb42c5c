// A reading round: the readings one polling round, one scan or one request took together. The
// central server stamps every reading of an upload batch with the batch's one time, so the
// uploader never puts readings of two rounds in one batch (server/uploader.ts); each raw reading
// keeps its round (metrics_raw.round, migration 19) so the rule holds across an outage and a reboot.
//
// A round's id is its start time (epoch ms), made unique in the process: two rounds begun in the
// same millisecond get consecutive ids. A restart begins later than any id it handed out before.

let last = 0;

/** A new round's id. */
export function newRoundId(now = Date.now()): number {
  last = Math.max(now, last + 1);
  return last;
}
