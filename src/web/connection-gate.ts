// Caps on open connections, for a box on an untrusted network: one count for the whole
// agent (every listener) and one per remote address (an IPv6 /64 counts as one address). A
// connection over a cap is reset as it is accepted, before TLS or HTTP sees it: it costs no TLS
// state, no parser and no timer, so a flood from one address neither grows the agent's memory nor
// takes the room of other hosts. With the room all taken (a flood from many addresses), the
// address holding most gives up its oldest connection to a host holding fewer (admit()).
//
// Why these numbers (docs/image.md, docs/reliability.md): a connection held by the box before its
// TLS handshake ends (idle, or a few bytes of a ClientHello) measured about 40 KiB of RSS, so the
// 1,024 of a full cap are some 40 MiB on top of the agent's ~90 MiB, well inside the unit's
// MemoryMax (256 MiB) and a 1 GB Pi, and 3.7 KiB of JS heap each is 4 MiB of the 96 MiB heap. A
// browser opens at most 6 connections to a host; 128 per address leaves room for several browsers
// behind one address (a NAT) and for a client's burst, while one address holds an eighth of the
// whole at most.
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
  // Each address's open connections, oldest first (a Set keeps the order they were added in).
  private readonly byAddress = new Map<string, Set<Socket>>();
  private refused = { total: 0, evicted: 0, byAddress: new Map<string, number>() };
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
    return address === undefined ? this.open : (this.byAddress.get(addressKey(address))?.size ?? 0);
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

  /**
   * Counts the socket in, or destroys it at once and says false. When all connections are taken
   * (a flood from many addresses), a newcomer from an address holding far fewer than the address
   * holding most still gets in: that address's oldest connection makes room (makeRoom). So the flood's
   * addresses share the room among themselves, and a host that holds a connection or two (a
   * technician's browser) is never the one pushed out while any address holds more.
   */
  admit(socket: Socket): boolean {
    const raw = socket.remoteAddress;
    // No address: the peer is already gone.
    if (!raw) {
      socket.destroy();
      return false;
    }
    const key = addressKey(raw);
    const mine = this.byAddress.get(key)?.size ?? 0;
    const overAddress = mine >= this.limits.maxPerAddress && !isLoopback(key);
    if (overAddress || (this.open >= this.limits.maxConnections && !this.makeRoom(mine))) {
      this.refused.total++;
      const before = this.refused.byAddress.get(key);
      if (before !== undefined || this.refused.byAddress.size < REPORT_ADDRESSES) this.refused.byAddress.set(key, (before ?? 0) + 1);
      // The peer is not read from nor answered: a reset, and the descriptor is free at once.
      socket.resetAndDestroy();
      return false;
    }
    let set = this.byAddress.get(key);
    if (!set) this.byAddress.set(key, (set = new Set()));
    set.add(socket);
    this.open++;
    socket.once('close', () => this.forget(key, socket));
    return true;
  }

  /** Takes a socket out of the count (at its close, or when it is evicted: whichever comes first). */
  private forget(key: string, socket: Socket): void {
    const set = this.byAddress.get(key);
    if (!set?.delete(socket)) return;
    this.open--;
    if (set.size === 0) this.byAddress.delete(key);
  }

  /**
   * Resets the oldest connection of the address holding most, if it holds at least twice as many
   * as the newcomer's address would: a host holding nothing gets in against any address holding 2
   * or more, while the flood's own addresses, all holding about as many, are refused (cheaply: no
   * connection is made room for only to be pushed out again a moment later).
   */
  private makeRoom(mine: number): boolean {
    let heaviest: [string, Set<Socket>] | undefined;
    for (const entry of this.byAddress) if (!heaviest || entry[1].size > heaviest[1].size) heaviest = entry;
    if (!heaviest || heaviest[1].size < 2 * (mine + 1)) return false;
    const oldest = heaviest[1].values().next().value as Socket;
    this.forget(heaviest[0], oldest);
    // A reset of the raw socket ends the TLS socket on it as well (they share the handle).
    oldest.resetAndDestroy();
    this.refused.evicted++;
    return true;
  }

  /** Logs the connections refused since the last report, the addresses that sent most first. */
  report(): void {
    if (this.refused.total === 0 && this.refused.evicted === 0) return;
    const top = [...this.refused.byAddress].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([address, n]) => ({ address, refused: n }));
    this.log.warn(
      {
        refused: this.refused.total,
        evicted: this.refused.evicted,
        addresses: this.refused.byAddress.size >= REPORT_ADDRESSES ? `${REPORT_ADDRESSES} or more` : this.refused.byAddress.size,
        top,
        open: this.open,
        max_connections: this.limits.maxConnections,
        max_per_address: this.limits.maxPerAddress,
      },
      'connections refused: over the cap of open connections (from one address, or in all; evicted: the oldest of the address holding most, to let in a host holding fewer)',
    );
    this.refused = { total: 0, evicted: 0, byAddress: new Map() };
  }

  stop(): void {
    clearInterval(this.timer);
    this.report();
  }
}
