// The agent's TOML configuration: defaults, loading and validation. An unknown key or a value of
// the wrong type stops start-up with a message naming the key, so a typo never silently falls
// back to a default on a box nobody logs into.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { validateCidrList } from '../shared/ranges.js';
import { trustedProxyProblem } from '../net/proxy-cidr.js';
import { errorText } from '../shared/error-text.js';

export type AuthMode = 'local' | 'password' | 'server' | 'disabled';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Config {
  data_dir: string;
  web: {
    listen_address: string;
    https_port: number;
    http_port: number;
    redirect_http_to_https: boolean;
    tls: { cert_file: string; key_file: string };
    auth: { mode: AuthMode; allow_local_admin: boolean; trusted_proxies: string[] };
  };
  /** The central server (server/link.ts); the URL and token are the defaults of the `server` settings. */
  server: {
    url: string;
    enrollment_token: string;
    /** PEM file: the only CA trusted for the server when set (a private CA); else the system's. */
    ca_file: string;
    /** Snapshots per upload batch, and the least time between two batches (a backlog drains at this rate). */
    upload_batch_size: number;
    upload_interval_ms: number;
  };
  /** Defaults for the discovery settings, until someone changes them through /settings. */
  discovery: { subnet_scan: boolean; auto_discover: boolean; allowed_ranges: string[]; mdns_enabled: boolean; wsd_enabled: boolean; ssdp_enabled: boolean };
  log: { level: LogLevel };
  /** The data file system's guard (store/storage-guard.ts). */
  storage: {
    /** Below this much free space the guard prunes raw rows already rolled up, and raises an alert. */
    reserve_mb: number;
  };
  /** A/B updates (update/service.ts); the update source is the `update.url` setting. */
  update: {
    /** The update source's default (settings may change it); empty: the central server, when linked. */
    url: string;
    /** The largest bundle the box downloads. */
    max_bundle_mb: number;
  };
  /** Alert notifications' retries (notify/dispatcher.ts); where they go is the `notifications` setting. */
  notifications: {
    /** The first retry of an undelivered message after this long; each next one doubles (at most an hour). */
    retry_first_ms: number;
    /** Attempts at one message before it is marked failed. */
    max_attempts: number;
  };
}

export function defaultConfig(): Config {
  return {
    data_dir: './data',
    web: {
      listen_address: '0.0.0.0',
      https_port: 8443,
      http_port: 8080,
      redirect_http_to_https: true,
      tls: { cert_file: '', key_file: '' },
      // Forwarding headers count only from these peers (docs/decisions/0014-trusted-proxies.md).
      auth: { mode: 'local', allow_local_admin: true, trusted_proxies: ['127.0.0.0/8', '::1/128'] },
    },
    server: { url: '', enrollment_token: '', ca_file: '', upload_batch_size: 100, upload_interval_ms: 1000 },
    // Safe defaults: never scan a network unasked (the appliance's own config turns both on).
    discovery: { subnet_scan: false, auto_discover: false, allowed_ranges: [], mdns_enabled: false, wsd_enabled: false, ssdp_enabled: false },
    log: { level: 'info' },
    storage: { reserve_mb: 64 },
    update: { url: '', max_bundle_mb: 1024 },
    notifications: { retry_first_ms: 30_000, max_attempts: 10 },
  };
}

export class ConfigError extends Error {}

type Check = (value: unknown, key: string) => void;

const isString: Check = (v, key) => {
  if (typeof v !== 'string') throw new ConfigError(`config key ${key}: expected a string`);
};
const isBool: Check = (v, key) => {
  if (typeof v !== 'boolean') throw new ConfigError(`config key ${key}: expected true or false`);
};
const isPort: Check = (v, key) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 65535) {
    throw new ConfigError(`config key ${key}: expected a port number 0-65535`);
  }
};
const oneOf =
  (...allowed: string[]): Check =>
  (v, key) => {
    if (typeof v !== 'string' || !allowed.includes(v)) {
      throw new ConfigError(`config key ${key}: expected one of ${allowed.join(', ')}`);
    }
  };
const intIn =
  (lo: number, hi: number): Check =>
  (v, key) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw new ConfigError(`config key ${key}: expected an integer ${lo}-${hi}`);
  };
const isStringList: Check = (v, key) => {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new ConfigError(`config key ${key}: expected a list of strings`);
};
const isUrl: Check = (v, key) => {
  isString(v, key);
  if (v === '') return;
  let u: URL;
  try {
    u = new URL(v as string);
  } catch {
    throw new ConfigError(`config key ${key}: not a valid URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ConfigError(`config key ${key}: expected an http:// or https:// URL`);
  }
};

// An IP address literal (IPv4 dotted quad, or IPv6 without brackets; 0.0.0.0 or :: for every
// address), never a host name: Node would resolve a name once at start-up, when DNS may not be up
// yet on a box that just booted, and bind only the first address the name has; `localhost` in
// particular is 127.0.0.1 or ::1 depending on the resolver. A name also fails later with a DNS error
// that does not say which key is wrong.
const isListenAddress: Check = (v, key) => {
  isString(v, key);
  const s = v as string;
  if (isIP(s) !== 0) return;
  const what = s === '' ? 'empty'
    : /^\[.*\]$/.test(s) ? `${JSON.stringify(s)} has brackets (write ${s.slice(1, -1)})`
    : /:\d+$/.test(s) && isIP(s.replace(/:\d+$/, '')) === 4 ? `${JSON.stringify(s)} has a port (ports are web.https_port and web.http_port)`
    : `${JSON.stringify(s)} is not an IP address`;
  throw new ConfigError(
    `config key ${key}: ${what}: expected an IPv4 or IPv6 address such as 0.0.0.0 (every IPv4 address), :: (every address) or 127.0.0.1 (this machine only); host names are not accepted`,
  );
};

// The shape of the file: a table is a nested schema, a leaf is a check.
interface Schema {
  [key: string]: Schema | Check;
}

const schema: Schema = {
  data_dir: isString,
  web: {
    listen_address: isListenAddress,
    https_port: isPort,
    http_port: isPort,
    redirect_http_to_https: isBool,
    tls: { cert_file: isString, key_file: isString },
    auth: { mode: oneOf('local', 'password', 'server', 'disabled'), allow_local_admin: isBool, trusted_proxies: isStringList },
  },
  server: { url: isUrl, enrollment_token: isString, ca_file: isString, upload_batch_size: intIn(1, 5000), upload_interval_ms: intIn(0, 3_600_000) },
  discovery: { subnet_scan: isBool, auto_discover: isBool, allowed_ranges: isStringList, mdns_enabled: isBool, wsd_enabled: isBool, ssdp_enabled: isBool },
  log: { level: oneOf('debug', 'info', 'warn', 'error') },
  storage: { reserve_mb: intIn(0, 1_048_576) },
  update: { url: isUrl, max_bundle_mb: intIn(1, 65_536) },
  notifications: { retry_first_ms: intIn(100, 3_600_000), max_attempts: intIn(1, 100) },
};

function merge(target: Record<string, unknown>, input: Record<string, unknown>, s: Schema, prefix: string): void {
  for (const [k, v] of Object.entries(input)) {
    const key = prefix ? `${prefix}.${k}` : k;
    const rule = Object.hasOwn(s, k) ? s[k] : undefined; // `constructor` is an unknown key, not Object
    if (rule === undefined) throw new ConfigError(`unknown config key ${key}`);
    if (typeof rule === 'function') {
      rule(v, key);
      target[k] = v;
    } else {
      if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Date) {
        throw new ConfigError(`config key ${key}: expected a table`);
      }
      merge(target[k] as Record<string, unknown>, v as Record<string, unknown>, rule, key);
    }
  }
}

/** Builds a Config from TOML text over the defaults. Relative paths resolve against baseDir. */
export function parseConfig(text: string, baseDir: string): Config {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`config is not valid TOML: ${errorText(err).split('\n')[0]}`);
  }
  const cfg = defaultConfig();
  merge(cfg as unknown as Record<string, unknown>, doc, schema, '');
  return resolvePaths(cfg, baseDir);
}

function resolvePaths(cfg: Config, baseDir: string): Config {
  cfg.data_dir = resolve(baseDir, cfg.data_dir);
  const tls = cfg.web.tls;
  if ((tls.cert_file === '') !== (tls.key_file === '')) {
    throw new ConfigError('config keys web.tls.cert_file and web.tls.key_file must be set together');
  }
  if (tls.cert_file) {
    tls.cert_file = resolve(baseDir, tls.cert_file);
    tls.key_file = resolve(baseDir, tls.key_file);
  }
  const rangesProblem = validateCidrList(cfg.discovery.allowed_ranges);
  if (rangesProblem) throw new ConfigError(`config key discovery.allowed_ranges: ${rangesProblem}`);
  if (cfg.web.https_port === 0) throw new ConfigError('config key web.https_port: must not be 0');
  if (cfg.web.http_port === cfg.web.https_port) {
    throw new ConfigError(`config keys web.http_port and web.https_port: both are ${cfg.web.https_port} (use 0 to disable the HTTP listener)`);
  }
  for (const entry of cfg.web.auth.trusted_proxies) {
    const problem = trustedProxyProblem(entry);
    if (problem) throw new ConfigError(`config key web.auth.trusted_proxies: ${entry}: ${problem}`);
  }
  if (cfg.web.auth.mode === 'server' && cfg.server.url === '') {
    throw new ConfigError('config key server.url: required when web.auth.mode is "server" (logins are checked against it)');
  }
  return cfg;
}

/** Loads the config file, or the defaults (relative to the working directory) when none is given. */
export function loadConfig(path?: string): Config {
  if (!path) return resolvePaths(defaultConfig(), process.cwd());
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  return parseConfig(text, dirname(resolve(path)));
}

export const databasePath = (cfg: Config): string => resolve(cfg.data_dir, 'printbox.db');
