// CSV answers: the printers list, a printer's meter history, the billing reads of a period and the
// order list, each as JSON by default and as CSV with `format=csv` (one rule for every endpoint
// that offers CSV: a download link can set a query parameter, not a header, and a browser's
// navigation sends its own Accept). The file's own rules are shared/csv-file.ts's.
//
// Streamed: rows go from their source (a SQLite statement iterated on a connection of the
// request's own, like GET /backup's) through the stringifier to the socket with Node's stream
// backpressure, so a slow client holds one buffer of rows, never the whole file.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { csvOptions, type Cell } from '../shared/csv-file.js';
import type { AgentContext } from './context.js';
import { queryOf } from './query.js';
import { sendText } from './respond.js';
import { databasePath } from '../config/config.js';
import { openDatabase, type DB } from '../store/db.js';
import { errorText } from '../shared/error-text.js';

/** The answer's format: `json` (absent or `format=json`), `csv`, or the 400's message. */
export function formatOf(req: IncomingMessage): 'json' | 'csv' | string {
  const f = queryOf(req).get('format');
  if (f === null || f === '' || f === 'json') return 'json';
  if (f === 'csv') return 'csv';
  return 'invalid format parameter: json or csv';
}

/** Bytes gathered before a write: the stringifier gives a chunk a row, each a TLS record and a syscall alone. */
const CHUNK_BYTES = 16 * 1024;

/** Joins the stringifier's small chunks into writes of about CHUNK_BYTES (the last one shorter). */
function batched(): Transform {
  let parts: Buffer[] = [];
  let size = 0;
  const take = () => {
    const out = Buffer.concat(parts, size);
    parts = [];
    size = 0;
    return out;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      parts.push(chunk);
      size += chunk.length;
      done(null, size >= CHUNK_BYTES ? take() : undefined);
    },
    flush(done) {
      done(null, size ? take() : undefined);
    },
  });
}

/**
 * Streams `rows` as a CSV download named `filename`. The status is sent with the first bytes, so a
 * failure after it cuts the connection (the download fails visibly rather than ending short).
 */
export async function sendCsv(
  ctx: Pick<AgentContext, 'log'>, res: ServerResponse, filename: string, header: string[], rows: Iterable<Cell[]> | AsyncIterable<Cell[]>,
): Promise<void> {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/csv; charset=utf-8; header=present');
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  const csv = stringify(csvOptions(header));
  try {
    await pipeline(Readable.from(rows, { objectMode: true, highWaterMark: 64 }), csv, batched(), res);
  } catch (err) {
    if (!res.destroyed) res.destroy();
    ctx.log.warn({ file: filename, err: errorText(err) }, 'CSV export ended early');
  }
}

/**
 * A read-only connection of the request's own (an export's statement is iterated across awaits,
 * which on the agent's connection would refuse every write meanwhile), or a 503 when the database
 * cannot be opened twice now (a full card: the agent holds it alone).
 */
export function exportConnection(ctx: Pick<AgentContext, 'config'>, res: ServerResponse): DB | undefined {
  try {
    return openDatabase(databasePath(ctx.config), { readonly: true });
  } catch (err) {
    sendText(res, 503, `the database cannot be opened a second time now: ${errorText(err)}`);
    return undefined;
  }
}
