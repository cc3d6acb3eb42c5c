// A refused setting in a person's words: the agent's 400 names the setting by its key
// ("snmp.v3[0].auth_key must have at least 8 characters"), which API clients read and match on;
// the web UI shows the same refusal as the Settings page names the field ("SNMPv3 user 1: the
// authentication key needs at least 8 characters") and puts it next to that field. Both come
// from the one message here, so the two never say different things.

/** Each setting as the Settings page names it (a noun phrase; lists' entries below). */
const LABELS: Record<string, string> = {
  'discovery.subnet_scan': "scanning this box's own subnets",
  'discovery.manual_ranges': 'scanning the ranges',
  'discovery.ranges_text': 'the ranges',
  'discovery.enable_snmp': 'reading printers by SNMP',
  'discovery.snmp_timeout_ms': 'the SNMP timeout (ms)',
  'discovery.discover_concurrency': 'the number of addresses asked at once',
  'discovery.auto_discover': 'scanning automatically',
  'discovery.auto_discover_interval_minutes': 'the time between automatic scans (minutes)',
  'discovery.allowed_ranges': 'the allowed ranges',
  'discovery.mdns_enabled': 'listening for mDNS',
  'discovery.port_probes_enabled': 'probing printer ports',
  'discovery.wsd_enabled': 'listening for WS-Discovery',
  'discovery.ssdp_enabled': 'searching by SSDP',
  'snmp.communities': 'the communities',
  'snmp.version': 'the SNMP version',
  'snmp.v3': 'the SNMPv3 users',
  'snmp.port': 'the UDP port',
  'collection.interval_minutes': 'the polling interval (minutes)',
  'server.url': 'the server address',
  'server.enrollment_token': 'the enrollment token',
  'server.ca_pem': "the central server's CA certificate",
  'log.level': 'the log level',
  'update.url': 'the update manifest URL',
  'alerts.supply_below_percent': 'the supply level that opens an alert (%)',
  'alerts.supply_empty_within_days': 'the days before a forecast empty supply',
  'alerts.offline_after_minutes': 'the minutes before a silent printer opens an alert',
  'notifications.smtp_host': 'the mail server',
  'notifications.smtp_port': "the mail server's port",
  'notifications.smtp_security': 'the encryption',
  'notifications.smtp_user': 'the mail user name',
  'notifications.smtp_password': 'the mail password',
  'notifications.smtp_from': 'the sender address',
  'notifications.ca_pem': "the mail server's CA certificate",
  'notifications.smtp_allow_self_signed': 'accepting any certificate',
  'notifications.webhook_secret': 'the webhook secret',
  'notifications.digest_minutes': 'the minutes alerts are gathered for',
  'notifications.recipients': 'the rules',
  'billing.day': 'the billing day',
  'billing.time': 'the billing time',
  'billing.time_zone': 'the billing time zone',
  'order_list.within_days': 'the days the order list looks ahead',
};

/** Entries of a list: whose number is shown (from 1) and each key's name. */
const ENTRIES: Record<string, { entry: string; keys: Record<string, string> }> = {
  'snmp.v3': {
    entry: 'SNMPv3 user',
    keys: { user: 'the user name', auth_protocol: 'the authentication protocol', auth_key: 'the authentication key', priv_protocol: 'the privacy protocol', priv_key: 'the privacy key' },
  },
  'notifications.recipients': {
    entry: 'Rule',
    keys: { kinds: 'the alert kinds', severities: 'the severity', emails: 'the e-mail addresses', webhooks: 'the webhook URLs' },
  },
};

// The setting a refusal starts with: "collection.interval_minutes must…", "snmp.v3[1].user must…",
// "notifications.recipients[0] must…", "discovery.ranges_text: line 2: …", "unknown setting x.y".
const NAMED = /^(unknown setting )?([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)(?:\[(\d+)\](?:\.([a-z_][a-z0-9_]*))?)?(?=[ :]|$)/;

/** What the agent's wording becomes in a person's. */
const REWORDED: [RegExp, string][] = [
  [/^ must be an integer from (\d+) to (\d+)$/, ' needs a whole number from $1 to $2'],
  [/^ must have at least (\d+) characters$/, ' needs at least $1 characters'],
  [/^ must be true or false$/, ' must be on or off'],
  [/^ must be an http:\/\/ or https:\/\/ URL$/, ' must be an address starting with http:// or https://'],
  [/^ must be set: a rule names e-mail addresses$/, ' is needed: a rule sends e-mail'],
  [/^ must be set: a rule names webhooks$/, ' is needed: a rule calls webhooks'],
  [/^ must be starttls or tls when smtp_user is set .*$/, ' must be STARTTLS or TLS when a user name is set: the password would otherwise cross the network readable'],
  [/^ needs an auth_protocol$/, ' needs an authentication protocol first'],
  [/^ must name at least one e-mail address or webhook$/, ' needs at least one e-mail address or webhook URL'],
];

export interface PlainRefusal {
  /** The setting's key as the API names it ("snmp.v3[0].auth_key"). */
  field: string;
  /** The refusal as the Settings page says it. */
  plain: string;
}

const upper = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** Own entries only: a key from outside ("constructor") never picks Object's own properties. */
const own = <T>(o: Record<string, T>, k: string): T | undefined => (Object.hasOwn(o, k) ? o[k] : undefined);

/** A refusal's field and its person's words; undefined when the message names no setting. */
export function plainRefusal(message: string): PlainRefusal | undefined {
  const m = NAMED.exec(message);
  if (!m) return undefined;
  const [whole, unknown, path, index, key] = m;
  const field = path + (index !== undefined ? `[${index}]` + (key ? `.${key}` : '') : '');
  let name = own(LABELS, path);
  const list = own(ENTRIES, path);
  if (index !== undefined && list) {
    const n = `${list.entry} ${Number(index) + 1}`;
    name = key ? `${n}: ${own(list.keys, key) ?? key.replace(/_/g, ' ')}` : n;
  }
  if (unknown) return { field, plain: `${field} is not a setting this box knows` };
  if (!name) return { field, plain: message };
  let rest = message.slice(whole.length);
  for (const [re, to] of REWORDED) if (re.test(rest)) rest = rest.replace(re, to);
  return { field, plain: upper(name) + rest };
}
