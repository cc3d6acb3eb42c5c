// What WS-Discovery (wsd.ts) and SSDP (ssdp.ts) share: the box's own IPv4 interfaces, and a query
// sent to a multicast group from each of them. A query goes out of every interface on its own
// socket bound to that interface's address (no default route is needed, and answers, sent unicast
// to the query's source, come back on the socket that asked). TTL 1: a query never leaves the
// box's own links (nothing beyond its own subnets: docs/decisions/0017-scan-scope.md).
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { networkInterfaces } from 'node:os';
import type { Logger } from '../log/logger.js';
import { errorText } from '../shared/error-text.js';

/** The box's own non-loopback IPv4 addresses. */
export function ownIPv4Addresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) out.push(a.address);
  return [...new Set(out)];
}

export interface QueryRound {
  close(): void;
}

/**
 * Sends `payload` to group:port from every own interface; each answer (a datagram of at most
 * `maxBytes`, larger ones dropped unread) goes to onMessage until the round is closed, at the
 * latest after lingerMs.
 */
export function queryEachInterface(o: {
  payload: Buffer;
  group: string;
  port: number;
  lingerMs: number;
  maxBytes: number;
  log: Logger;
  what: string;
  onMessage(msg: Buffer, from: RemoteInfo): void;
}): QueryRound {
  const sockets: Socket[] = [];
  const close = () => {
    clearTimeout(timer);
    for (const s of sockets.splice(0)) s.close();
  };
  const timer = setTimeout(close, o.lingerMs);
  timer.unref();
  for (const address of ownIPv4Addresses()) {
    const s = createSocket('udp4');
    sockets.push(s);
    s.on('error', (err) => o.log.warn({ err: err.message, interface: address }, `${o.what}: socket error`));
    s.on('message', (msg, from) => {
      if (msg.length <= o.maxBytes) o.onMessage(msg, from);
    });
    s.bind({ address, port: 0 }, () => {
      try {
        s.setMulticastTTL(1);
        s.setMulticastLoopback(false);
        s.setMulticastInterface(address);
        s.send(o.payload, o.port, o.group, (err) => {
          if (err) o.log.warn({ err: err.message, interface: address }, `${o.what}: not sent`);
        });
      } catch (err) {
        o.log.warn({ err: errorText(err), interface: address }, `${o.what}: not sent`);
      }
    });
  }
  return { close };
}
