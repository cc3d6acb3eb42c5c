// printbox.toml on the boot partition (decisions.md, Provisioning): what a technician may set
// from any laptop before the first boot. Parsed and checked as a whole: one bad value and nothing
// of the file is applied, with a message naming the key.
import { parse as parseToml } from 'smol-toml';
import { isIP } from 'node:net';
import { mergeSettings, SettingsError, type Settings } from '../settings/settings.js';
import { usernameProblem } from '../store/accounts.js';
import { passwordProblem } from '../auth/passwords.js';
import { ownValue } from '../model/inherited-keys.js';

export interface StaticIPv4 {
  /** a.b.c.d/n */
  address: string;
  gateway?: string;
  dns: string[];
}

export interface Provision {
  admin?: { user: string; password: string };
  /** A partial settings update (discovery, snmp, collection, server), already validated. */
  settings: Record<string, Record<string, unknown>>;
  network?: StaticIPv4;
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
  network: ['address', 'gateway', 'dns'],
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

/** Parses and checks the whole file; throws ProvisionError naming the first problem. */
export function parseProvision(text: string, current: Settings): Provision {
  let doc: Table;
  try {
    doc = parseToml(text) as Table;
  } catch (err) {
    throw new ProvisionError(`not valid TOML: ${(err as Error).message.split('\n')[0]}`);
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
      // The line is removed once stored: make sure that removal leaves a file without it.
      let rest: Table;
      try {
        rest = parseToml(withoutPassword(text)) as Table;
      } catch {
        rest = { admin: { password } };
      }
      if ((rest.admin as Table | undefined)?.password !== undefined) {
        throw new ProvisionError('admin.password must be written on one line of its own in the [admin] table');
      }
    }
  }

  const server = table(doc, 'server');
  if (server) out.settings.server = { url: str(server, 'server', 'url', true), enrollment_token: str(server, 'server', 'enrollment_token') ?? '' };

  const update = table(doc, 'update');
  if (update) out.settings.update = { url: str(update, 'update', 'url', true) };

  const discovery = table(doc, 'discovery');
  const ranges = discovery && strList(discovery, 'discovery', 'ranges');
  // Provisioned ranges replace the scan of the box's own subnets (decisions.md, Provisioning).
  if (ranges?.length) out.settings.discovery = { subnet_scan: false, manual_ranges: true, ranges_text: ranges.join('\n') };

  const snmp = table(doc, 'snmp');
  if (snmp) out.settings.snmp = Object.fromEntries(KEYS.snmp.filter((k) => snmp[k] !== undefined).map((k) => [k, snmp[k]]));

  const polling = table(doc, 'polling');
  if (polling?.interval_minutes !== undefined) out.settings.collection = { interval_minutes: polling.interval_minutes };

  const network = table(doc, 'network');
  if (network) out.network = staticIPv4(network);

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

/** The file as it is kept after the password was stored: every line but admin.password's. */
export function withoutPassword(text: string): string {
  let section = '';
  return text
    .split(/(?<=\n)/)
    .filter((line) => {
      const header = /^\s*\[([^\]]+)\]/.exec(line);
      if (header) section = header[1].trim();
      return !(section === 'admin' && /^\s*password\s*=/.test(line));
    })
    .join('');
}
