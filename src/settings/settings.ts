// Runtime settings (contract 2.6 and docs/decisions/0012-settings.md): the contract's `discovery`
// object with its field names, and beside it SNMP credentials and the polling interval. Kept in the
// database, changed by POST /settings (a partial body, all or nothing), applied live.
import { validateCidrList, validateRangesText } from '../shared/ranges.js';
import type { LogLevel } from '../config/config.js';
import { inheritedKeyProblem, ownValue } from '../model/inherited-keys.js';
import { caPemProblem } from '../net/ca-pem.js';
import { plainRefusal } from './plain-words.js';
import { webhookHostProblem } from '../net/webhook-host.js';
import { ALERT_KINDS, DEFAULT_ALERT_RULES, type AlertRules } from '../model/alert-rules.js';
import { DEFAULT_NOTIFICATIONS, type NotificationSettings, type RecipientRule } from './notifications.js';
import { isTimeZone, parseTimeOfDay } from '../model/billing-time.js';

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface V3Setting {
  user: string;
  auth_protocol: 'SHA' | 'MD5' | 'none';
  auth_key: string;
  priv_protocol: 'AES' | 'DES' | 'none';
  priv_key: string;
}

export interface Settings {
  discovery: {
    subnet_scan: boolean;
    manual_ranges: boolean;
    ranges_text: string;
    enable_snmp: boolean;
    snmp_timeout_ms: number;
    discover_concurrency: number;
    /** Scan on a schedule without anyone asking (the appliance turns this on). */
    auto_discover: boolean;
    auto_discover_interval_minutes: number;
    /** CIDR list; when non-empty, no packet is sent outside it. */
    allowed_ranges: string[];
    /** Listen for printers announcing themselves by mDNS/DNS-SD and read them by IPP (discovery/mdns.ts). */
    mdns_enabled: boolean;
    /** Probe TCP 9100, 631, 515, 80 and 443 on the scan's own targets, and read IPP where 631 is open (discovery/port-probe.ts). */
    port_probes_enabled: boolean;
    /** Listen for WS-Discovery Hello/Bye and probe for printers (discovery/wsd.ts). */
    wsd_enabled: boolean;
    /** Search for printers by SSDP M-SEARCH (discovery/ssdp.ts); off by default, as in the reference. */
    ssdp_enabled: boolean;
  };
  snmp: {
    /** Tried in order for v1/v2c. */
    communities: string[];
    version: 'v1' | 'v2c';
    v3: V3Setting[];
    /** UDP port printers answer on: 161 everywhere but in simulators. */
    port: number;
  };
  collection: {
    interval_minutes: number;
  };
  /** The central server this box reports to (server/link.ts). */
  server: {
    url: string;
    /** Secret: GET /settings shows it as "". */
    enrollment_token: string;
    /**
     * A CA certificate (PEM) trusted for the server beside the system's (and `server.ca_file`'s),
     * pasted or uploaded in the UI; not secret, kept with the settings (net/ca-pem.ts).
     */
    ca_pem: string;
  };
  /** The agent's log level, applied to the running logger at once (log/live-level.ts). */
  log: {
    level: LogLevel;
  };
  /** Where updates come from (update/source.ts): a manifest URL; "" asks the central server. */
  update: {
    url: string;
  };
  /** Alert rules (model/alert-rules.ts): thresholds, and which printer states open an alert. */
  alerts: AlertRules;
  /** Where alerts are sent (notify/): e-mail over SMTP, signed webhooks, per-rule recipients, a digest. */
  notifications: NotificationSettings;
  /** Billing meter reads (billing/): the day of the month and time of day, in their own time zone. */
  billing: {
    enabled: boolean;
    /** 1..31; past a month's last day means that last day. */
    day: number;
    /** "HH:MM", 24-hour, in `time_zone`. */
    time: string;
    /** IANA name; the box's clock is UTC, the billing cycle is the site's (model/billing-time.ts). */
    time_zone: string;
  };
  /** The order list (GET /api/supplies/order-list): supplies forecast to run out within `within_days`. */
  order_list: {
    within_days: number;
    /** The weekly order-list e-mail (notify/order-list-mail.ts), at `email_weekday` `email_time` in `billing.time_zone`. */
    email_enabled: boolean;
    email_weekday: Weekday;
    email_time: string;
  };
  /** How the box says things to people (alerts/words.ts). */
  display: {
    /** IANA name: the zone of the times alerts, e-mails and webhooks say in words. */
    time_zone: string;
  };
}

export interface SettingsDefaults {
  subnet_scan: boolean;
  auto_discover: boolean;
  allowed_ranges: string[];
  /** The config file's `[discovery] mdns_enabled` (default false: the appliance's agent.toml turns it on). */
  mdns_enabled?: boolean;
  /** The config file's `[discovery] wsd_enabled` and `ssdp_enabled` (default false; the appliance turns WS-Discovery on). */
  wsd_enabled?: boolean;
  ssdp_enabled?: boolean;
  /** From the config file's `[server]`; provisioning, /settings or the server itself may change them. */
  server?: { url: string; enrollment_token: string };
  /** The config file's `[log] level`. */
  log_level?: LogLevel;
  /** The config file's `[update] url`. */
  update_url?: string;
}

/** The config file's part of the settings' defaults. */
export function settingsDefaults(c: {
  discovery: Omit<SettingsDefaults, 'server' | 'log_level' | 'update_url'>;
  server: { url: string; enrollment_token: string };
  log?: { level: LogLevel };
  update?: { url: string };
}): SettingsDefaults {
  return { ...c.discovery, server: { url: c.server.url, enrollment_token: c.server.enrollment_token }, log_level: c.log?.level, update_url: c.update?.url };
}

/** The system's IANA zone, UTC when the runtime does not know it. */
export function systemTimeZone(): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone && isTimeZone(zone) ? zone : 'UTC';
}

export function defaultSettings(d: SettingsDefaults): Settings {
  return {
    discovery: {
      subnet_scan: d.subnet_scan,
      manual_ranges: false,
      ranges_text: '',
      enable_snmp: true,
      snmp_timeout_ms: 2000,
      discover_concurrency: 64,
      auto_discover: d.auto_discover,
      auto_discover_interval_minutes: 60,
      allowed_ranges: [...d.allowed_ranges],
      mdns_enabled: d.mdns_enabled ?? false,
      port_probes_enabled: true,
      wsd_enabled: d.wsd_enabled ?? false,
      ssdp_enabled: d.ssdp_enabled ?? false,
    },
    snmp: { communities: ['public'], version: 'v2c', v3: [], port: 161 },
    collection: { interval_minutes: 15 },
    server: { url: d.server?.url ?? '', enrollment_token: d.server?.enrollment_token ?? '', ca_pem: '' },
    log: { level: d.log_level ?? 'info' },
    update: { url: d.update_url ?? '' },
    alerts: { ...DEFAULT_ALERT_RULES },
    notifications: structuredClone(DEFAULT_NOTIFICATIONS),
    billing: { enabled: true, day: 1, time: '00:00', time_zone: 'UTC' },
    order_list: { within_days: 14, email_enabled: false, email_weekday: 'monday', email_time: '08:00' },
    // The system's zone (the appliance's is UTC unless set): a site changes it in Settings, Alerts.
    display: { time_zone: systemTimeZone() },
  };
}

/**
 * A setting refused: `message` names it by its key, as API clients read it; `field` is that key and
 * `plain` the same refusal in the Settings page's words (plain-words.ts), for the UI to show next
 * to the field (POST /settings sends both as headers beside the text body).
 */
export class SettingsError extends Error {
  readonly field: string | undefined;
  readonly plain: string;
  constructor(message: string) {
    super(message);
    const p = plainRefusal(message);
    this.field = p?.field;
    this.plain = p?.plain ?? message;
  }
}

type Rule = (v: unknown, field: string, current: unknown) => unknown;

const bool: Rule = (v, f) => {
  if (typeof v !== 'boolean') throw new SettingsError(`${f} must be true or false`);
  return v;
};
const int =
  (min: number, max: number): Rule =>
  (v, f) => {
    if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) {
      throw new SettingsError(`${f} must be an integer from ${min} to ${max}`);
    }
    return v;
  };
const oneOf =
  (...allowed: string[]): Rule =>
  (v, f) => {
    if (typeof v !== 'string' || !allowed.includes(v)) throw new SettingsError(`${f} must be one of ${allowed.join(', ')}`);
    return v;
  };
const rangesText: Rule = (v, f) => {
  if (typeof v !== 'string') throw new SettingsError(`${f} must be a string`);
  if (v.length > 65_536) throw new SettingsError(`${f} is longer than 65536 characters`);
  const problem = validateRangesText(v);
  if (problem) throw new SettingsError(`${f}: ${problem}`);
  return v;
};
const cidrList: Rule = (v, f) => {
  if (!Array.isArray(v) || v.length > 256) throw new SettingsError(`${f} must be a list of at most 256 CIDR ranges`);
  const problem = validateCidrList(v);
  if (problem) throw new SettingsError(`${f}: ${problem}`);
  return v;
};
const communities: Rule = (v, f) => {
  if (!Array.isArray(v) || v.length < 1 || v.length > 16) throw new SettingsError(`${f} must be a list of 1 to 16 communities`);
  for (const c of v) {
    if (typeof c !== 'string' || c === '' || c.length > 64) throw new SettingsError(`${f} entries must be strings of 1 to 64 characters`);
  }
  return v;
};
// GET /settings never shows v3 keys; a POST that sends a key as "" keeps the stored one.
const v3List: Rule = (v, f, current) => {
  if (!Array.isArray(v) || v.length > 8) throw new SettingsError(`${f} must be a list of at most 8 SNMPv3 users`);
  const old = (current as V3Setting[]) ?? [];
  return v.map((entry, i) => {
    const at = `${f}[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new SettingsError(`${at} must be an object`);
    const e = entry as Record<string, unknown>;
    for (const k of Object.keys(e)) {
      if (!['user', 'auth_protocol', 'auth_key', 'priv_protocol', 'priv_key'].includes(k)) throw new SettingsError(`unknown setting ${at}.${k}`);
    }
    if (typeof e.user !== 'string' || e.user === '' || e.user.length > 64) throw new SettingsError(`${at}.user must be a string of 1 to 64 characters`);
    const prev = old.find((o) => o.user === e.user);
    const out: V3Setting = {
      user: e.user,
      auth_protocol: oneOf('SHA', 'MD5', 'none')(e.auth_protocol ?? 'none', `${at}.auth_protocol`, undefined) as V3Setting['auth_protocol'],
      auth_key: typeof e.auth_key === 'string' && e.auth_key !== '' ? e.auth_key : (prev?.auth_key ?? ''),
      priv_protocol: oneOf('AES', 'DES', 'none')(e.priv_protocol ?? 'none', `${at}.priv_protocol`, undefined) as V3Setting['priv_protocol'],
      priv_key: typeof e.priv_key === 'string' && e.priv_key !== '' ? e.priv_key : (prev?.priv_key ?? ''),
    };
    if (out.auth_protocol !== 'none' && out.auth_key.length < 8) throw new SettingsError(`${at}.auth_key must have at least 8 characters`);
    if (out.priv_protocol !== 'none') {
      if (out.auth_protocol === 'none') throw new SettingsError(`${at}.priv_protocol needs an auth_protocol`);
      if (out.priv_key.length < 8) throw new SettingsError(`${at}.priv_key must have at least 8 characters`);
    }
    return out;
  });
};

const serverUrl: Rule = (v, f) => {
  if (typeof v !== 'string' || v.length > 2048) throw new SettingsError(`${f} must be a string of at most 2048 characters`);
  if (v === '') return v;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new SettingsError(`${f} must be an http:// or https:// URL`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new SettingsError(`${f} must be an http:// or https:// URL`);
  return v;
};
// Like the v3 keys: GET shows "", so a POST that sends "" keeps the stored token; null clears it
// (how a destination changes without proof: secret-destinations.ts).
const secret: Rule = (v, f, current) => {
  if (v === null) return '';
  if (typeof v !== 'string' || v.length > 4096) throw new SettingsError(`${f} must be a string of at most 4096 characters, or null to clear it`);
  return v === '' ? current : v;
};

const timeOfDay: Rule = (v, f) => {
  if (typeof v !== 'string' || !parseTimeOfDay(v)) throw new SettingsError(`${f} must be a time of day as HH:MM, 24-hour (00:00 to 23:59)`);
  return v;
};
const timeZone: Rule = (v, f) => {
  if (typeof v !== 'string' || !isTimeZone(v)) throw new SettingsError(`${f} must be an IANA time zone name such as UTC or Europe/Berlin`);
  return v;
};

// ---- notifications: addresses, hosts and URLs a person types, refused when they cannot work.
const EMAIL = /^[^\s@<>(),;:"[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const emailAddress = (v: unknown, f: string): string => {
  if (typeof v !== 'string' || v.length > 254 || !EMAIL.test(v)) throw new SettingsError(`${f} must be an e-mail address (name@host)`);
  return v;
};
const emailOrEmpty: Rule = (v, f) => (v === '' ? v : emailAddress(v, f));
const smtpHost: Rule = (v, f) => {
  if (typeof v !== 'string' || v.length > 253 || !/^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|[0-9A-Fa-f:]+)?$/.test(v)) {
    throw new SettingsError(`${f} must be a host name or IP address, or "" (no e-mail)`);
  }
  return v;
};
const shortString =
  (max: number): Rule =>
  (v, f) => {
    if (typeof v !== 'string' || v.length > max) throw new SettingsError(`${f} must be a string of at most ${max} characters`);
    return v;
  };
const caPem: Rule = (v, f) => {
  if (typeof v !== 'string' || v.length > 16_384) throw new SettingsError(`${f} must be a PEM certificate of at most 16384 characters, or ""`);
  if (v === '') return v;
  const problem = caPemProblem(v);
  if (problem) throw new SettingsError(`${f}${problem.startsWith(':') ? '' : ' '}${problem}`);
  return v;
};
/** A webhook: http(s) only, no credentials in it (GET shows URLs; the secret is webhook_secret). */
export function webhookUrlProblem(v: unknown): string | undefined {
  if (typeof v !== 'string' || v.length > 2048) return 'must be an http:// or https:// URL of at most 2048 characters';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return 'must be an http:// or https:// URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'must be an http:// or https:// URL';
  if (u.username || u.password) return 'must not carry a user name or password (the request is signed with webhook_secret)';
  // Names are checked again at send time, on every address they resolve to (notify/webhook.ts).
  const self = webhookHostProblem(u.hostname);
  if (self) return `must not name ${self}: alerts go to another host`;
  return undefined;
}
const listOf = (v: unknown, f: string, max: number, what: string): unknown[] => {
  if (!Array.isArray(v) || v.length > max) throw new SettingsError(`${f} must be a list of at most ${max} ${what}`);
  return v;
};
const recipientRules: Rule = (v, f) =>
  listOf(v, f, 16, 'rules').map((entry, i): RecipientRule => {
    const at = `${f}[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new SettingsError(`${at} must be an object`);
    const e = entry as Record<string, unknown>;
    for (const k of Object.keys(e)) if (!['kinds', 'severities', 'emails', 'webhooks'].includes(k)) throw new SettingsError(`unknown setting ${at}.${k}`);
    const kinds = listOf(e.kinds ?? [], `${at}.kinds`, ALERT_KINDS.length, 'alert kinds').map((k) => oneOf(...ALERT_KINDS)(k, `${at}.kinds`, undefined));
    const severities = listOf(e.severities ?? [], `${at}.severities`, 2, 'severities').map((k) => oneOf('critical', 'warning')(k, `${at}.severities`, undefined));
    const emails = listOf(e.emails ?? [], `${at}.emails`, 16, 'e-mail addresses').map((a) => emailAddress(a, `${at}.emails`));
    const webhooks = listOf(e.webhooks ?? [], `${at}.webhooks`, 4, 'webhook URLs').map((w) => {
      const problem = webhookUrlProblem(w);
      if (problem) throw new SettingsError(`${at}.webhooks ${problem}`);
      return w as string;
    });
    if (!emails.length && !webhooks.length) throw new SettingsError(`${at} must name at least one e-mail address or webhook`);
    return { kinds: [...new Set(kinds)], severities: [...new Set(severities)], emails: [...new Set(emails)], webhooks: [...new Set(webhooks)] } as RecipientRule;
  });

/** What one field cannot say alone; named by the field to change. */
function notificationsProblem(n: NotificationSettings): string | undefined {
  const emails = n.recipients.some((r) => r.emails.length);
  if (emails && n.smtp_host === '') return 'notifications.smtp_host must be set: a rule names e-mail addresses';
  if (emails && n.smtp_from === '') return 'notifications.smtp_from must be set: a rule names e-mail addresses';
  if (n.smtp_security === 'none' && n.smtp_user !== '') return 'notifications.smtp_security must be starttls or tls when smtp_user is set (the password would cross the network in clear)';
  if (n.recipients.some((r) => r.webhooks.length) && n.webhook_secret === '') return 'notifications.webhook_secret must be set: a rule names webhooks';
  return undefined;
}

const RULES: Record<string, Record<string, Rule>> = {
  discovery: {
    subnet_scan: bool,
    manual_ranges: bool,
    ranges_text: rangesText,
    enable_snmp: bool,
    snmp_timeout_ms: int(100, 60_000),
    discover_concurrency: int(1, 256),
    auto_discover: bool,
    auto_discover_interval_minutes: int(5, 10_080),
    allowed_ranges: cidrList,
    mdns_enabled: bool,
    port_probes_enabled: bool,
    wsd_enabled: bool,
    ssdp_enabled: bool,
  },
  snmp: { communities, version: oneOf('v1', 'v2c'), v3: v3List, port: int(1, 65_535) },
  collection: { interval_minutes: int(1, 1440) },
  server: { url: serverUrl, enrollment_token: secret, ca_pem: caPem },
  log: { level: oneOf('debug', 'info', 'warn', 'error') },
  update: { url: serverUrl },
  alerts: {
    supply_below_percent: int(0, 100),
    supply_empty_within_days: int(0, 365),
    jam: bool,
    door_open: bool,
    paper_out: bool,
    service_requested: bool,
    offline_after_minutes: int(0, 10_080),
    counter_backwards: bool,
  },
  notifications: {
    smtp_host: smtpHost,
    smtp_port: int(1, 65_535),
    smtp_security: oneOf('starttls', 'tls', 'none'),
    smtp_user: shortString(256),
    smtp_password: secret,
    smtp_from: emailOrEmpty,
    ca_pem: caPem,
    smtp_allow_self_signed: bool,
    webhook_secret: secret,
    digest_minutes: int(0, 1440),
    recipients: recipientRules,
  },
  billing: { enabled: bool, day: int(1, 31), time: timeOfDay, time_zone: timeZone },
  order_list: { within_days: int(1, 365), email_enabled: bool, email_weekday: oneOf(...WEEKDAYS), email_time: timeOfDay },
  display: { time_zone: timeZone },
};

/** Read-only keys GET /settings shows in `notifications`; a client that sends them back changes nothing. */
const SHOWN_ONLY = new Set(['smtp_password_set', 'webhook_secret_set']);

/** Applies a partial update to `current`; throws SettingsError naming the first bad field. */
export function mergeSettings(current: Settings, patch: unknown): Settings {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw new SettingsError('settings must be a JSON object');
  // POST /settings has refused these already; managed settings and provisioning come here directly.
  const inherited = inheritedKeyProblem(patch);
  if (inherited) throw new SettingsError(inherited);
  const next = structuredClone(current) as unknown as Record<string, Record<string, unknown>>;
  for (const [section, values] of Object.entries(patch)) {
    if (section === 'storage') continue; // GET shows the data file system's state; it is not a setting
    if (section === 'provisioning') continue; // GET shows what printbox.toml did (provision/state.ts); read-only
    // Own properties only: `toString` or `hasOwnProperty` is an unknown setting, not a function to call.
    const rules = ownValue(RULES, section);
    if (!rules) throw new SettingsError(`unknown setting ${section}`);
    if (typeof values !== 'object' || values === null || Array.isArray(values)) throw new SettingsError(`${section} must be an object`);
    for (const [key, value] of Object.entries(values)) {
      // GET shows the link's state as server.link; a client that sends it back changes nothing.
      if (section === 'server' && (key === 'link' || key === 'enrollment_token_set')) continue;
      if (section === 'notifications' && SHOWN_ONLY.has(key)) continue;
      const rule = ownValue(rules, key);
      if (!rule) throw new SettingsError(`unknown setting ${section}.${key}`);
      next[section][key] = rule(value, `${section}.${key}`, next[section][key]);
    }
  }
  if (Object.hasOwn(patch, 'notifications')) {
    const problem = notificationsProblem(next.notifications as unknown as NotificationSettings);
    if (problem) throw new SettingsError(problem);
  }
  return next as unknown as Settings;
}

/**
 * Stored settings as this agent knows them: sections and keys a newer agent stored (and this one
 * does not have) are left out, and named. After an update rolls back to the older slot, the older
 * agent keeps the settings it knows (the server URL above all) instead of refusing the whole
 * document for one section it has never heard of.
 */
export function knownSettingsOnly(stored: unknown): { known: Record<string, Record<string, unknown>>; unknown: string[] } {
  const known: Record<string, Record<string, unknown>> = {};
  const unknown: string[] = [];
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return { known, unknown: ['(not an object)'] };
  for (const [section, values] of Object.entries(stored)) {
    const rules = ownValue(RULES, section);
    if (!rules || typeof values !== 'object' || values === null || Array.isArray(values)) {
      unknown.push(section);
      continue;
    }
    known[section] = {};
    for (const [key, value] of Object.entries(values)) {
      if (ownValue(rules, key)) known[section][key] = value;
      else unknown.push(`${section}.${key}`);
    }
  }
  return { known, unknown };
}

/** What GET /settings shows: everything but secrets (SNMPv3 keys, the enrollment token, the SMTP password, the webhook secret). */
export function publicSettings(s: Settings): Settings {
  const copy = structuredClone(s);
  copy.server = { ...copy.server, enrollment_token: '', enrollment_token_set: s.server.enrollment_token !== '' } as Settings['server'];
  copy.snmp.v3 = copy.snmp.v3.map((u) => ({ ...u, auth_key: '', priv_key: '' }));
  // Write-only: shown as "" with whether one is set, so a person knows without seeing it.
  const n = s.notifications;
  copy.notifications = { ...copy.notifications, smtp_password: '', webhook_secret: '', smtp_password_set: n.smtp_password !== '', webhook_secret_set: n.webhook_secret !== '' } as NotificationSettings;
  return copy;
}
