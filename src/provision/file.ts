// printbox.toml on the boot partition (docs/decisions/0019-provisioning.md): what a technician may
// set from any laptop before the first boot. Parsed and checked as a whole: one bad value and
// nothing of the file is applied, with a message naming the key.
import { parse as parseToml } from 'smol-toml';
import { isIP } from 'node:net';
import { mergeSettings, SettingsError, type Settings } from '../settings/settings.js';
import { usernameProblem } from '../store/accounts.js';
import { passwordProblem } from '../auth/passwords.js';
import { ownValue } from '../model/inherited-keys.js';
import { errorText } from '../shared/error-text.js';

export interface StaticIPv4 {
  /** a.b.c.d/n */
  address: string;
  gateway?: string;
  dns: string[];
}

/** A WPA2-Personal network for the board's Wi-Fi (the Zero 2 W has nothing else). */
export interface Wifi {
  ssid: string;
  /** ISO 3166 two-letter country, upper case: the regulatory domain the radio keeps to. */
  country: string;
  /**
   * The passphrase (8-63 printable ASCII characters) or the key itself (64 hex digits). Absent
   * when its line was removed after an earlier boot: the key stored then stays.
   */
  psk?: string;
}

export interface Provision {
  admin?: { user: string; password: string };
  /** A partial settings update (discovery, snmp, collection, server), already validated. */
  settings: Record<string, Record<string, unknown>>;
  network?: StaticIPv4;
  wifi?: Wifi;
  timeServers?: string[];
}

export class ProvisionError extends Error {}

type Table = Record<string, unknown>;

const KEYS: Record<string, string[]> = {
  admin: ['user', 'password'],
  server: ['url', 'enrollment_token'],
  update: ['url'],
  discovery: ['ranges'],
  snmp: ['communities', 'version', 'v3'],
  polling: ['interval_minutes'],
  network: ['address', 'gateway', 'dns', 'wifi_ssid', 'wifi_psk', 'wifi_country'],
  time: ['servers'],
};

function table(doc: Table, name: string): Table | undefined {
  const t = doc[name];
  if (t === undefined) return undefined;
  if (typeof t !== 'object' || t === null || Array.isArray(t)) throw new ProvisionError(`[${name}] must be a table`);
  for (const k of Object.keys(t)) {
    if (!KEYS[name].includes(k)) throw new ProvisionError(`unknown key ${name}.${k}`);
  }
  return t as Table;
}

function str(t: Table, section: string, key: string, required = false): string | undefined {
  const v = t[key];
  if (v === undefined) {
    if (required) throw new ProvisionError(`${section}.${key} is required`);
    return undefined;
  }
  if (typeof v !== 'string' || v === '') throw new ProvisionError(`${section}.${key} must be a non-empty string`);
  return v;
}

function strList(t: Table, section: string, key: string): string[] | undefined {
  const v = t[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) {
    throw new ProvisionError(`${section}.${key} must be a list of non-empty strings`);
  }
  return v as string[];
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function staticIPv4(t: Table): StaticIPv4 {
  const address = str(t, 'network', 'address', true)!;
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(address);
  if (!m || isIP(m[1]) !== 4 || Number(m[2]) < 1 || Number(m[2]) > 32) {
    throw new ProvisionError('network.address must be an IPv4 address with its prefix length, like 192.0.2.50/24');
  }
  const gateway = str(t, 'network', 'gateway');
  if (gateway !== undefined && isIP(gateway) !== 4) throw new ProvisionError('network.gateway must be an IPv4 address');
  const dns = strList(t, 'network', 'dns') ?? [];
  for (const d of dns) if (isIP(d) === 0) throw new ProvisionError(`network.dns: ${d} is not an IP address`);
  return { address, gateway, dns };
}

function wifi(t: Table): Wifi {
  const ssid = str(t, 'network', 'wifi_ssid', true)!;
  const bytes = Buffer.byteLength(ssid, 'utf8');
  if (bytes > 32) throw new ProvisionError(`network.wifi_ssid must be 1 to 32 bytes (it is ${bytes} in UTF-8)`);
  const country = str(t, 'network', 'wifi_country');
  if (country === undefined) {
    throw new ProvisionError('network.wifi_country is required with wifi_ssid: the two-letter country the box is in (like "DE" or "US"), which sets the channels and power the radio may use');
  }
  if (!/^[A-Za-z]{2}$/.test(country)) throw new ProvisionError('network.wifi_country must be a two-letter country code, like "DE" or "US"');
  const psk = str(t, 'network', 'wifi_psk');
  if (psk !== undefined && !/^[\x20-\x7e]{8,63}$/.test(psk) && !/^[0-9a-fA-F]{64}$/.test(psk)) {
    throw new ProvisionError('network.wifi_psk must be the passphrase (8 to 63 printable ASCII characters) or the key (64 hex digits)');
  }
  return { ssid, country: country.toUpperCase(), psk };
}

/** Parses and checks the whole file; throws ProvisionError naming the first problem. */
export function parseProvision(text: string, current: Settings): Provision {
  let doc: Table;
  try {
    doc = parseToml(text) as Table;
  } catch (err) {
    throw new ProvisionError(`not valid TOML: ${errorText(err).split('\n')[0]}`);
  }
  for (const k of Object.keys(doc)) if (!ownValue(KEYS, k)) throw new ProvisionError(`unknown section or key ${k}`);
  const out: Provision = { settings: {} };

  const admin = table(doc, 'admin');
  if (admin) {
    const user = str(admin, 'admin', 'user', true)!;
    const problem = usernameProblem(user);
    if (problem) throw new ProvisionError(`admin.user: ${problem}`);
    const password = str(admin, 'admin', 'password');
    // No password line: it was applied at an earlier boot and removed; nothing to do for it.
    if (password !== undefined) {
      const weak = passwordProblem(password);
      if (weak) throw new ProvisionError(`admin.password: ${weak}`);
      out.admin = { user, password };
      secretLineRemovable(text, 'admin', 'password');
    }
  }

  const server = table(doc, 'server');
  if (server) out.settings.server = { url: str(server, 'server', 'url', true), enrollment_token: str(server, 'server', 'enrollment_token') ?? '' };

  const update = table(doc, 'update');
  if (update) out.settings.update = { url: str(update, 'update', 'url', true) };

  const discovery = table(doc, 'discovery');
  const ranges = discovery && strList(discovery, 'discovery', 'ranges');
  // Provisioned ranges replace the scan of the box's own subnets
  // (docs/decisions/0019-provisioning.md).
  if (ranges?.length) out.settings.discovery = { subnet_scan: false, manual_ranges: true, ranges_text: ranges.join('\n') };

  const snmp = table(doc, 'snmp');
  if (snmp) out.settings.snmp = Object.fromEntries(KEYS.snmp.filter((k) => snmp[k] !== undefined).map((k) => [k, snmp[k]]));

  const polling = table(doc, 'polling');
  if (polling?.interval_minutes !== undefined) out.settings.collection = { interval_minutes: polling.interval_minutes };

  const network = table(doc, 'network');
  if (network && ['address', 'gateway', 'dns'].some((k) => network[k] !== undefined)) out.network = staticIPv4(network);
  if (network && ['wifi_ssid', 'wifi_psk', 'wifi_country'].some((k) => network[k] !== undefined)) {
    out.wifi = wifi(network);
    if (out.wifi.psk !== undefined) secretLineRemovable(text, 'network', 'wifi_psk');
  }

  const time = table(doc, 'time');
  if (time) {
    const servers = strList(time, 'time', 'servers') ?? [];
    for (const s of servers) if (isIP(s) === 0 && !HOSTNAME.test(s)) throw new ProvisionError(`time.servers: ${s} is not a host name or address`);
    out.timeServers = servers;
  }

  // The settings part through the same rules as POST /settings, with the key names of this file.
  try {
    mergeSettings(current, out.settings);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    const msg = err.message.replace(/^collection\./, 'polling.').replace(/^discovery\.ranges_text/, 'discovery.ranges');
    throw new ProvisionError(msg);
  }
  return out;
}

// The secrets printbox.toml may hold: stored (hashed, or in a root-only file) and their lines then
// removed from the file, so that the card does not carry them once the box has them.
const SECRET_LINES: [string, string][] = [
  ['admin', 'password'],
  ['network', 'wifi_psk'],
];

/**
 * The file as it is kept once its secrets are stored: every line but admin.password's and
 * network.wifi_psk's (or only the one named).
 */
export function withoutSecrets(text: string, only?: [string, string]): string {
  let section = '';
  return text
    .split(/(?<=\n)/)
    .filter((line) => {
      const header = /^\s*\[([^\]]+)\]/.exec(line);
      if (header) section = header[1].trim();
      return !(only ? [only] : SECRET_LINES).some(([s, key]) => section === s && new RegExp(`^\\s*${key}\\s*=`).test(line));
    })
    .join('');
}

/** The secret's line is removed once stored: makes sure that removal leaves a file without it. */
function secretLineRemovable(text: string, section: string, key: string): void {
  let rest: Table;
  try {
    rest = parseToml(withoutSecrets(text, [section, key])) as Table;
  } catch {
    rest = { [section]: { [key]: true } };
  }
  if ((rest[section] as Table | undefined)?.[key] !== undefined) {
    throw new ProvisionError(`${section}.${key} must be written on one line of its own in the [${section}] table`);
  }
}
