// Reads a JSON request body with a size limit. Every failure answers a clear 4xx and returns
// undefined, so a handler only goes on with a parsed object.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendText, sendTextAndClose } from './respond.js';
import { inheritedKeyProblem } from '../model/inherited-keys.js';
import { errorText } from '../shared/error-text.js';

const DEFAULT_LIMIT = 64 * 1024;

export async function readJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit = DEFAULT_LIMIT,
): Promise<Record<string, unknown> | undefined> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    sendText(res, 415, 'request body must be JSON (Content-Type: application/json)');
    req.resume();
    return undefined;
  }
  const tooLarge = `request body larger than ${limit} bytes`;
  // Announced too large: answered before a byte of it is read.
  const announced = Number(req.headers['content-length']);
  if (Number.isFinite(announced) && announced > limit) {
    sendTextAndClose(req, res, 413, tooLarge);
    return undefined;
  }
  // The client waits for this before it sends the body (web/listeners.ts, checkContinue).
  if (/^100-continue$/i.test(String(req.headers.expect ?? ''))) res.writeContinue();
  const raw = await readLimited(req, limit);
  if (raw === 'too large') {
    // The client may still be sending: close without a reset, so that it reads the 413 (respond.ts).
    sendTextAndClose(req, res, 413, tooLarge);
    return undefined;
  }
  if (raw === undefined) return undefined; // the client went away (or timed out: 408 from the listener); nobody is left to answer
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch (err) {
    sendText(res, 400, `malformed JSON body: ${errorText(err)}`);
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    sendText(res, 400, 'JSON body must be an object');
    return undefined;
  }
  // Before any handler sees it: a sign-in form, a device update and a settings merge alike.
  const inherited = inheritedKeyProblem(value);
  if (inherited) {
    sendText(res, 400, `JSON body: ${inherited}`);
    return undefined;
  }
  return value as Record<string, unknown>;
}

/**
 * The body, or 'too large' as soon as it passes `limit` (the rest is left unread), or undefined when
 * the request ends early (client gone, connection closed by a timeout). Events rather than an async
 * iterator: leaving a `for await` over the request destroys it, and with it the socket.
 */
function readLimited(req: IncomingMessage, limit: number): Promise<Buffer | 'too large' | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (value: Buffer | 'too large' | undefined) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish('too large');
      } else chunks.push(chunk);
    };
    const onEnd = () => finish(Buffer.concat(chunks));
    const onClose = () => finish(req.complete ? Buffer.concat(chunks) : undefined);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', () => finish(undefined)); // stays: an abort later is not an uncaught error
  });
}

/** A required string field, or a 400 naming it. */
export function requireString(body: Record<string, unknown>, field: string, res: ServerResponse): string | undefined {
  const v = body[field];
  if (typeof v !== 'string' || v === '') {
    sendText(res, 400, v === undefined ? `missing field ${field}` : `field ${field} must be a non-empty string`);
    return undefined;
  }
  return v;
}

/** A small JSON body of required strings (sign-in forms): the fields, or undefined after a 4xx. */
export async function readStringFields<K extends string>(
  req: IncomingMessage,
  res: ServerResponse,
  fields: readonly K[],
): Promise<Record<K, string> | undefined> {
  const body = await readJsonBody(req, res, 8 * 1024);
  if (!body) return undefined;
  const out = {} as Record<K, string>;
  for (const f of fields) {
    const v = requireString(body, f, res);
    if (v === undefined) return undefined;
    out[f] = v;
  }
  return out;
}
