// The agent's listeners: HTTPS (TLS >= 1.2) serving the app, and the optional HTTP listener that
// either redirects to HTTPS before anything else runs or serves the app itself.
import { createServer as createHttpServer, type Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { constants as cryptoConstants } from 'node:crypto';
import { lingeringClose } from './lingering-close.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import { redirectHandler } from './redirect.js';
import { ConnectionGate } from './connection-gate.js';
import type { TlsPair } from './tls.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

// TLS 1.2 and 1.3, forward-secret AEAD suites only (no CBC, no RSA key exchange): what current
// browsers and central servers speak. TLS 1.3's suites are all AEAD; they are named so that the
// list is the whole truth. Renegotiation is off (SSL_OP_NO_RENEGOTIATION): TLS 1.3 has none, and in
// TLS 1.2 a client asking for one is refused with an alert instead of costing the box a handshake.
export const TLS_OPTIONS = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: true,
  secureOptions: cryptoConstants.SSL_OP_NO_RENEGOTIATION,
} as const;

/**
 * A TLS handshake must be done within this from the connection's first moment (Node's default is
 * 120 s): a connection that sends nothing, or a few bytes of a ClientHello, holds its TLS state
 * (about 40 KiB of RSS) no longer than this. A Pi answers a handshake in milliseconds; 10 s leaves
 * room for a phone on poor Wi-Fi.
 */
export const HANDSHAKE_TIMEOUT_MS = 10_000;

export interface Listeners {
  https: ReturnType<typeof createHttpsServer>;
  http?: Server;
  /** The caps on open connections, shared by both listeners. */
  connections: ConnectionGate;
  setCertificate(pair: TlsPair): void;
  close(): Promise<void>;
}

/**
 * Limits for a box on an untrusted network: slow or oversized requests are cut off. The headers of a
 * request must be complete within headersTimeout, the whole request (body included) within
 * requestTimeout, both counted from its first byte; Node checks them every checkInterval (its
 * default, 30 s, would let a 15 s limit run to 45 s).
 */
export const HTTP_LIMITS = {
  headersTimeout: 15_000,
  requestTimeout: 60_000,
  keepAliveTimeout: 5_000,
  checkInterval: 1_000,
  maxHeadersCount: 100,
};
export type HttpLimits = typeof HTTP_LIMITS;

/** The seconds of a limit, for messages ("15 s", "0.5 s"). */
const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/**
 * The status line and message for a request Node's HTTP layer refused (`clientError`). A timeout
 * names what was not received in time: the headers (no request in progress on the connection, or
 * one whose headers are incomplete) or the body (headers parsed, body incomplete).
 */
function transportAnswer(err: NodeJS.ErrnoException, socket: Socket, server: Server): [string, string] {
  if (err.code === 'HPE_HEADER_OVERFLOW') return ['431 Request Header Fields Too Large', 'request header fields too large'];
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    const incoming = (socket as Socket & { parser?: { incoming?: IncomingMessage | null } }).parser?.incoming;
    return incoming && !incoming.complete
      ? ['408 Request Timeout', `request timeout: the request body was not received within ${seconds(server.requestTimeout)}`]
      : ['408 Request Timeout', `request timeout: the request headers were not received within ${seconds(server.headersTimeout)}`];
  }
  return ['400 Bad Request', 'bad request'];
}

/**
 * Applies the limits, and answers what Node's HTTP layer refuses (malformed, too large, too slow).
 * A connection that sends nothing at all is closed at headersTimeout as well (with a 408).
 */
export function harden(server: Server, log: { debug(obj: object, msg: string): void }, limits: HttpLimits = HTTP_LIMITS): void {
  server.headersTimeout = limits.headersTimeout;
  server.requestTimeout = limits.requestTimeout;
  server.keepAliveTimeout = limits.keepAliveTimeout;
  // Read when the server starts listening (setupConnectionsTracking), so setting it here is in time.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = limits.checkInterval;
  server.maxHeadersCount = limits.maxHeadersCount;
  // `Expect: 100-continue`: Node would say "go on" to every such request before any route looked
  // at it, so a client announcing a body too large would send it all and only then read the 413.
  // The body's reader decides instead (api/body.ts): 100 Continue only for a body it will read.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    log.debug({ err: err.code ?? err.message }, 'bad request from client');
    // As Node itself: answer only while nothing of a response is on the wire yet (and never to a
    // client that reset the connection).
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || socket.destroyed || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, message] = transportAnswer(err, socket, server);
    const body = message + '\n';
    socket.write(
      `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    // Not destroyed at once: a client still sending would see a reset instead of the answer.
    lingeringClose(socket);
  });
}

/** Why a listener could not start, naming the address, the port and the config keys. */
export class ListenError extends Error {
  constructor(
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

function listenProblem(err: NodeJS.ErrnoException, host: string, port: number, portKey: string): ListenError {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const hint =
    err.code === 'EADDRINUSE' ? 'the port is already in use (another process, or the other listener of this agent)'
    : err.code === 'EADDRNOTAVAIL' ? 'the address is not one of this machine\'s'
    : err.code === 'EACCES' ? 'permission denied (a port below 1024 needs CAP_NET_BIND_SERVICE)'
    : err.code === 'EAFNOSUPPORT' ? 'this machine has no IPv6'
    : err.message;
  return new ListenError(err.code, `cannot listen on ${where} (web.listen_address = ${JSON.stringify(host)}, ${portKey} = ${port}): ${hint}`);
}

/**
 * Connections the kernel queues for the agent to accept (capped by net.core.somaxconn, 4,096 on
 * current kernels). Node's 511 overflows under a flood: the kernel then drops new SYNs, and another
 * host's connection waits for its retransmission (1 s, then 3 s). Queued, it waits only for the
 * agent to accept (and reset, over a cap) what is ahead of it: tens of microseconds each.
 */
export const LISTEN_BACKLOG = 4096;

/** Listens on host:port; a failure is a ListenError naming the address, the port and its config key. */
export function listen(server: Server, port: number, host: string, portKey: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => reject(listenProblem(err, host, port, portKey));
    server.once('error', onError);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

export async function startListeners(cfg: Config, tls: TlsPair, app: Handler, log: Logger): Promise<Listeners> {
  const { listen_address: host, https_port, http_port, redirect_http_to_https } = cfg.web;
  const connections = new ConnectionGate(log);
  const https = createHttpsServer({ cert: tls.cert, key: tls.key, ...TLS_OPTIONS, handshakeTimeout: HANDSHAKE_TIMEOUT_MS }, app);
  harden(https, log);
  connections.guard(https);
  await listen(https, https_port, host, 'web.https_port').catch((err) => {
    connections.stop();
    throw err;
  });
  let http: Server | undefined;
  if (http_port !== 0) {
    http = createHttpServer(redirect_http_to_https ? redirectHandler(https_port) : app);
    harden(http, log);
    connections.guard(http);
    try {
      await listen(http, http_port, host, 'web.http_port');
    } catch (err) {
      // Not left listening: the agent is exiting (an open listener would keep it alive).
      await new Promise<void>((resolve) => https.close(() => resolve()));
      connections.stop();
      throw err;
    }
  }
  log.info({ https_port, http_port, redirect: redirect_http_to_https, address: host }, 'listening');
  return {
    https,
    http,
    connections,
    setCertificate: (pair) => https.setSecureContext({ cert: pair.cert, key: pair.key, ...TLS_OPTIONS }),
    close: async () => {
      const closing = [https, http].filter((s): s is Server => Boolean(s)).map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      );
      await Promise.all(closing);
      connections.stop();
    },
  };
}
