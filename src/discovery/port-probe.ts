// TCP port probes of a range scan: which of the printer ports (9100 raw/JetDirect, 631
// IPP, 515 LPD, 80 and 443 web) accept a connection, on exactly the addresses the scan reads by SNMP
// and never any other. A probe only connects: once the handshake completes the connection is
// reset (no FIN, no byte sent), so a raw port never sees a job, not even an empty one.
//
// Cost: a silent address costs one timeout per port, all its ports at once; connections in flight
// are capped for the whole scan (file descriptors: the unit's LimitNOFILE also holds the web
// connections and the SNMP sockets).
import net from 'node:net';
import { setMaxListeners } from 'node:events';
import { inAllowedRanges, parseIPv4 } from '../shared/ranges.js';
import type { Observation } from '../model/observation.js';
import { limiter } from './limiter.js';

/** The reference agent's printer ports, in the order they are probed. */
export const PRINTER_PORTS: readonly number[] = [9100, 631, 515, 80, 443];
/** A LAN host accepts in milliseconds; a silent address waits for ARP and gets this at most. */
export const PROBE_TIMEOUT_MS = 1000;
/** Connection attempts in flight at once, for the whole scan. */
export const PROBE_CONNECTIONS = 256;

export interface ProbeOptions {
  ports?: readonly number[];
  timeoutMs?: number;
  connections?: number;
  /** Nothing is sent outside these (empty: no restriction; docs/decisions/0017-scan-scope.md). */
  allowedRanges?: readonly string[];
  signal?: AbortSignal;
  /** Called once per address when all its ports are probed. */
  onHost?: (address: string, open: number[]) => void;
}

/** Whether `address:port` accepts a TCP connection within `timeoutMs` (false on abort). */
export function probePort(address: string, port: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const socket = net.connect({ host: address, port });
    let settled = false;
    const done = (open: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      // A reset, not a close: nothing reaches the printer's job parser.
      if (open && !socket.destroyed) socket.resetAndDestroy();
      else socket.destroy();
      resolve(open);
    };
    const abort = () => done(false);
    const timer = setTimeout(() => done(false), timeoutMs);
    signal?.addEventListener('abort', abort, { once: true });
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Probes every address's ports; resolves each address's open ports (sorted) as its own promise, so
 * that a host's record can be written as soon as both its SNMP read and its probes are done.
 * Addresses that are not IPv4 or lie outside allowedRanges are not contacted (no open ports).
 */
export function probeHosts(targets: readonly string[], opts: ProbeOptions = {}): Map<string, Promise<number[]>> {
  const ports = opts.ports ?? PRINTER_PORTS;
  const timeoutMs = opts.timeoutMs ?? PROBE_TIMEOUT_MS;
  const run = limiter(Math.max(1, opts.connections ?? PROBE_CONNECTIONS));
  // One abort listener per connection in flight, by design: on a signal of the probes' own, so the
  // caller's keeps its listener limit (the SNMP scan sets one on it).
  const local = new AbortController();
  setMaxListeners(0, local.signal);
  if (opts.signal?.aborted) local.abort();
  else opts.signal?.addEventListener('abort', () => local.abort(), { once: true });
  const signal = local.signal;
  const out = new Map<string, Promise<number[]>>();
  for (const address of targets) {
    if (out.has(address)) continue;
    if (parseIPv4(address) === null || !inAllowedRanges(address, opts.allowedRanges)) {
      out.set(address, Promise.resolve([]));
      continue;
    }
    const host = Promise.all(ports.map((p) => run(() => (signal.aborted ? Promise.resolve(false) : probePort(address, p, timeoutMs, signal))))).then((open) => {
      const found = openPorts(ports.filter((_, i) => open[i]));
      try {
        opts.onHost?.(address, found);
      } catch {
        /* a listener's error does not stop the probes */
      }
      return found;
    });
    out.set(address, host);
  }
  return out;
}

/** Sorted, unique, valid port numbers. */
export function openPorts(ports: readonly unknown[]): number[] {
  return [...new Set(ports.filter((p): p is number => Number.isInteger(p) && (p as number) > 0 && (p as number) < 65536))].sort((a, b) => a - b);
}

/** PrinterInfo.detection_reasons of a probe: "tcp 631 open", in port order. */
export function portReasons(open: readonly number[]): string[] {
  return openPorts(open).map((p) => `tcp ${p} open`);
}

const PROBE_REASON = /^tcp \d+ open$/;

/** A reason a port probe gave (replaced by the next probe, kept by reads in between). */
export function isProbeReason(reason: unknown): boolean {
  return typeof reason === 'string' && PROBE_REASON.test(reason);
}

/**
 * Whether a host that gave no SNMP answer is read by IPP: only when 631 is open. A port 9100 alone
 * identifies nothing (any raw-socket service listens there) and no printer answers IPP without 631.
 */
export function readsByIpp(open: readonly number[]): boolean {
  return open.includes(631);
}

/** Puts a probe's findings on an observation: open_ports replaced, the probe's reasons added. */
export function withProbedPorts(o: Observation, open: readonly number[]): Observation {
  const ports = openPorts([...(Array.isArray(o.printerInfo.open_ports) ? (o.printerInfo.open_ports as unknown[]) : []), ...open]);
  const reasons = Array.isArray(o.printerInfo.detection_reasons) ? (o.printerInfo.detection_reasons as string[]).filter((r) => !isProbeReason(r)) : [];
  o.printerInfo = { ...o.printerInfo, open_ports: ports, detection_reasons: [...portReasons(open), ...reasons] };
  o.portsProbed = true;
  return o;
}
