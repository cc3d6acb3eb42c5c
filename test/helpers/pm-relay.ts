// Test helper: an HTTPS relay in front of PrintMaster's server (test/helpers/printmaster.ts) that
// can refuse the WebSocket channel while it passes every plain HTTP request through: the way to
// have "the WebSocket down, HTTP up" with the real server behind it. It serves the server's own
// certificate and key, so an agent that trusts the server's CA file trusts the relay too.
//
//   startRelay(pm)          -> a Relay on a free loopback port
//   Relay.url               -> give it to the agent as its server URL
//   Relay.refuseChannel(on) -> on: every WebSocket upgrade is answered 503 and open ones are cut
//   Relay.requests          -> what went through: {method, path, status, at}; upgrades have method "UPGRADE"
//   Relay.close()
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { freePort } from './agent.js';
import type { PmServer } from './printmaster.js';

export interface RelayedRequest {
  method: string;
  /** The path without its query (the WebSocket's carries the agent token). */
  path: string;
  /** 0 while the answer has not come (or never came). */
  status: number;
  at: number;
}

export interface Relay {
  url: string;
  requests: RelayedRequest[];
  refuseChannel(on: boolean): void;
  close(): Promise<void>;
}

export async function startRelay(pm: PmServer): Promise<Relay> {
  const ca = readFileSync(pm.caFile);
  const upstream = { host: '127.0.0.1', port: pm.port, ca, checkServerIdentity: () => undefined };
  const requests: RelayedRequest[] = [];
  const channels = new Set<Socket>();
  let refusing = false;
  const note = (method: string, url: string | undefined): RelayedRequest => {
    const r = { method, path: (url ?? '').split('?')[0], status: 0, at: Date.now() };
    requests.push(r);
    return r;
  };

  const server = https.createServer(
    { cert: readFileSync(join(pm.dir, 'certs/server.crt')), key: readFileSync(join(pm.dir, 'certs/server.key')) },
    (req, res) => {
      const seen = note(req.method ?? '', req.url);
      const out = https.request({ ...upstream, method: req.method, path: req.url, headers: req.headers }, (up) => {
        seen.status = up.statusCode ?? 0;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      out.on('error', () => res.destroy());
      req.pipe(out);
    },
  );
  server.on('upgrade', (req, socket: Socket, head: Buffer) => {
    const seen = note('UPGRADE', req.url);
    if (refusing) {
      seen.status = 503;
      socket.end('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    const up = tls.connect(upstream, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      up.write(lines.join('\r\n') + '\r\n\r\n');
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.once('data', (b: Buffer) => {
      seen.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(b.toString('latin1'))?.[1] ?? 0);
    });
    channels.add(socket);
    const end = () => {
      channels.delete(socket);
      up.destroy();
      socket.destroy();
    };
    socket.on('close', end).on('error', end);
    up.on('close', end).on('error', end);
  });

  const port = await freePort();
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  return {
    url: `https://127.0.0.1:${port}`,
    requests,
    refuseChannel(on) {
      refusing = on;
      if (on) for (const s of channels) s.destroy();
    },
    close: () =>
      new Promise<void>((ok) => {
        for (const s of channels) s.destroy();
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
