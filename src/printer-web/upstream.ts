// Requests to a printer's own web server (printer-web/target.ts chose where): for the pages the box
// serves under /proxy/{serial}/ and for the sign-in the box makes for them (auto-login.ts). The
// printer's self-signed certificate is accepted here and nowhere else: these requests go to a saved
// printer's own address only. Bounded: the connection, and what is read of an answer.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { PrinterWebTarget } from './target.js';

/** Until the printer's TCP (and TLS) connection is up: an address where nothing answers. */
export const CONNECT_MS = 10_000;

/** One request to the printer; the whole answer is bounded by `signal` (the caller's time limit). */
export function printerRequest(t: PrinterWebTarget, method: string, path: string, headers: Record<string, string>, body: Buffer, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const options = { host: t.host, port: t.port, method, path, headers, signal, agent: false as const };
    const req = t.scheme === 'https' ? https.request({ ...options, rejectUnauthorized: false }, resolve) : http.request(options, resolve);
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => req.destroy(new Error(`no connection within ${CONNECT_MS} ms`)), CONNECT_MS);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A stream's whole body up to `limit` bytes; 'too large' past it, undefined when it broke off. */
export function readBounded(stream: IncomingMessage, limit: number): Promise<Buffer | 'too large' | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (v: Buffer | 'too large' | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
    };
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        stream.pause();
        finish('too large');
      } else chunks.push(c);
    });
    stream.on('end', () => finish(Buffer.concat(chunks)));
    stream.on('error', () => finish(undefined));
    stream.on('close', () => finish(stream.complete ? Buffer.concat(chunks) : undefined));
  });
}
