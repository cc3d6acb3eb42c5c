// A CSV file as the box writes it, streamed by the API (api/csv.ts) or made whole for an e-mail's
// attachment (notify/order-list-mail.ts).
//
// The file: RFC 4180 (CRLF line ends, fields with a comma, quote or line break quoted, quotes
// doubled), UTF-8 with a byte order mark (Excel, the tool a dealer opens it with, reads UTF-8 only
// with one; csv-parse and most importers skip it), a header row. csv-stringify writes it.
// Formula injection: a text field that begins with `=`, `+`, `-`, `@`, a tab or a carriage return
// is written with a leading apostrophe (`'=HYPERLINK(...)`), which spreadsheets show as text and
// never evaluate (OWASP's advice). Numbers are numbers, never prefixed (a negative delta stays -5).
import type { Options } from 'csv-stringify';
import { stringify as stringifySync } from 'csv-stringify/sync';

/** A cell: text, a number, or empty (null/undefined). */
export type Cell = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;

/** A text cell as written: prefixed with an apostrophe when a spreadsheet would read it as a formula. */
export function safeText(v: string): string {
  return FORMULA_START.test(v) ? `'${v}` : v;
}

/** The file's rules (see the top of this file), for a stream and for a small file made whole. */
export function csvOptions(header: string[]): Options {
  return {
    header: true,
    columns: header,
    bom: true,
    record_delimiter: 'windows',
    cast: { string: safeText, boolean: (b) => (b ? 'true' : 'false') },
  };
}

/** A small CSV file whole (an e-mail's attachment: the order list), byte for byte what sendCsv streams. */
export function csvText(header: string[], rows: Cell[][]): string {
  return stringifySync(rows, csvOptions(header));
}

/** A file name's date part: the day of `ms` in UTC. */
export const fileDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
