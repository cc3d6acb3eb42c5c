// Closing a connection without resetting it: the listeners close with it a connection they refuse,
// and the API's answers that end their connection (api/respond.ts) close with it too.
import type { Socket } from 'node:net';

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

export const DISCARDING = Symbol('printbox.discardingInput');
export type LingeringSocket = Socket & { [DISCARDING]?: boolean; destroySoon?: () => void };
