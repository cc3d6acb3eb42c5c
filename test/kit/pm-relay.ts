// Test helper: an HTTPS relay in front of PrintMaster's server (test/kit/printmaster.ts) that
// refuses the WebSocket channel (503 to every upgrade) and passes every plain HTTP request
// through: the way to have "the WebSocket down, HTTP up" with the real server behind it. It
// serves the server's own certificate and key, so an agent that trusts the server's CA file
// trusts the relay too.
//
//   startRelay(pm)          -> a Relay on a free loopback port
//   Relay.url               -> give it to the agent as its server URL
//   Relay.requests          -> what went through: {method, path, status, at}; upgrades have method "UPGRADE"
//   Relay.refused           -> paths answered 503 here (not passed on) while they are in the set
//   Relay.loseAnswer        -> paths whose next request goes to the server but whose answer is lost (the
//                              connection is cut once the server has answered); each path once
//   Relay.captured          -> paths whose request bodies are kept (as text) in their RelayedRequest
//   Relay.close()
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { freePort } from './agent.js';
import type { PmServer } from './printmaster.js';

export interface RelayedRequest {
  method: string;
  /** The path without its query (the WebSocket's carries the agent token). */
  path: string;
  /** 0 while the answer has not come (or never came). */
  status: number;
  /** The server answered but the relay cut the connection instead of passing the answer on. */
  lost?: boolean;
  /** The request's body, for paths in Relay.captured. */
  body?: string;
  at: number;
}

export interface Relay {
  url: string;
  requests: RelayedRequest[];
  refused: Set<string>;
  loseAnswer: Set<string>;
  captured: Set<string>;
  close(): Promise<void>;
}

export async function startRelay(pm: PmServer): Promise<Relay> {
  const ca = readFileSync(pm.caFile);
  const upstream = { host: '127.0.0.1', port: pm.port, ca, checkServerIdentity: () => undefined };
  const requests: RelayedRequest[] = [];
  const refused = new Set<string>();
  const loseAnswer = new Set<string>();
  const captured = new Set<string>();
  const note = (method: string, url: string | undefined): RelayedRequest => {
    const r = { method, path: (url ?? '').split('?')[0], status: 0, at: Date.now() };
    requests.push(r);
    return r;
  };

  const server = https.createServer(
    { cert: readFileSync(join(pm.dir, 'certs/server.crt')), key: readFileSync(join(pm.dir, 'certs/server.key')) },
    (req, res) => {
      const seen = note(req.method ?? '', req.url);
      if (refused.has(seen.path)) {
        seen.status = 503;
        req.resume();
        res.writeHead(503, { 'content-type': 'text/plain' }).end('refused by the test relay\n');
        return;
      }
      const lose = loseAnswer.delete(seen.path);
      const out = https.request({ ...upstream, method: req.method, path: req.url, headers: req.headers }, (up) => {
        seen.status = up.statusCode ?? 0;
        if (lose) {
          seen.lost = true;
          up.resume();
          up.on('end', () => res.destroy());
          return;
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      out.on('error', () => res.destroy());
      if (captured.has(seen.path)) {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => (seen.body = Buffer.concat(chunks).toString('utf8')));
      }
      req.pipe(out);
    },
  );
  server.on('upgrade', (req, socket: Socket) => {
    note('UPGRADE', req.url).status = 503;
    socket.end('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });

  const port = await freePort();
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  return {
    url: `https://127.0.0.1:${port}`,
    requests,
    refused,
    loseAnswer,
    captured,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
