// Response helpers: plain-text errors and JSON bodies, both ending in a newline
// (docs/decisions/0003-json-bodies.md, 0004-plain-text-errors.md).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { discardInput, lingeringClose, type LingeringSocket } from '../web/lingering-close.js';

export function sendText(res: ServerResponse, status: number, message: string): void {
  const body = message.endsWith('\n') ? message : message + '\n';
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  sendJsonBody(res, status, JSON.stringify(value) + '\n');
}

/** A JSON body already made as UTF-8 chunks (BodyChunks), written corked with its Content-Length. */
export function sendJsonChunks(res: ServerResponse, status: number, chunks: Buffer[]): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', chunks.reduce((n, c) => n + c.length, 0));
  res.cork();
  for (const c of chunks) res.write(c);
  res.uncork();
  res.end();
}

/** A body that is JSON text already (with its newline). */
export function sendJsonBody(res: ServerResponse, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}


/**
 * A plain-text error after which the connection is closed (`Connection: close`) while the client
 * may still be sending a body nobody will read (413): the rest of the request is discarded, never
 * parsed, and the connection ends with lingeringClose once the answer is written, so the client
 * reads the answer instead of a reset. (Node ends a `Connection: close` response with the
 * socket's destroySoon(): end, then destroy as soon as the end is flushed.)
 */
export function sendTextAndClose(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  const socket = req.socket as LingeringSocket;
  discardInput(socket);
  socket.destroySoon = () => lingeringClose(socket);
  res.setHeader('Connection', 'close');
  sendText(res, status, message);
}
