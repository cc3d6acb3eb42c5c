// How a statement that joins tables takes a serial to look up.
//
// SQLite's WHERE-clause constant propagation (select.c, constInsert) treats `column = ?` as a
// constant it may copy into the join's other terms, and marks the statement to be prepared again
// whenever that parameter is bound. better-sqlite3 binds on every call, so every lookup parsed and
// planned its statement anew: 24 µs instead of 9 for the latest snapshot, 58 µs instead of 12 for a
// device (docs/performance.md, "Statements prepared again at every call"). A value with an affinity,
// such as a CAST, is not propagated, and compares with a TEXT column exactly as the bare parameter.

/** The bound serial in a joined statement's `d.serial = ${BOUND_SERIAL}`. */
export const BOUND_SERIAL = 'CAST(? AS TEXT)';
