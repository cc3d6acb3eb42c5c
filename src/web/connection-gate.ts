// Caps on open connections, for a box on an untrusted network (issue 32): one count for the whole
// agent (every listener) and one per remote address (an IPv6 /64 counts as one address). A connection over either cap is destroyed as
// it is accepted, before TLS or HTTP sees it: it costs no TLS state, no parser and no timer, so a
// flood from one address cannot grow the agent's memory nor take the room of other hosts.
//
// Why these numbers (docs/image.md, docs/reliability.md): a connection whose TLS handshake is under
// way costs about 60 KiB of RSS (OpenSSL's buffers and the TLSSocket); 1,024 of them are some 60
// MiB on top of the agent's ~100 MiB, well inside the unit's MemoryMax and a 1 GB Pi. A browser
// opens at most 6 connections to a host; 128 per address leaves room for a handful of browsers
// behind one address (a NAT) and for a client's burst, while one address holds an eighth of the
// total at most.
import type { Server } from 'node:net';
import type { Socket } from 'node:net';

/** What the gate logs through: the agent's logger, or the redirect service's JSON lines. */
export interface GateLog {
  warn(obj: object, msg: string): void;
}

export const CONNECTION_LIMITS = {
  /** Open connections of the agent (all its listeners together). */
  maxConnections: 1024,
  /** Open connections from one remote address. The box's own loopback is not limited: only processes on the box reach it. */
  maxPerAddress: 128,
  /** How often a summary of refused connections is logged (one line, not one per connection). */
  reportEveryMs: 60_000,
};
export type ConnectionLimits = typeof CONNECTION_LIMITS;

// At most this many addresses are named in one report: a flood from many addresses (an IPv6
// /64 has plenty) must not grow the report itself.
const REPORT_ADDRESSES = 1000;

const isLoopback = (key: string) => key.startsWith('127.') || key === '::1';

/**
 * Whom a connection is counted against: an IPv4 address (an IPv4-mapped IPv6 address is the IPv4
 * peer it maps), or an IPv6 /64: one host on a LAN can take any number of addresses in its /64.
 */
export function addressKey(a: string): string {
  if (a.startsWith('::ffff:') && a.includes('.')) return a.slice(7);
  if (!a.includes(':')) return a;
  if (a === '::1') return a;
  const [head, tail = ''] = a.split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = a.includes('::') && tail ? tail.split(':') : [];
  const groups = a.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

export class ConnectionGate {
  private open = 0;
  private readonly byAddress = new Map<string, number>();
  private refused = { total: 0, byAddress: new Map<string, number>() };
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly log: GateLog,
    readonly limits: ConnectionLimits = CONNECTION_LIMITS,
  ) {
    this.timer = setInterval(() => this.report(), limits.reportEveryMs);
    this.timer.unref();
  }

  /** Connections open now: all of them, and from one address. */
  count(address?: string): number {
    return address === undefined ? this.open : (this.byAddress.get(addressKey(address)) ?? 0);
  }

  /**
   * Puts the gate in front of a server: its own 'connection' listeners (Node's TLS or HTTP
   * handling) only ever see connections the gate admitted.
   */
  guard(server: Server): void {
    const handlers = server.listeners('connection') as ((socket: Socket) => void)[];
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (!this.admit(socket)) return;
      for (const h of handlers) h.call(server, socket);
    });
  }

  /** Counts the socket in, or destroys it at once and says false. */
  admit(socket: Socket): boolean {
    const raw = socket.remoteAddress;
    // No address: the peer is already gone.
    if (!raw) {
      socket.destroy();
      return false;
    }
    const key = addressKey(raw);
    const mine = this.byAddress.get(key) ?? 0;
    if (this.open >= this.limits.maxConnections || (mine >= this.limits.maxPerAddress && !isLoopback(key))) {
      this.refused.total++;
      const before = this.refused.byAddress.get(key);
      if (before !== undefined || this.refused.byAddress.size < REPORT_ADDRESSES) this.refused.byAddress.set(key, (before ?? 0) + 1);
      // The peer is not read from nor answered: a reset, and the descriptor is free at once.
      socket.resetAndDestroy();
      return false;
    }
    this.open++;
    this.byAddress.set(key, mine + 1);
    socket.once('close', () => {
      this.open--;
      const n = (this.byAddress.get(key) ?? 1) - 1;
      if (n > 0) this.byAddress.set(key, n);
      else this.byAddress.delete(key);
    });
    return true;
  }

  /** Logs the connections refused since the last report, the addresses that sent most first. */
  report(): void {
    if (this.refused.total === 0) return;
    const top = [...this.refused.byAddress].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([address, n]) => ({ address, refused: n }));
    this.log.warn(
      {
        refused: this.refused.total,
        addresses: this.refused.byAddress.size >= REPORT_ADDRESSES ? `${REPORT_ADDRESSES} or more` : this.refused.byAddress.size,
        top,
        open: this.open,
        max_connections: this.limits.maxConnections,
        max_per_address: this.limits.maxPerAddress,
      },
      'connections refused: over the cap of open connections (from one address, or in all)',
    );
    this.refused = { total: 0, byAddress: new Map() };
  }

  stop(): void {
    clearInterval(this.timer);
    this.report();
  }
}
