// Is an IPP service (announced by DNS-SD, or answering Get-Printer-Attributes) a print QUEUE on a
// print server rather than a printer? A CUPS server that shares a queue announces it and answers
// IPP like a printer, but it has no counters or supplies of its own, a uuid of its own, and a
// make-and-model taken from its driver ("Printer - IPP Everywhere", "Local Raw Printer"): listed
// as a printer, it is a second, empty record of a printer the site already has (or of a USB one).
//
// What CUPS says of itself (observed on CUPS 2.4.2, test/fixtures/ipp/README.md):
//   - DNS-SD TXT `printer-type=0x…` (its CUPS_PRINTER_* bits, in hex) with `rp=printers/<name>`
//     or `rp=classes/<name>`, `adminurl=https://<host>:631/printers/<name>`;
//   - IPP `printer-type` (an enum CUPS adds; printers send none), `printer-uri-supported` with a
//     /printers/<name> or /classes/<name> path, and `device-uri` (what the queue prints to),
//     which CUPS shows to any client allowed to ask, signed in or not.
// CUPS_PRINTER_* bits (cups/cups.h): 0x1 class, 0x2 remote, 0x4 black, 0x8 colour, 0x10 duplex,
// 0x1000000 discovered (a queue made for a printer found on the network). A physical printer
// (and ippeveprinter, CUPS's printer simulator: rp=ipp/print) sends neither printer-type nor
// device-uri, and its path is not /printers/ or /classes/.
// Windows' Internet Printing shares a queue at /printers/<name>/.printer, a path no printer uses.
import type { IppPrinterState } from './codec.js';

export interface PrintQueue {
  server_kind: 'cups' | 'windows' | 'other';
  /** The queue's name on its server ("q1"; a class's name for a CUPS class). */
  queue: string;
  /** True for a CUPS class (a pool of queues): it never maps to one printer. */
  is_class?: boolean;
  /** The driver's make-and-model, not the printer's (CUPS: "Printer - IPP Everywhere", "Local Raw Printer"). */
  make_and_model?: string;
  /** The queue's own URI (printer-uri-supported). */
  uri?: string;
  /** What the queue prints to, without any user or password in it. */
  device_uri?: string;
  why: string;
}

export interface PrintQueueInput {
  /** DNS-SD TXT, keys in lower case (discovery/mdns.ts). */
  txt?: Record<string, string>;
  /** What Get-Printer-Attributes returned (codec.ts printerStateOf). */
  attributes?: Partial<IppPrinterState>;
  /** The resource the service was read at ("/printers/q1"; TXT rp gives "printers/q1"). */
  resource?: string;
}

const CUPS_PRINTER_CLASS = 0x1;
const CUPS_PRINTER_DISCOVERED = 0x1000000;

interface QueuePath {
  kind: 'printers' | 'classes';
  name: string;
  windows: boolean;
  from: string;
}

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** "printers/q1", "/classes/office", "ipp://h:631/printers/q1", "/printers/Lab/.printer" -> the queue. */
function queuePath(value: string | undefined, from: string): QueuePath | undefined {
  if (!value) return undefined;
  let path = value.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    try {
      path = new URL(path.replace(/^ipps?:/i, 'http:')).pathname;
    } catch {
      return undefined;
    }
  }
  const m = /^\/?(printers|classes)\/([^/?#]+)(\/\.printer)?\/?$/i.exec(path);
  if (!m || m[2].length > 127) return undefined;
  return { kind: m[1].toLowerCase() as 'printers' | 'classes', name: decoded(m[2]), windows: m[3] !== undefined, from };
}

/** TXT printer-type as CUPS writes it ("0x1006"); undefined for anything else. */
function txtPrinterType(v: string | undefined): number | undefined {
  const m = /^\s*0x([0-9a-f]{1,8})\s*$/i.exec(v ?? '');
  return m ? parseInt(m[1], 16) : undefined;
}

/** A URI with any user:password removed (CUPS keeps credentials of some backends in device-uri). */
function withoutCredentials(uri: string | undefined): string | undefined {
  const u = uri?.trim();
  if (!u) return undefined;
  return u.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1').slice(0, 1024);
}

function firstIppUri(uris: readonly string[] | undefined): string | undefined {
  return uris?.find((u) => /^ipp:/i.test(u)) ?? uris?.[0];
}

/** The queue this service is, or undefined when it is (as far as it says) a printer. */
export function printQueueOf(input: PrintQueueInput): PrintQueue | undefined {
  const txt = input.txt ?? {};
  const a = input.attributes ?? {};
  const txtType = txtPrinterType(txt['printer-type']);
  const ippType = typeof a.cupsPrinterType === 'number' && Number.isInteger(a.cupsPrinterType) && a.cupsPrinterType >= 0 ? a.cupsPrinterType : undefined;
  const cupsType = ippType ?? txtType;
  const deviceUri = withoutCredentials(a.deviceUri);

  const paths = [
    queuePath(txt.rp, `rp=${txt.rp}`),
    queuePath(input.resource, `read at ${input.resource}`),
    ...(a.uriSupported ?? []).map((u) => queuePath(u, `printer-uri-supported ${u}`)),
    queuePath(txt.adminurl, `adminurl=${txt.adminurl}`),
  ].filter((p): p is QueuePath => p !== undefined);
  const path = paths[0];

  const uri = firstIppUri(a.uriSupported);
  const makeAndModel = a.makeAndModel?.trim() || txt.ty?.trim() || undefined;
  const common = {
    ...(makeAndModel ? { make_and_model: makeAndModel.slice(0, 256) } : {}),
    ...(uri ? { uri } : {}),
    ...(deviceUri ? { device_uri: deviceUri } : {}),
  };

  // CUPS: its printer-type and a queue path. Either alone is not enough: a printer could use a
  // /printers/ path, and printer-type is only CUPS's by convention.
  if (cupsType !== undefined && path && !path.windows) {
    const isClass = path.kind === 'classes' || (cupsType & CUPS_PRINTER_CLASS) !== 0;
    const typeText = ippType !== undefined ? `IPP printer-type ${ippType} (0x${ippType.toString(16)})` : `DNS-SD printer-type=${txt['printer-type']}`;
    const notes = [
      typeText,
      path.from,
      ...(deviceUri ? [`device-uri ${deviceUri}`] : []),
      ...((cupsType & CUPS_PRINTER_DISCOVERED) !== 0 ? ['made by CUPS for a printer it discovered'] : []),
    ];
    return {
      server_kind: 'cups',
      queue: path.name,
      ...(isClass ? { is_class: true } : {}),
      ...common,
      why: `CUPS ${isClass ? 'class' : 'queue'} ${path.kind}/${path.name}: ${notes.join('; ')}`,
    };
  }

  const windows = paths.find((p) => p.windows);
  if (windows) {
    return { server_kind: 'windows', queue: windows.name, ...common, why: `Windows shared printer ${windows.kind}/${windows.name}/.printer (${windows.from})` };
  }

  // A device-uri is what a server prints to; a printer has none. Some other server (a CUPS whose
  // printer-type was not asked for, a printer application): a queue, of a kind not known.
  if (deviceUri) {
    const name = path?.name ?? a.name?.trim();
    if (name) {
      return { server_kind: 'other', queue: name.slice(0, 127), ...common, why: `answers device-uri ${deviceUri}${path ? `; ${path.from}` : ''}` };
    }
  }
  return undefined;
}

/** A printer the site already has, as far as linking a queue to it needs. */
export interface KnownPrinter {
  serial: string;
  ip?: string;
  hostname?: string;
  printer_uuid?: string;
}

export interface QueueLink {
  serial: string;
  why: string;
}

const LOOPBACK = /^(127\.|localhost$|\[?::1\]?$)/i;

function hostOf(uri: string): string | undefined {
  try {
    // Any scheme: URL parses the authority of "ipp://", "socket://", "lpd://", "dnssd://" alike.
    const u = new URL(uri);
    return u.hostname ? decoded(u.hostname).toLowerCase().replace(/\.$/, '') : undefined;
  } catch {
    return undefined;
  }
}

function param(uri: string, key: string): string | undefined {
  try {
    return new URL(uri).searchParams.get(key)?.trim() || undefined;
  } catch {
    return undefined;
  }
}

function shortName(h: string | undefined): string | undefined {
  return h?.toLowerCase().replace(/\.$/, '').replace(/\.local$/, '') || undefined;
}

/**
 * The known printer a queue prints to, when its device-uri names it beyond doubt: the uuid of a
 * dnssd:// URI (CUPS: "dnssd://Name._ipp._tcp.local/?uuid=…") equal to a printer's printer_uuid;
 * the serial of a usb:// URI equal to a printer's serial; else the URI's host equal to exactly one
 * known printer's address or host name. Never by model name, never through a loopback host (a
 * printer on the server itself, e.g. IPP over USB at localhost:60000). A class serves several
 * printers: none.
 */
export function queueLinkOf(queue: Pick<PrintQueue, 'device_uri' | 'is_class'>, knownPrinters: readonly KnownPrinter[]): QueueLink | undefined {
  const uri = queue.device_uri;
  if (!uri || queue.is_class) return undefined;
  const only = (matches: KnownPrinter[], why: string): QueueLink | undefined => {
    const serials = [...new Set(matches.map((p) => p.serial))];
    return serials.length === 1 ? { serial: serials[0], why } : undefined;
  };

  const uuid = param(uri, 'uuid')?.toLowerCase().replace(/^urn:uuid:/, '');
  if (uuid) {
    const link = only(knownPrinters.filter((p) => p.printer_uuid?.toLowerCase().replace(/^urn:uuid:/, '') === uuid), `device-uri uuid ${uuid} is the printer's printer-uuid`);
    if (link) return link;
  }
  if (/^usb:/i.test(uri)) {
    const serial = param(uri, 'serial');
    return serial ? only(knownPrinters.filter((p) => p.serial === serial), `device-uri serial ${serial} is the printer's serial`) : undefined;
  }
  const host = hostOf(uri);
  if (!host || LOOPBACK.test(host)) return undefined;
  // A dnssd:// host is the service instance name, not an address: only its uuid links it.
  if (/^dnssd:/i.test(uri)) return undefined;
  const byIp = knownPrinters.filter((p) => p.ip === host);
  if (byIp.length > 0) return only(byIp, `device-uri host ${host} is the printer's address`);
  const name = shortName(host);
  return only(knownPrinters.filter((p) => shortName(p.hostname) === name), `device-uri host ${host} is the printer's host name`);
}
