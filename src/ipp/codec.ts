// IPP Get-Printer-Attributes (RFC 8011 4.2.5) in the binary encoding of RFC 8010: the request the
// agent sends, and a bounded decoder of the reply into a printer's state (identity, supplies from
// marker-* and printer-supply (PWG 5100.13), counters from PWG 5100.22, state and alerts). The one
// IPP codec of the agent: USB printers (IPP over USB) and network printers (ipp://, ipps://) use it.

/** Attributes asked for: only what the USB and network readers use. */
export const REQUESTED = [
  'printer-make-and-model', 'printer-uuid', 'printer-device-id', 'printer-firmware-string-version', 'printer-state',
  'printer-state-reasons', 'printer-more-info', 'marker-names', 'marker-colors', 'marker-types', 'marker-levels',
  'printer-impressions-completed', 'printer-impressions-completed-col', 'printer-media-sheets-completed',
  'printer-media-sheets-completed-col', 'printer-info', 'printer-location', 'printer-name', 'printer-supply',
  'printer-supply-description', 'printer-supply-info-uri', 'printer-alert', 'printer-alert-description', 'printer-state-message', 'color-supported',
  'sides-supported',
  // What a print server's queue says of itself (ipp/print-queue.ts): CUPS's printer-type bits,
  // the queue's own URIs (/printers/<name>, /classes/<name>) and the device it prints to.
  'printer-type', 'printer-uri-supported', 'device-uri',
] as const;

export interface IppMarker {
  name: string;
  color?: string;
  type?: string;
  /** Percent; undefined when the printer does not know (-1, -2, -3 in IPP). */
  level?: number;
}

/** One printer-supply value (PWG 5100.13: the Printer MIB's supply row as "key=value;" text). */
export interface IppSupply {
  /** Printer MIB supply type (toner, wasteToner, opc, ...). */
  type?: string;
  colorantName?: string;
  description?: string;
  /** Percent, when the unit is percent or a real maximum is given; undefined when unknown. */
  level?: number;
}

export interface IppPrinterState {
  makeAndModel?: string;
  uuid?: string;
  deviceId?: string;
  firmware?: string;
  /** printer-info: the printer's description of itself. */
  info?: string;
  location?: string;
  name?: string;
  state?: 'idle' | 'processing' | 'stopped';
  stateReasons: string[];
  stateMessage?: string;
  /** printer-alert (PWG 5100.9) as "code: description" lines (or the code alone). */
  alerts: string[];
  markers: IppMarker[];
  supplies: IppSupply[];
  pageCount?: number;
  colorPages?: number;
  monoPages?: number;
  mediaSheets?: number;
  /** printer-impressions-completed-col highlight-color: impressions in black and one colour. */
  highlightColorPages?: number;
  /** printer-media-sheets-completed-col: the *-two-sided members added up (sheets printed on both sides). */
  duplexSheets?: number;
  /** printer-supply-info-uri: the printer's page about its supplies. */
  supplyInfoUri?: string;
  colorSupported?: boolean;
  duplexSupported?: boolean;
  webUiUrl?: string;
  /** printer-type: CUPS's extension (CUPS_PRINTER_* bits); printers do not send it. */
  cupsPrinterType?: number;
  /** printer-uri-supported: where the printer (or a server's queue) is reached. */
  uriSupported?: string[];
  /** device-uri: CUPS's extension, the device a queue prints to. */
  deviceUri?: string;
}

const TAG = { operation: 0x01, end: 0x03, integer: 0x21, boolean: 0x22, enum: 0x23, begCollection: 0x34, endCollection: 0x37, memberName: 0x4a, keyword: 0x44, uri: 0x45, charset: 0x47, language: 0x48 };
const GET_PRINTER_ATTRIBUTES = 0x000b;

/** The request body: version 2.0, the operation attributes, requested-attributes. */
export function getPrinterAttributesRequest(printerUri: string, requestId = 1): Buffer {
  const parts: Buffer[] = [];
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x0200, 0);
  head.writeUInt16BE(GET_PRINTER_ATTRIBUTES, 2);
  head.writeUInt32BE(requestId, 4);
  parts.push(head, Buffer.from([TAG.operation]));
  const attr = (tag: number, name: string, value: string) => {
    const n = Buffer.from(name, 'utf8');
    const v = Buffer.from(value, 'utf8');
    const b = Buffer.alloc(5 + n.length + v.length);
    b[0] = tag;
    b.writeUInt16BE(n.length, 1);
    n.copy(b, 3);
    b.writeUInt16BE(v.length, 3 + n.length);
    v.copy(b, 5 + n.length);
    parts.push(b);
  };
  attr(TAG.charset, 'attributes-charset', 'utf-8');
  attr(TAG.language, 'attributes-natural-language', 'en');
  attr(TAG.uri, 'printer-uri', printerUri);
  REQUESTED.forEach((a, i) => attr(TAG.keyword, i === 0 ? 'requested-attributes' : '', a));
  parts.push(Buffer.from([TAG.end]));
  return Buffer.concat(parts);
}

/** A decoded value: number (integer, enum), boolean, string, or a collection's members. */
export type IppValue = number | boolean | string | IppCollection | null;
export interface IppCollection {
  [member: string]: IppValue[];
}

export interface IppResponse {
  status: number;
  requestId: number;
  /** Printer (and other) group attributes by name; operation attributes are left out. */
  attributes: Map<string, IppValue[]>;
}

class Reader {
  pos = 0;
  constructor(private readonly b: Buffer) {}
  need(n: number, what: string): void {
    if (this.pos + n > this.b.length) throw new Error(`IPP reply truncated in ${what} (offset ${this.pos}, ${this.b.length} bytes)`);
  }
  u8(what: string): number {
    this.need(1, what);
    return this.b[this.pos++]!;
  }
  u16(what: string): number {
    this.need(2, what);
    const v = this.b.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  bytes(n: number, what: string): Buffer {
    this.need(n, what);
    const v = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
}

function valueOf(tag: number, raw: Buffer): IppValue {
  if (tag >= 0x10 && tag <= 0x1f) return null; // out-of-band: unsupported, unknown, no-value
  if ((tag === TAG.integer || tag === TAG.enum) && raw.length === 4) return raw.readInt32BE(0);
  if (tag === TAG.boolean && raw.length === 1) return raw[0] !== 0;
  if (tag >= 0x40 && tag <= 0x5f) return raw.toString('utf8'); // character-string tags
  // octetString: printer-supply and printer-alert are "key=value;" text in one (PWG 5100.13, 5100.9).
  if (tag === 0x30) return raw.toString('latin1');
  if (tag === 0x35 || tag === 0x36) {
    // textWithLanguage / nameWithLanguage: language length, language, text length, text
    if (raw.length < 4) return null;
    const l = raw.readUInt16BE(0);
    if (2 + l + 2 > raw.length) return null;
    const t = raw.readUInt16BE(2 + l);
    return raw.subarray(4 + l, 4 + l + t).toString('utf8');
  }
  return null; // dateTime, resolution, range: not used here
}

/** A collection's members by name: the printer names them, so no name reaches a prototype. */
const newCollection = (): IppCollection => Object.create(null) as IppCollection;

/** Decodes an IPP response; throws an Error naming the problem when it is not one. */
export function decodeIppResponse(body: Buffer): IppResponse {
  const r = new Reader(body);
  const version = r.u16('version');
  if (version >> 8 < 1 || version >> 8 > 2) throw new Error(`not an IPP reply (version bytes ${version.toString(16).padStart(4, '0')})`);
  const status = r.u16('status');
  r.need(4, 'request id');
  const requestId = body.readUInt32BE(r.pos);
  r.pos += 4;
  const attributes = new Map<string, IppValue[]>();
  let group = 0;
  let last: IppValue[] | undefined;
  // Collections being read: each with the member whose values come next.
  const stack: { col: IppCollection; member?: IppValue[] }[] = [];
  for (;;) {
    const tag = r.u8('a tag');
    if (tag === TAG.end && stack.length === 0) break;
    if (tag < 0x10) {
      if (stack.length) throw new Error('IPP reply: a group begins inside a collection');
      group = tag;
      last = undefined;
      continue;
    }
    const name = r.bytes(r.u16('a name length'), 'a name').toString('utf8');
    const raw = r.bytes(r.u16('a value length'), 'a value');
    const top = stack.at(-1);
    if (top) {
      if (tag === TAG.endCollection) {
        stack.pop();
        continue;
      }
      if (tag === TAG.memberName) {
        top.member = top.col[raw.toString('utf8')] = [];
        continue;
      }
      // Some printers (Pantum's) name collection members like attributes instead of using
      // memberAttrName: the name is taken as the member's.
      if (name) top.member = top.col[name] = [];
      if (!top.member) throw new Error('IPP reply: a collection value without a member name');
      if (tag === TAG.begCollection) {
        const col = newCollection();
        top.member.push(col);
        stack.push({ col });
        if (stack.length > 8) throw new Error('IPP reply: collections nested too deep');
      } else top.member.push(valueOf(tag, raw));
      continue;
    }
    if (tag === TAG.endCollection || tag === TAG.memberName) throw new Error('IPP reply: a collection member outside a collection');
    let values: IppValue[];
    if (name) {
      values = [];
      if (group !== TAG.operation) attributes.set(name, values);
      last = values;
    } else if (last) values = last;
    else throw new Error('IPP reply: an additional value before any attribute');
    if (tag === TAG.begCollection) {
      const col = newCollection();
      values.push(col);
      stack.push({ col });
    } else values.push(valueOf(tag, raw));
  }
  return { status, requestId, attributes };
}

const PRINTER_STATES: Record<number, IppPrinterState['state']> = { 3: 'idle', 4: 'processing', 5: 'stopped' };

/** The response as a printer's state; throws when IPP itself said no (status >= 0x0400). */
export function printerStateOf(res: IppResponse): IppPrinterState {
  if (res.status >= 0x0400) throw new Error(`IPP Get-Printer-Attributes refused: status 0x${res.status.toString(16).padStart(4, '0')}`);
  const a = res.attributes;
  const strs = (k: string) => (a.get(k) ?? []).filter((v): v is string => typeof v === 'string');
  const str = (k: string) => strs(k)[0] || undefined;
  const int = (k: string) => {
    const v = a.get(k)?.[0];
    return typeof v === 'number' && v >= 0 ? v : undefined;
  };
  const names = strs('marker-names');
  const colors = a.get('marker-colors') ?? [];
  const types = a.get('marker-types') ?? [];
  const levels = a.get('marker-levels') ?? [];
  const markers = names.slice(0, 64).map((name, i): IppMarker => {
    const level = levels[i];
    return {
      name,
      ...(typeof colors[i] === 'string' && colors[i] !== 'none' ? { color: colors[i] as string } : {}),
      ...(typeof types[i] === 'string' ? { type: types[i] as string } : {}),
      ...(typeof level === 'number' && level >= 0 && level <= 100 ? { level } : {}),
    };
  });
  const member = (attr: string, k: string) => {
    const col = a.get(attr)?.[0];
    const v = col && typeof col === 'object' && Object.hasOwn(col, k) ? col[k]?.[0] : undefined;
    return typeof v === 'number' && v >= 0 ? v : undefined;
  };
  const IMPRESSIONS = 'printer-impressions-completed-col';
  const SHEETS = 'printer-media-sheets-completed-col';
  // PWG 5100.22: each colour member has a "-two-sided" twin counting the two-sided share.
  const twoSided = ['blank', 'full-color', 'highlight-color', 'monochrome'].map((k) => member(SHEETS, `${k}-two-sided`)).filter((n) => n !== undefined);
  const state = a.get('printer-state')?.[0];
  const reasons = strs('printer-state-reasons');
  const supplyDescriptions = strs('printer-supply-description');
  const supplies = strs('printer-supply')
    .slice(0, 64)
    .map((text, i) => supplyOf(text, supplyDescriptions[i]));
  const alertDescriptions = strs('printer-alert-description').map(unechoed);
  const alerts = strs('printer-alert')
    .map(unechoed)
    .slice(0, 32)
    .map((text, i) => alertOf(text, alertDescriptions[i]))
    .filter((s): s is string => Boolean(s));
  const color = a.get('color-supported')?.[0];
  const sides = strs('sides-supported');
  const first = <T>(...xs: (T | undefined)[]) => xs.find((x) => x !== undefined);
  return {
    makeAndModel: str('printer-make-and-model'),
    uuid: str('printer-uuid')?.replace(/^urn:uuid:/i, ''),
    deviceId: str('printer-device-id'),
    firmware: str('printer-firmware-string-version'),
    info: str('printer-info'),
    location: str('printer-location'),
    name: str('printer-name'),
    state: typeof state === 'number' ? PRINTER_STATES[state] : undefined,
    stateReasons: reasons.length ? reasons : [],
    stateMessage: str('printer-state-message'),
    alerts,
    markers,
    supplies,
    pageCount: first(int('printer-impressions-completed'), member(IMPRESSIONS, 'total')),
    colorPages: member(IMPRESSIONS, 'full-color'),
    monoPages: member(IMPRESSIONS, 'monochrome'),
    mediaSheets: first(int('printer-media-sheets-completed'), member(SHEETS, 'total')),
    ...(member(IMPRESSIONS, 'highlight-color') !== undefined ? { highlightColorPages: member(IMPRESSIONS, 'highlight-color') } : {}),
    ...(twoSided.length ? { duplexSheets: twoSided.reduce((a, n) => a + n, 0) } : {}),
    ...(str('printer-supply-info-uri') ? { supplyInfoUri: str('printer-supply-info-uri') } : {}),
    ...(typeof color === 'boolean' ? { colorSupported: color } : {}),
    ...(sides.length ? { duplexSupported: sides.some((s) => s.startsWith('two-sided')) } : {}),
    webUiUrl: str('printer-more-info'),
    ...(int('printer-type') !== undefined ? { cupsPrinterType: int('printer-type') } : {}),
    ...(strs('printer-uri-supported').length ? { uriSupported: strs('printer-uri-supported').slice(0, 8) } : {}),
    ...(str('device-uri') ? { deviceUri: str('device-uri') } : {}),
  };
}

/**
 * A value without the ipptool-style echo some firmware writes into it: the Xerox B210 sends
 * "printer-alert[0] = code=markerTonerEmpty;..." and "printer-alert-description[0] = '09-200 ...'"
 * (test/fixtures/ipp/xerox-b210-toner-empty.ipp).
 */
function unechoed(text: string): string {
  const m = /^[a-z][a-z0-9-]*\[\d+\]\s*=\s*([\s\S]*)$/.exec(text);
  if (!m) return text;
  const v = m[1].trim();
  return v.length >= 2 && v.startsWith("'") && v.endsWith("'") ? v.slice(1, -1) : v;
}

/** "key=value;key=value;" as a map with lower-case keys. */
function keyValues(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return out;
}

/** A printer-supply value: type, colorant, and the level as a percent when it is one. */
function supplyOf(text: string, description: string | undefined): IppSupply {
  const kv = keyValues(text);
  const num = (k: string) => {
    const v = kv.get(k);
    return v !== undefined && /^-?\d+$/.test(v) ? Number(v) : undefined;
  };
  const level = num('level');
  const max = num('maxcapacity');
  // Unit 19 is percent (RFC 3805 PrtMarkerSuppliesSupplyUnitTC); negative values are the MIB's
  // "unknown / some remaining": no level, never 0 %.
  const unit = kv.get('unit');
  let percent: number | undefined;
  if (level !== undefined && level >= 0) {
    if (max !== undefined && max > 0) percent = Math.min(100, Math.round((level * 100) / max));
    else if (unit === 'percent' || unit === '19') percent = Math.min(100, level);
  }
  const colorant = kv.get('colorantname');
  return {
    ...(kv.get('type') ? { type: kv.get('type') } : {}),
    ...(colorant && colorant !== 'unknown' ? { colorantName: colorant } : {}),
    ...(description ? { description } : {}),
    ...(percent !== undefined ? { level: percent } : {}),
  };
}

/**
 * A printer-alert value as a status line: its code (and description). An alert of no known code
 * and no severity worth a line (HP lists "code=unknown;severity=other" for each genuine cartridge)
 * is none.
 */
function alertOf(text: string, description: string | undefined): string | undefined {
  const kv = keyValues(text);
  const code = kv.get('code');
  const severity = kv.get('severity');
  if (!code || code === 'unknown' || code === 'other') {
    if (severity !== 'critical' && severity !== 'warning') return undefined;
    return description || undefined;
  }
  return description ? `${code}: ${description}` : code;
}
