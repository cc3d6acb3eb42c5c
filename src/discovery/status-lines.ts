// The status lines discovery writes on a record about where its printer is and whether it is
// there (a record's first lines, what the UI and the central server show), in one place: the
// modules that write them and the ones that clear them agree on their words.

/** A saved printer that stopped answering polls: `not answering since <time>: <why>` (merge.ts). */
export const NOT_ANSWERING = 'not answering since';

/** A printer that said goodbye or whose announcement expired: `offline: …` (announced.ts). */
export const OFFLINE = 'offline: ';

/** Lines about the printer's presence at the record's address: void once it is somewhere else. */
export function isPresenceLine(line: string): boolean {
  return line.startsWith(NOT_ANSWERING) || line.startsWith(OFFLINE);
}
