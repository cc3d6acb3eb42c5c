// GET /backup (the database as an NDJSON backup, docs/backup-format.md, as a download) and
// POST /restore (such a backup read into the database, all or nothing): what `printbox-agent
// export` and `import` do, for a technician with a browser instead of a shell.
//
// Each runs on a connection of its own, never the agent's: a backup's read transaction and a
// restore's write transaction both span awaits, and on the agent's connection every write made
// meanwhile (a polling round) would join them. On its own connection the export reads a snapshot
// while the agent goes on writing (WAL), and the agent's writes wait for a restore like for the
// CLI's import (polls keep their readings: discovery/service.ts; API writes get 503).
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { Accepts } from '@tinyhttp/accepts';
import { sendJson, sendText, sendTextAndClose } from '../respond.js';
import { databasePath } from '../../config/config.js';
import { openDatabase, type DB } from '../../store/db.js';
import { exportNdjson, importNdjson, ImportError } from '../../store/ndjson.js';
import { errorText } from '../../shared/error-text.js';

/** The largest backup POST /restore reads (a 500-printer box's years fit several times over). */
export const MAX_RESTORE_BYTES = 512 * 1024 * 1024;

export function register(app: App, ctx: AgentContext): void {
  const file = () => databasePath(ctx.config);
  /** A connection of its own, or a 503 when the database is held by this process alone (a full card). */
  const connect = (res: Parameters<typeof sendText>[0], readonly: boolean): DB | undefined => {
    try {
      return openDatabase(file(), { readonly });
    } catch (err) {
      sendText(res, 503, `the database cannot be opened a second time now: ${errorText(err)}`);
      return undefined;
    }
  };

  app.get('/backup', async (req, res) => {
    const db = connect(res, true);
    if (!db) return;
    try {
      const stamp = new Date(ctx.now()).toISOString().replace(/[:.]/g, '-');
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/x-ndjson');
      res.setHeader('Content-Disposition', `attachment; filename="printbox-backup-${stamp}.ndjson"`);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Vary', 'Accept-Encoding');
      // Gzip when the client asks (a backup through the central server's channel is a tenth the size).
      if (new Accepts(req).encodings(['identity', 'gzip']) === 'gzip') {
        res.setHeader('Content-Encoding', 'gzip');
        const gzip = createGzip();
        gzip.pipe(res);
        await exportNdjson(db, gzip);
        gzip.end();
        await finished(res);
      } else {
        await exportNdjson(db, res);
        res.end();
      }
    } catch (err) {
      // The status line is gone: cutting the connection makes the download fail visibly, and the
      // missing trailer makes a saved part refuse to import (docs/backup-format.md).
      ctx.log.error({ err: errorText(err) }, 'backup failed');
      res.destroy();
    } finally {
      db.close();
    }
  });

  app.post('/restore', async (req, res) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/x-ndjson') {
      req.resume();
      return sendText(res, 415, 'a backup must be sent as Content-Type: application/x-ndjson (the file GET /backup gives)');
    }
    const announced = Number(req.headers['content-length']);
    if (Number.isFinite(announced) && announced > MAX_RESTORE_BYTES) {
      req.resume();
      return sendText(res, 413, `backup larger than ${MAX_RESTORE_BYTES} bytes`);
    }
    if (/^100-continue$/i.test(String(req.headers.expect ?? ''))) res.writeContinue();
    const db = connect(res, false);
    if (!db) return req.resume();
    // Without a Content-Length (chunked) the limit is counted as the bytes come.
    let received = 0;
    const tooLarge = new Error(`backup larger than ${MAX_RESTORE_BYTES} bytes`);
    const encoding = String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip') {
      req.resume();
      return sendText(res, 415, `a backup may be sent as it is or gzipped (Content-Encoding: gzip), not ${encoding.slice(0, 40)}`);
    }
    const raw = encoding === 'gzip' ? req.pipe(createGunzip()) : req;
    // The limit counts the backup's own bytes (after gunzip): a small bomb cannot fill the card.
    const body = raw.pipe(
      new Transform({
        transform(chunk: Buffer, _enc, done) {
          received += chunk.length;
          done(received > MAX_RESTORE_BYTES ? tooLarge : null, chunk);
        },
      }),
    );
    // pipe() does not pass errors on: a damaged gzip stream ends the import with its error.
    if (raw !== req) raw.on('error', (err) => body.destroy(err));
    try {
      const r = await importNdjson(db, body);
      ctx.log.warn({ devices: r.devices, metrics: r.metrics, skipped: r.skipped, meter_reads: r.meter_reads, meter_reads_skipped: r.meter_reads_skipped, version: r.version }, 'backup restored');
      sendJson(res, 200, {
        devices: r.devices, metrics: r.metrics, skipped: r.skipped, meter_reads: r.meter_reads, meter_reads_skipped: r.meter_reads_skipped,
        ...(r.warning ? { warning: r.warning } : {}),
      });
    } catch (err) {
      if (err === tooLarge) return sendTextAndClose(req, res, 413, `${tooLarge.message}; nothing was restored`);
      if ((err as { code?: string }).code?.startsWith('Z_')) return sendText(res, 400, `the gzipped backup is damaged: ${errorText(err)}; nothing was restored`);
      if (err instanceof ImportError) return sendText(res, 400, `${err.message}; nothing was restored`);
      throw err; // storage (507), busy (503) or a fault (500): api/app.ts
    } finally {
      db.close();
    }
  });
}
