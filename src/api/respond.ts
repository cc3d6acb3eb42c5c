// Response helpers: plain-text errors and JSON bodies, both ending in a newline (decisions.md).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

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

/** The storage error's own message, for the contract's "<prefix>: <storage error>" bodies. */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * How a connection the agent has decided to close is closed: the answer is flushed and the sending
 * side shut (FIN), and whatever the client still sends is read and thrown away until it closes its
 * side, for at most `ms` and at most `bytes`; then the socket is destroyed. Destroying a socket
 * with unread input at once makes the kernel answer with a reset, and a client still sending its
 * body (Node's http client, browsers) then reports ECONNRESET instead of reading the answer.
 */
export const LINGER = { ms: 2_000, bytes: 16 * 1024 * 1024 } as const;

/**
 * Stops parsing requests on this connection: what arrives from now on is counted and discarded
 * (so no further request on it is ever served), and the socket is destroyed past LINGER.bytes.
 * Node's HTTP parser reads the socket through a 'data' listener (or natively, undone by Node when
 * a 'data' listener is added): removing it and adding ours detaches the parser.
 */
export function discardInput(socket: Socket): void {
  if (socket.destroyed || (socket as LingeringSocket)[DISCARDING]) return;
  (socket as LingeringSocket)[DISCARDING] = true;
  for (const l of socket.listeners('data')) socket.removeListener('data', l as (...args: unknown[]) => void);
  let seen = 0;
  socket.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > LINGER.bytes) socket.destroy();
  });
  socket.resume();
}

/** Ends the connection after what was written to it without resetting it (see LINGER). */
export function lingeringClose(socket: Socket): void {
  if (socket.destroyed) return;
  discardInput(socket);
  const timer = setTimeout(() => socket.destroy(), LINGER.ms);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy()); // the client closed its side: nothing more to wait for
  socket.end();
}

const DISCARDING = Symbol('printbox.discardingInput');
type LingeringSocket = Socket & { [DISCARDING]?: boolean; destroySoon?: () => void };

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
