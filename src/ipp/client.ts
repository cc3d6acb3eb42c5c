// Get-Printer-Attributes over the network (RFC 8010 3: IPP over HTTP POST; RFC 7472 for ipps://).
// One bounded request per read: a size cap on the reply, a time limit, and the service's abort
// signal. An ipps printer's certificate is self-signed (nobody on a site gives printers a CA), so
// it is not checked: this only READS public printer attributes, sends no credential and nothing
// that is stored on the printer, so a forged peer could at worst lie about a printer's counters.
import http from 'node:http';
import https from 'node:https';
import { inAllowedRanges, parseIPv4 } from '../shared/ranges.js';
import { decodeIppResponse, getPrinterAttributesRequest, printerStateOf, type IppPrinterState } from './codec.js';

/** A Get-Printer-Attributes reply is a few KiB; more than this is not one. */
export const MAX_IPP_REPLY = 1024 * 1024;

export interface IppTarget {
  /** IPv4 address (names are never resolved: the address is what the safety rules check). */
  address: string;
  port: number;
  /** The resource, e.g. "/ipp/print" (TXT rp gives "ipp/print"). */
  resource: string;
  tls: boolean;
}

export interface IppReadOptions {
  timeoutMs: number;
  /** Nothing is sent outside these (empty: no restriction; docs/decisions/0017-scan-scope.md). */
  allowedRanges?: readonly string[];
  signal?: AbortSignal;
}

/** The resource path from TXT rp ("ipp/print", "/printers/x"), else IPP Everywhere's /ipp/print. */
export function resourceOf(rp: string | undefined): string {
  const r = (rp ?? '').trim();
  if (!r || /[\s?#\\]/.test(r) || r.includes('..')) return '/ipp/print';
  return r.startsWith('/') ? r : `/${r}`;
}

export function printerUri(t: IppTarget): string {
  return `${t.tls ? 'ipps' : 'ipp'}://${t.address}:${t.port}${t.resource}`;
}

/** Reads the printer; rejects with an Error that says what went wrong (refused, timeout, not IPP). */
export async function readNetworkPrinter(t: IppTarget, opts: IppReadOptions): Promise<IppPrinterState> {
  if (parseIPv4(t.address) === null) throw new Error(`IPP: ${JSON.stringify(t.address)} is not an IPv4 address`);
  if (!inAllowedRanges(t.address, opts.allowedRanges)) throw new Error(`IPP: ${t.address} is outside the allowed ranges; not contacted`);
  if (!Number.isInteger(t.port) || t.port < 1 || t.port > 65535) throw new Error(`IPP: bad port ${t.port}`);
  const body = getPrinterAttributesRequest(printerUri(t));
  const reply = await post(t, body, opts);
  return printerStateOf(decodeIppResponse(reply));
}

function post(t: IppTarget, body: Buffer, opts: IppReadOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const lib = t.tls ? https : http;
    const req = lib.request({
      host: t.address,
      port: t.port,
      path: t.resource,
      method: 'POST',
      headers: { 'Content-Type': 'application/ipp', 'Content-Length': body.length, Connection: 'close' },
      agent: false,
      timeout: opts.timeoutMs,
      signal: opts.signal,
      ...(t.tls ? { rejectUnauthorized: false, servername: undefined } : {}),
    });
    const timer = setTimeout(() => req.destroy(new Error(`IPP: no complete reply from ${t.address}:${t.port} within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const fail = (e: Error) => {
      clearTimeout(timer);
      reject(e);
    };
    req.on('timeout', () => req.destroy(new Error(`IPP: ${t.address}:${t.port} went silent for ${opts.timeoutMs} ms`)));
    req.on('error', (e) => fail(new Error(`IPP: ${printerUri(t)}: ${e.message}`)));
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        req.destroy();
        return fail(new Error(`IPP: HTTP ${res.statusCode} from ${printerUri(t)}`));
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (declared > MAX_IPP_REPLY) {
        req.destroy();
        return fail(new Error(`IPP: reply of ${declared} bytes from ${t.address}, larger than ${MAX_IPP_REPLY}`));
      }
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_IPP_REPLY) req.destroy(new Error(`IPP: reply from ${t.address} larger than ${MAX_IPP_REPLY} bytes`));
        else parts.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve(Buffer.concat(parts));
      });
      res.on('error', (e) => fail(e));
    });
    req.end(body);
  });
}
