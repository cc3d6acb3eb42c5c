// Which web server a printer's page is fetched from: the saved record's own address, on the port
// its web page is served at, and nothing else. Nothing in a request chooses the host or the port;
// the path after /proxy/{serial} is only ever a path on that printer.
import type { Device } from '../model/device.js';
import { inAllowedRanges, parseIPv4 } from '../shared/ranges.js';
import { notAnotherHost } from '../net/own-targets.js';

export interface PrinterWebTarget {
  scheme: 'http' | 'https';
  /** The record's IPv4 address. */
  host: string;
  port: number;
  /** `scheme://host[:port]`, as the printer's own absolute links would name it. */
  origin: string;
}

export type TargetResult = { ok: true; target: PrinterWebTarget } | { ok: false; status: number; message: string };

export interface TargetRules {
  /** discovery.allowed_ranges: non-empty = the box talks to no address outside it. */
  allowedRanges: readonly string[];
  /** The box's own addresses (net/own-targets.ts ownAddresses()): never a printer, on any port. */
  ownAddresses: ReadonlySet<string>;
}

/**
 * The printer web server for `device`, or why it is refused. The scheme and port come from the
 * record's web_ui_url only when that URL names the record's own address (a printer that announces
 * `https://<its ip>/` or a port of its own); otherwise http on port 80, as the reference does.
 */
export function printerWebTarget(device: Device, rules: TargetRules): TargetResult {
  const refuse = (status: number, message: string): TargetResult => ({ ok: false, status, message });
  const serial = JSON.stringify(device.serial);
  if (!device.is_saved) return refuse(403, `device ${serial} is not saved: only a saved printer's web page is proxied`);
  if (device.is_usb) return refuse(409, `device ${serial} is a USB printer: its web page is not proxied`);
  const host = device.ip;
  if (!host || parseIPv4(host) === null) return refuse(409, `device ${serial} has no IPv4 address to proxy to`);
  // Before anything else about the address: a record saying 0.0.0.0 or 127.0.0.1 (a hostile
  // announcement, a mistyped import) would otherwise have the box fetch its own pages, on any port,
  // as the local administrator.
  const self = notAnotherHost(host, rules.ownAddresses);
  if (self) return refuse(403, `device ${serial} is at ${host}, ${self}: a printer's page is never fetched from this box itself`);
  if (!inAllowedRanges(host, rules.allowedRanges)) return refuse(403, `device ${serial} is at ${host}, outside discovery.allowed_ranges`);
  let scheme: 'http' | 'https' = 'http';
  let port = 80;
  if (device.web_ui_url) {
    let u: URL | undefined;
    try {
      u = new URL(device.web_ui_url);
    } catch {
      u = undefined;
    }
    if (u && (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname === host) {
      scheme = u.protocol === 'https:' ? 'https' : 'http';
      port = u.port ? Number(u.port) : scheme === 'https' ? 443 : 80;
    }
  }
  const defaultPort = scheme === 'https' ? 443 : 80;
  const origin = `${scheme}://${host}${port === defaultPort ? '' : `:${port}`}`;
  return { ok: true, target: { scheme, host, port, origin } };
}
