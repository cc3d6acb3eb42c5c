// The agent's listeners: HTTPS (TLS >= 1.2) serving the app, and the optional HTTP listener that
// either redirects to HTTPS before anything else runs or serves the app itself.
import { createServer as createHttpServer, type Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import { redirectHandler } from './redirect.js';
import type { TlsPair } from './tls.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

// TLS 1.2 and 1.3, forward-secret AEAD suites only (no CBC, no RSA key exchange): what current
// browsers and central servers speak. TLS 1.3's suites are all AEAD; they are named so that the
// list is the whole truth.
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
} as const;

export interface Listeners {
  https: ReturnType<typeof createHttpsServer>;
  http?: Server;
  setCertificate(pair: TlsPair): void;
  close(): Promise<void>;
}

// Limits for a box on an untrusted network: slow or oversized requests are cut off.
function harden(server: Server, log: Logger): void {
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    log.debug({ err: err.code ?? err.message }, 'bad request from client');
    if (socket.writable && !socket.destroyed) {
      const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
      const body = status.slice(4).toLowerCase() + '\n';
      socket.end(
        `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
    } else {
      socket.destroy();
    }
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export async function startListeners(cfg: Config, tls: TlsPair, app: Handler, log: Logger): Promise<Listeners> {
  const { listen_address: host, https_port, http_port, redirect_http_to_https } = cfg.web;
  const https = createHttpsServer({ cert: tls.cert, key: tls.key, ...TLS_OPTIONS }, app);
  harden(https, log);
  await listen(https, https_port, host);
  let http: Server | undefined;
  if (http_port !== 0) {
    http = createHttpServer(redirect_http_to_https ? redirectHandler(https_port) : app);
    harden(http, log);
    await listen(http, http_port, host);
  }
  log.info({ https_port, http_port, redirect: redirect_http_to_https, address: host }, 'listening');
  return {
    https,
    http,
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
    },
  };
}
