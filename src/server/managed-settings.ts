// PrintMaster's managed settings (the heartbeat's `settings_snapshot`, server-protocol.md) mapped
// onto the box's own settings: a partial POST /settings body, and the managed fields the box
// cannot apply. Facts from the reference server (server/settings, common/settings, schema "v2").
//
// The snapshot is the server's fully resolved settings (defaults, then global, then tenant and
// agent overrides): every field has a value, and nothing says which ones an administrator chose.
// So:
// - a field the box has is mapped with its value, default or not, and the same snapshot always
//   gives the same patch; only an empty value the box cannot hold ("" community, "" v3 user, an
//   SNMP version of "") expresses nothing, and the box keeps its own;
// - a field the box does not have is reported only when its value is neither PrintMaster's
//   default (no choice can be told from it, and listing ~20 defaults on every box would hide the
//   ones someone set) nor "off" (false, "", 0: the box, lacking the feature, already honours it);
// - a value the box's own validation refuses is left out and reported with the box's message, so
//   one bad range line does not keep a new SNMP timeout from applying; whatever is in the patch
//   passes SettingsStore.update (all or nothing) on its own.
// Report entries start with the snapshot's dotted path (`discovery.mdns_enabled`); a colon and the
// problem follow when there is more to say than "the box has no such setting". Secret values
// (community, passwords) never appear in them. Input is untrusted: only own data properties are
// read, nothing from it is copied by reference, and nothing throws.
import { defaultSettings, mergeSettings, SettingsError, type Settings } from '../settings/settings.js';
import { ownValue } from '../model/inherited-keys.js';

export interface ManagedMapping {
  /** A partial body in the shape of POST /settings (SettingsStore.update). */
  patch: Record<string, unknown>;
  /** Managed fields with a value the box does not apply: `path` or `path: problem`. */
  unmapped: string[];
}

/** The schema this mapping was written from (common/settings/defaults.go SchemaVersion). */
const SCHEMA_VERSION = 'v2';
/** The reference server's default when managed_sections is empty or absent (resolver.go). */
const DEFAULT_MANAGED = ['discovery', 'snmp', 'features'];
/** Sections the reference server lets itself manage (api.go ValidManagedSections). */
const MANAGEABLE = new Set(['discovery', 'snmp', 'features', 'spooler']);

type Kind = 'bool' | 'int' | 'string';
type Value = boolean | number | string;
/**
 * One field of PrintMaster's schema: its type and default (common/settings/defaults.go), and what
 * the box does with it: `mapped` (code below), `unsupported` (reported by the rule above), or
 * `local` (an agent-local fact or UI choice in PrintMaster's own schema: never a fleet setting).
 */
interface PmField {
  kind: Kind;
  def: Value;
  role: 'mapped' | 'unsupported' | 'local';
  /** For `unsupported`: values that need no report, when not just the default and "off". */
  quiet?: readonly Value[];
}

const f = (kind: Kind, def: Value, role: PmField['role'], quiet?: readonly Value[]): PmField => ({ kind, def, role, quiet });

const SCHEMA: Record<string, Record<string, PmField>> = {
  discovery: {
    subnet_scan: f('bool', true, 'mapped'),
    manual_ranges: f('bool', false, 'mapped'),
    ranges_text: f('string', '', 'mapped'),
    detected_subnet: f('string', '', 'local'),
    ip_scanning_enabled: f('bool', true, 'mapped'),
    concurrency: f('int', 50, 'mapped'),
    // ARP and ICMP liveness probes are PrintMaster's; the box's scan probes printer TCP ports.
    arp_enabled: f('bool', true, 'unsupported'),
    icmp_enabled: f('bool', true, 'unsupported'),
    tcp_enabled: f('bool', true, 'mapped'),
    snmp_enabled: f('bool', true, 'mapped'),
    mdns_enabled: f('bool', false, 'mapped'),
    auto_discover_enabled: f('bool', false, 'mapped'),
    autosave_discovered_devices: f('bool', false, 'unsupported'),
    show_discover_button_anyway: f('bool', false, 'local'),
    show_discovered_devices_anyway: f('bool', false, 'local'),
    passive_discovery_enabled: f('bool', true, 'mapped'),
    auto_discover_live_mdns: f('bool', true, 'mapped'),
    auto_discover_live_wsd: f('bool', true, 'mapped'),
    auto_discover_live_ssdp: f('bool', false, 'mapped'),
    auto_discover_live_snmptrap: f('bool', false, 'unsupported'),
    auto_discover_live_llmnr: f('bool', false, 'unsupported'),
    metrics_rescan_enabled: f('bool', false, 'mapped'),
    metrics_rescan_interval_minutes: f('int', 60, 'mapped'),
    metrics_rescan_interval_seconds: f('int', 0, 'mapped'),
  },
  snmp: {
    version: f('string', '2c', 'mapped'),
    community: f('string', '', 'mapped'),
    timeout_ms: f('int', 2000, 'mapped'),
    // The box retries a silent probe 0 times and a read once; only PrintMaster's 1 needs no word.
    retries: f('int', 1, 'unsupported', [1]),
    security_level: f('string', '', 'mapped'),
    username: f('string', '', 'mapped'),
    auth_protocol: f('string', '', 'mapped'),
    auth_password: f('string', '', 'mapped'),
    priv_protocol: f('string', '', 'mapped'),
    priv_password: f('string', '', 'mapped'),
    context_name: f('string', '', 'mapped'),
  },
  features: {
    epson_remote_mode_enabled: f('bool', false, 'unsupported'),
    credentials_enabled: f('bool', true, 'unsupported'),
    asset_id_regex: f('string', '', 'unsupported'),
  },
  // The OS print spooler of a PC running PrintMaster's agent; the box reads USB printers itself.
  spooler: {
    enabled: f('bool', true, 'unsupported'),
    poll_interval_seconds: f('int', 30, 'unsupported'),
    include_network_printers: f('bool', false, 'unsupported'),
    include_virtual_printers: f('bool', false, 'unsupported'),
  },
};

/** Valid settings to check each mapped value against, one at a time (the rules are per field). */
const CHECK_BASE: Settings = defaultSettings({ subnet_scan: false, auto_discover: false, allowed_ranges: [] });

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'a number';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return String(v);
  if (v === undefined) return 'nothing';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

const EXPECTED: Record<Kind, string> = { bool: 'true or false', int: 'a whole number', string: 'a string' };

function ofKind(kind: Kind, v: unknown): v is Value {
  if (kind === 'bool') return typeof v === 'boolean';
  if (kind === 'int') return typeof v === 'number' && Number.isSafeInteger(v);
  return typeof v === 'string';
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Own, enumerable data properties only: no getters run, nothing from a prototype. */
function ownEntries(o: object): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const k of Object.keys(o)) {
    const d = Object.getOwnPropertyDescriptor(o, k);
    if (d && 'value' in d) out.push([k, d.value]);
  }
  return out;
}

function own(o: object, key: string): unknown {
  const d = Object.getOwnPropertyDescriptor(o, key);
  return d && 'value' in d ? d.value : undefined;
}

/** A value that asks for nothing: the box, lacking the feature, honours it as it is. */
function isOff(v: unknown): boolean {
  return v === false || v === '' || v === 0 || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

/** An untrusted name, short and quoted, for a report. */
function quote(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

/** The managed sections, as the reference server resolves them; problems go to `unmapped`. */
function managedSections(snapshot: object, unmapped: string[]): string[] | null {
  const raw = own(snapshot, 'managed_sections');
  if (raw === undefined || raw === null) return DEFAULT_MANAGED;
  if (!Array.isArray(raw)) {
    unmapped.push(`managed_sections: expected a list of section names, got ${describe(raw)}`);
    return null;
  }
  const out: string[] = [];
  raw.forEach((entry, i) => {
    if (typeof entry !== 'string') {
      unmapped.push(`managed_sections[${i}]: expected a section name, got ${describe(entry)}`);
      return;
    }
    const name = entry.trim().toLowerCase();
    if (!MANAGEABLE.has(name)) unmapped.push(`managed_sections: ${quote(entry)} is not a section the box knows`);
    else if (!out.includes(name)) out.push(name);
  });
  // The server stores a list it has filtered, and resolves an empty one to its default.
  return out.length ? out : DEFAULT_MANAGED;
}

/** Whether an `unsupported` field's value is worth a report (the rule at the top). */
function worthReporting(field: PmField, v: Value): boolean {
  if (field.quiet) return !field.quiet.includes(v);
  return v !== field.def && !isOff(v);
}

interface SectionValues {
  /** Fields of the right type. */
  values: Map<string, Value>;
  /** Known fields of the wrong type (reported). */
  bad: Set<string>;
}

/** A managed section's fields of the right type; wrong types and unknown fields reported. */
function readSection(name: string, raw: unknown, unmapped: string[]): SectionValues | null {
  if (raw === undefined) return null;
  if (!isObject(raw)) {
    unmapped.push(`${name}: expected an object, got ${describe(raw)}`);
    return null;
  }
  const schema = SCHEMA[name];
  const out: SectionValues = { values: new Map(), bad: new Set() };
  for (const [key, v] of ownEntries(raw)) {
    const field = Object.hasOwn(schema, key) ? schema[key] : undefined;
    const path = `${name}.${key}`;
    if (!field) {
      // A newer server's field: its default is unknown here, so only "off" goes unsaid.
      if (!isOff(v)) unmapped.push(`${path}: not a field of PrintMaster's settings schema v2`);
    } else if (!ofKind(field.kind, v)) {
      out.bad.add(key);
      unmapped.push(`${path}: expected ${EXPECTED[field.kind]}, got ${describe(v)}`);
    } else {
      out.values.set(key, v);
      if (field.role === 'unsupported' && worthReporting(field, v)) unmapped.push(path);
    }
  }
  return out;
}

/** A value bound for the box: its place in the patch and the snapshot path it came from. */
interface Candidate {
  section: keyof Settings;
  key: string;
  value: unknown;
  from: string;
}

/**
 * PrintMaster's range syntax to the box's (shared/ranges.ts): `a.b.c.x` is `a.b.c.*`, and a
 * shorthand end of two or three octets (`10.0.1.5-2.9`) is written out in full. Anything else
 * is left for the box's validation to judge.
 */
export function toBoxRangesText(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => {
      const t = line.trim();
      const wildcard = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.[xX]$/.exec(t);
      if (wildcard) return `${wildcard[1]}.*`;
      const short = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\s*-\s*(\d{1,3}(?:\.\d{1,3}){1,2})$/.exec(t);
      if (short) {
        const right = short[5].split('.');
        const left = short.slice(1, 5);
        return `${left.join('.')}-${[...left.slice(0, 4 - right.length), ...right].join('.')}`;
      }
      return line;
    })
    .join('\n');
}

function mapDiscovery({ values: d, bad }: SectionValues, out: Candidate[], unmapped: string[]): void {
  const put = (key: string, value: unknown, from: string, section: keyof Settings = 'discovery') => out.push({ section, key, value, from });
  // ip_scanning_enabled is PrintMaster's master switch over both kinds of IP scanning; the box has
  // none, so it is folded into them. If it could not be read, neither is touched.
  if (!bad.has('ip_scanning_enabled')) {
    const allowed = d.get('ip_scanning_enabled') !== false;
    if (d.has('subnet_scan')) put('subnet_scan', d.get('subnet_scan') === true && allowed, 'discovery.subnet_scan');
    if (d.has('manual_ranges')) put('manual_ranges', d.get('manual_ranges') === true && allowed, 'discovery.manual_ranges');
  }
  if (d.has('ranges_text')) put('ranges_text', toBoxRangesText(d.get('ranges_text') as string), 'discovery.ranges_text');
  if (d.has('concurrency')) put('discover_concurrency', d.get('concurrency'), 'discovery.concurrency');
  if (d.has('snmp_enabled')) put('enable_snmp', d.get('snmp_enabled'), 'discovery.snmp_enabled');
  if (d.has('auto_discover_enabled')) put('auto_discover', d.get('auto_discover_enabled'), 'discovery.auto_discover_enabled');
  if (d.has('tcp_enabled')) put('port_probes_enabled', d.get('tcp_enabled'), 'discovery.tcp_enabled');
  // passive_discovery_enabled is PrintMaster's master switch over its live listeners; the box has
  // none, so it is folded into each. mDNS is one listener on the box, whether PrintMaster asks for
  // it while scanning (mdns_enabled) or live (auto_discover_live_mdns). If the switch could not be
  // read, none is touched.
  if (!bad.has('passive_discovery_enabled')) {
    const passive = d.get('passive_discovery_enabled') !== false;
    if (d.has('auto_discover_live_mdns') || d.has('mdns_enabled')) {
      put('mdns_enabled', d.get('mdns_enabled') === true || (passive && d.get('auto_discover_live_mdns') === true), 'discovery.auto_discover_live_mdns');
    }
    if (d.has('auto_discover_live_wsd')) put('wsd_enabled', passive && d.get('auto_discover_live_wsd') === true, 'discovery.auto_discover_live_wsd');
    if (d.has('auto_discover_live_ssdp')) put('ssdp_enabled', passive && d.get('auto_discover_live_ssdp') === true, 'discovery.auto_discover_live_ssdp');
  }
  // The box always polls its saved printers; PrintMaster's periodic metrics are off by default,
  // and then the interval means nothing. When on, seconds (15-300) win over minutes, as there.
  if (d.get('metrics_rescan_enabled') === true) {
    const seconds = d.get('metrics_rescan_interval_seconds');
    if (typeof seconds === 'number' && seconds > 0) {
      const minutes = Math.max(1, Math.round(seconds / 60));
      if (seconds % 60 !== 0) {
        unmapped.push(`discovery.metrics_rescan_interval_seconds: ${seconds} s is not a whole number of minutes; the box polls every ${minutes} min`);
      }
      put('interval_minutes', minutes, 'discovery.metrics_rescan_interval_seconds', 'collection');
    } else if (d.has('metrics_rescan_interval_minutes')) {
      put('interval_minutes', d.get('metrics_rescan_interval_minutes'), 'discovery.metrics_rescan_interval_minutes', 'collection');
    }
  }
}

const AUTH: Record<string, 'SHA' | 'MD5'> = { sha: 'SHA', sha1: 'SHA', md5: 'MD5' };
const PRIV: Record<string, 'AES' | 'DES'> = { aes: 'AES', aes128: 'AES', des: 'DES' };

function mapSnmp({ values: s }: SectionValues, out: Candidate[], unmapped: string[]): void {
  const put = (section: keyof Settings, key: string, value: unknown, from: string) => out.push({ section, key, value, from });
  if (s.has('timeout_ms')) put('discovery', 'snmp_timeout_ms', s.get('timeout_ms'), 'snmp.timeout_ms');
  const version = String(s.get('version') ?? '').trim().toLowerCase();
  if (version === '3' || version === 'v3') return mapV3(s, out, unmapped);
  if (version === '1' || version === 'v1') put('snmp', 'version', 'v1', 'snmp.version');
  else if (version === '2c' || version === 'v2c' || version === '2') put('snmp', 'version', 'v2c', 'snmp.version');
  else if (version !== '') unmapped.push(`snmp.version: ${quote(String(s.get('version')))} is not 1, 2c or 3`);
  // An empty community is PrintMaster's "the agent's own" (it then uses "public"): the box keeps its list.
  const community = s.get('community');
  if (typeof community === 'string' && community !== '') put('snmp', 'communities', [community], 'snmp.community');
}

/** SNMPv3: PrintMaster's one USM user becomes the box's v3 list. */
function mapV3(s: Map<string, Value>, out: Candidate[], unmapped: string[]): void {
  const str = (k: string) => String(s.get(k) ?? '').trim();
  const user = str('username');
  if (user === '') {
    unmapped.push('snmp.username: SNMPv3 needs a user name; the box keeps its SNMP credentials');
    return;
  }
  // An empty level is read from which protocols are set.
  const level = str('security_level').toLowerCase();
  const authName = str('auth_protocol');
  const privName = str('priv_protocol');
  const wantAuth = level === '' ? authName !== '' || privName !== '' : level === 'authnopriv' || level === 'authpriv';
  const wantPriv = level === '' ? privName !== '' : level === 'authpriv';
  if (level !== '' && !['noauthnopriv', 'authnopriv', 'authpriv'].includes(level)) {
    unmapped.push(`snmp.security_level: ${quote(str('security_level'))} is not noAuthNoPriv, authNoPriv or authPriv`);
    return;
  }
  const auth = wantAuth ? ownValue(AUTH, authName.toLowerCase()) : undefined;
  const priv = wantPriv ? ownValue(PRIV, privName.toLowerCase()) : undefined;
  if (wantAuth && !auth) {
    unmapped.push(`snmp.auth_protocol: ${authName ? `${quote(authName)} is not supported by the box (SHA or MD5)` : 'missing'}; the box keeps its SNMP credentials`);
    return;
  }
  if (wantPriv && !priv) {
    unmapped.push(`snmp.priv_protocol: ${privName ? `${quote(privName)} is not supported by the box (AES or DES)` : 'missing'}; the box keeps its SNMP credentials`);
    return;
  }
  out.push({
    section: 'snmp',
    key: 'v3',
    value: [
      {
        user,
        auth_protocol: auth ?? 'none',
        auth_key: auth ? String(s.get('auth_password') ?? '') : '',
        priv_protocol: priv ?? 'none',
        priv_key: priv ? String(s.get('priv_password') ?? '') : '',
      },
    ],
    from: 'snmp.username',
  });
  if (str('context_name') !== '') unmapped.push('snmp.context_name: the box reads the default context');
  unmapped.push('snmp.version: 3: the box tries its v1/v2c communities after the SNMPv3 user');
}

/**
 * Maps the heartbeat's `settings_snapshot` ({version, schema_version, updated_at, settings:
 * {discovery, snmp, features, spooler, logging, web}, managed_sections}) onto the box's settings.
 * Pure; never throws.
 */
export function mapManagedSettings(snapshot: unknown): ManagedMapping {
  const unmapped: string[] = [];
  try {
    if (!isObject(snapshot)) return { patch: {}, unmapped: [`settings_snapshot: expected an object, got ${describe(snapshot)}`] };
    const settings = own(snapshot, 'settings');
    if (!isObject(settings)) return { patch: {}, unmapped: [`settings: expected an object, got ${describe(settings)}`] };
    const schemaVersion = own(snapshot, 'schema_version');
    if (typeof schemaVersion === 'string' && schemaVersion !== '' && schemaVersion !== SCHEMA_VERSION) {
      unmapped.push(`schema_version: ${quote(schemaVersion)} is not ${SCHEMA_VERSION}; its fields are read as ${SCHEMA_VERSION}'s`);
    }
    const sections = managedSections(snapshot, unmapped);
    if (!sections) return { patch: {}, unmapped };

    const candidates: Candidate[] = [];
    for (const name of Object.keys(SCHEMA)) {
      if (!sections.includes(name)) continue;
      const values = readSection(name, own(settings, name), unmapped);
      if (!values) continue;
      if (name === 'discovery') mapDiscovery(values, candidates, unmapped);
      if (name === 'snmp') mapSnmp(values, candidates, unmapped);
    }

    // Each value through the box's own rule; a refused one stays out and is reported.
    const patch: Record<string, Record<string, unknown>> = {};
    const refused = new Set<string>();
    for (const c of candidates) {
      try {
        mergeSettings(CHECK_BASE, { [c.section]: { [c.key]: c.value } });
      } catch (err) {
        if (!(err instanceof SettingsError)) throw err;
        refused.add(c.from);
        unmapped.push(`${c.from}: refused by the box: ${err.message}`);
        continue;
      }
      (patch[c.section] ??= {})[c.key] = c.value;
    }
    // Manual ranges on with the ranges refused would scan the box's old ranges instead.
    if (refused.has('discovery.ranges_text') && patch.discovery?.manual_ranges === true) {
      delete patch.discovery.manual_ranges;
      if (Object.keys(patch.discovery).length === 0) delete patch.discovery;
      unmapped.push('discovery.manual_ranges: not applied, as discovery.ranges_text was refused');
    }
    return { patch, unmapped };
  } catch (err) {
    // Only an exotic object (a proxy, a throwing accessor) gets here: nothing is applied.
    return { patch: {}, unmapped: [`settings_snapshot: could not be read (${err instanceof Error ? err.name : 'error'})`] };
  }
}
