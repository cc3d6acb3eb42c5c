// Reads a JSON request body with a size limit. Every failure answers a clear 4xx and returns
// undefined, so a handler only goes on with a parsed object.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendText } from './respond.js';

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
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > limit) {
        sendText(res, 413, `request body larger than ${limit} bytes`);
        req.destroy();
        return undefined;
      }
      chunks.push(chunk as Buffer);
    }
  } catch {
    return undefined; // the client went away; nobody is left to answer
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)));
  } catch (err) {
    sendText(res, 400, `malformed JSON body: ${(err as Error).message}`);
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    sendText(res, 400, 'JSON body must be an object');
    return undefined;
  }
  return value as Record<string, unknown>;
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
