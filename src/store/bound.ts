// How a statement that joins tables takes a serial to look up.
//
// SQLite's WHERE-clause constant propagation (select.c, constInsert) treats `column = ?` as a
// constant it may copy into the join's other terms, and marks the statement to be prepared again
// whenever that parameter is bound. better-sqlite3 binds on every call, so every lookup parsed and
// planned its statement anew: a device cost 84.8 µs instead of 12.8, its latest snapshot 36.5 instead
// of 11.9 (scripts/bench/lookups.ts; docs/performance.md, "Lookups by
// serial"). A value with an affinity, such as a CAST, is not propagated, and compares with a TEXT
// column exactly as the bare parameter.

/** The bound serial in a joined statement's `d.serial = ${BOUND_SERIAL}`. */
export const BOUND_SERIAL = 'CAST(? AS TEXT)';
