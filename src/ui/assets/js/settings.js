// @ts-check
// Settings (#/settings/<part>): a list of parts to move between, and the chosen part's sections,
// each saving on its own. A section is made from the settings read (GET /settings) and may follow
// the events; to add one, write its maker (here, or in a module of its own like updates.js) and
// list it in a part of PARTS.
import { get } from './api.js';
import { h } from './dom.js';
import { onEvent } from './live.js';
import { accountsSection } from './accounts.js';
import { accountSection, backupSection, provisioningSection, serverSection, storageSection } from './settings-box.js';
import { notificationsSection } from './notifications.js';
import { billingSection } from './settings-billing.js';
import { chk, choice, field, inp, intOf, lines, settingsForm } from './settings-form.js';
import { updatesSection } from './updates.js';
import { readOnlyForViewer, roleKnown } from './role.js';
import { onLeave, setTitle, view } from './view.js';

/** @typedef {import('./types').Schemas['Settings']} Settings */
/**
 * A section: its element and, when it follows the events, its listener.
 * @typedef {{ node: Node, onEvent?: import('./types').Listener | import('./types').NameListener }} Section
 */

/** @param {Settings} s @returns {Section} */
function discoverySection(s) {
  const d = s.discovery;
  const subnet = chk(d.subnet_scan);
  const manual = chk(d.manual_ranges);
  const auto = chk(d.auto_discover);
  const mdns = chk(d.mdns_enabled);
  const probes = chk(d.port_probes_enabled);
  const wsd = chk(d.wsd_enabled);
  const ssdp = chk(d.ssdp_enabled);
  const ranges = h('textarea', { rows: 4, spellcheck: 'false' });
  ranges.value = d.ranges_text;
  const interval = inp('number', d.auto_discover_interval_minutes, { min: 5, max: 10080, inputmode: 'numeric' });
  const allowed = h('textarea', { rows: 2, spellcheck: 'false' });
  allowed.value = d.allowed_ranges.join('\n');
  const timeout = inp('number', d.snmp_timeout_ms, { min: 100, max: 60000, inputmode: 'numeric' });
  const nothingNote = h('p', { class: 'empty', id: 'settings-no-ranges' });
  const updateNote = () => {
    const none = !subnet.checked && !(manual.checked && ranges.value.trim());
    nothingNote.hidden = !none;
    nothingNote.textContent = none
      ? 'No ranges enabled: turn on subnet scan or add a range, or a scan has nothing to look at.'
      : '';
  };
  for (const el of [subnet, manual, ranges]) el.addEventListener('input', updateNote);
  updateNote();
  const node = settingsForm('settings-discovery', 'Discovery', [
    nothingNote,
    field('discovery.subnet_scan', "Scan this box's own subnets (each at most a /24)", subnet),
    field('discovery.manual_ranges', 'Scan the ranges below', manual),
    field('discovery.ranges_text', 'Ranges', ranges, 'One a line: 192.168.1.0/24, 192.168.1.10-50 or 192.168.1.*'),
    field('discovery.auto_discover', 'Scan automatically', auto),
    field('discovery.auto_discover_interval_minutes', 'Every (minutes)', interval, '5 to 10080'),
    field('discovery.allowed_ranges', 'Allowed ranges', allowed,
      'CIDR, one a line. When set, the box never sends a packet outside them. Empty: no limit.'),
    field('discovery.snmp_timeout_ms', 'SNMP timeout (ms)', timeout, '100 to 60000'),
    field('discovery.mdns_enabled', 'Listen for printers that announce themselves (mDNS) and read them by IPP', mdns,
      "Only on this box's own subnets or the ranges above"),
    field('discovery.port_probes_enabled',
      'Probe printer ports (9100, 631, 515, 80, 443) while scanning, and read IPP where 631 is open', probes,
      'Only the addresses the scan covers'),
    field('discovery.wsd_enabled',
      'Listen for printers that announce themselves by WS-Discovery (Windows printing) and read them', wsd),
    field('discovery.ssdp_enabled', 'Search for printers by SSDP (UPnP)', ssdp),
  ], () => ({
    discovery: {
      subnet_scan: subnet.checked, manual_ranges: manual.checked, ranges_text: ranges.value,
      auto_discover: auto.checked,
      auto_discover_interval_minutes: intOf(interval), allowed_ranges: lines(allowed.value),
      snmp_timeout_ms: intOf(timeout), mdns_enabled: mdns.checked, port_probes_enabled: probes.checked,
      wsd_enabled: wsd.checked, ssdp_enabled: ssdp.checked,
    },
  }));
  return { node };
}

const V3_KEYS = /** @type {const} */ (['user', 'auth_protocol', 'auth_key', 'priv_protocol', 'priv_key']);

/** SNMP: communities and v3 users (keys are never shown: an empty key keeps the stored one). @param {Settings} s */
function snmpSection(s) {
  const sn = s.snmp;
  const communities = h('textarea', { rows: 2, spellcheck: 'false' });
  communities.value = sn.communities.join('\n');
  const version = choice(['v2c', 'v1'], sn.version);
  const port = inp('number', sn.port, { min: 1, max: 65535, inputmode: 'numeric' });
  const v3Box = h('div', { id: 'v3-users' });
  /** @typedef {Record<typeof V3_KEYS[number], HTMLInputElement | HTMLSelectElement> & { removed?: boolean }} V3Row */
  /** @type {V3Row[]} */
  const v3Rows = [];
  /** @param {string[]} values @param {string} current */
  const protocol = (values, current) =>
    h('select', {}, values.map((p) => h('option', { value: p, text: p, selected: p === current })));
  /** @param {Settings['snmp']['v3'][number] | null} u */
  function addV3(u) {
    const i = v3Rows.length;
    const keyHint = u ? 'Stored and never shown; leave empty to keep it.' : 'At least 8 characters';
    /** @type {V3Row} */
    const row = {
      user: inp('text', u ? u.user : '', { autocomplete: 'off' }),
      auth_protocol: protocol(['SHA', 'MD5', 'none'], u ? u.auth_protocol : 'SHA'),
      auth_key: inp('password', '', { autocomplete: 'new-password', placeholder: u ? 'unchanged' : '' }),
      priv_protocol: protocol(['AES', 'DES', 'none'], u ? u.priv_protocol : 'AES'),
      priv_key: inp('password', '', { autocomplete: 'new-password', placeholder: u ? 'unchanged' : '' }),
    };
    const at = 'snmp.v3[' + i + '].';
    const box = h('fieldset', { class: 'v3' }, h('legend', { text: 'SNMPv3 user ' + (i + 1) }),
      field(at + 'user', 'User name', row.user),
      field(at + 'auth_protocol', 'Authentication', row.auth_protocol),
      field(at + 'auth_key', 'Authentication key', row.auth_key, keyHint),
      field(at + 'priv_protocol', 'Privacy', row.priv_protocol),
      field(at + 'priv_key', 'Privacy key', row.priv_key, keyHint),
      h('button', {
        type: 'button', text: 'Remove this user',
        onclick: () => {
          row.removed = true;
          box.hidden = true;
        },
      }));
    v3Rows.push(row);
    v3Box.append(box);
  }
  sn.v3.forEach(addV3);
  // The users sent, in order; the agent names a bad one by its index in that list (snmp.v3[1].user),
  // which the form's fields are renamed to match before each save.
  function keptV3() {
    const kept = v3Rows.filter((r) => !r.removed);
    kept.forEach((r, i) => {
      for (const k of V3_KEYS) {
        r[k].dataset.path = 'snmp.v3[' + i + '].' + k;
        const err = r[k].closest('.field')?.querySelector('[data-error-for]');
        if (err instanceof HTMLElement) err.dataset.errorFor = 'snmp.v3[' + i + '].' + k;
      }
    });
    return kept;
  }
  const node = settingsForm('settings-snmp', 'SNMP', [
    field('snmp.communities', 'Communities (v1/v2c)', communities, 'One a line, tried in order'),
    field('snmp.version', 'Version', version),
    field('snmp.port', 'UDP port', port, '161 on real printers'),
    v3Box, h('p', {}, h('button', { type: 'button', text: 'Add an SNMPv3 user', onclick: () => addV3(null) })),
  ], () => ({
    snmp: {
      communities: lines(communities.value), version: /** @type {'v1' | 'v2c'} */ (version.value), port: intOf(port),
      v3: keptV3().map((r) => ({
        user: r.user.value, auth_protocol: /** @type {any} */ (r.auth_protocol.value), auth_key: r.auth_key.value,
        priv_protocol: /** @type {any} */ (r.priv_protocol.value), priv_key: r.priv_key.value,
      })),
    },
  }), () => {
    for (const r of v3Rows) {
      r.auth_key.value = '';
      r.priv_key.value = '';
    }
  });
  return { node };
}

/** @param {Settings} s @returns {Section} */
function pollingSection(s) {
  const pollEvery = inp('number', s.collection.interval_minutes, { min: 1, max: 1440, inputmode: 'numeric' });
  return {
    node: settingsForm('settings-polling', 'Polling',
      [field('collection.interval_minutes', 'Read saved printers every (minutes)', pollEvery, '1 to 1440')],
      () => ({ collection: { interval_minutes: intOf(pollEvery) } })),
  };
}

/** Alert rules (GET /api/alerts says how alerts open and clear). @param {Settings} s @returns {Section} */
function alertRulesSection(s) {
  const al = s.alerts;
  const below = inp('number', al.supply_below_percent, { min: 0, max: 100, inputmode: 'numeric' });
  const within = inp('number', al.supply_empty_within_days, { min: 0, max: 365, inputmode: 'numeric' });
  const offlineAfter = inp('number', al.offline_after_minutes, { min: 0, max: 10080, inputmode: 'numeric' });
  const jam = chk(al.jam);
  const door = chk(al.door_open);
  const paper = chk(al.paper_out);
  const service = chk(al.service_requested);
  const backwards = chk(al.counter_backwards);
  // The zone alerts, e-mails and webhooks say times in (display.time_zone): typed, with the
  // browser's list of IANA names to pick from; the box checks the name when it is saved.
  const zone = inp('text', s.display.time_zone, { list: 'time-zones', autocomplete: 'off', spellcheck: 'false' });
  const zones = h('datalist', { id: 'time-zones' }, Intl.supportedValuesOf('timeZone').map((z) => h('option', { value: z })));
  const node = settingsForm('settings-alerts', 'Alerts', [
    field('alerts.supply_below_percent', 'A supply below (%)', below,
      '0 to 100; 0 turns it off. Cleared 5 points above.'),
    field('alerts.supply_empty_within_days', 'A supply forecast empty within (days)', within,
      '0 to 365; 0 turns it off'),
    field('alerts.offline_after_minutes', 'A printer not answering for (minutes)', offlineAfter,
      '0 to 10080; 0 turns it off'),
    field('alerts.jam', 'Paper jam', jam), field('alerts.door_open', 'Door or cover open', door),
    field('alerts.paper_out', 'Out of paper', paper),
    field('alerts.service_requested', 'Service requested', service),
    field('alerts.counter_backwards', 'Page counter went backwards', backwards),
    field('display.time_zone', 'Time zone of alert messages and e-mails', zone, 'An IANA name such as Europe/Berlin'), zones,
  ], () => ({
    alerts: {
      supply_below_percent: intOf(below), supply_empty_within_days: intOf(within),
      offline_after_minutes: intOf(offlineAfter),
      jam: jam.checked, door_open: door.checked, paper_out: paper.checked, service_requested: service.checked,
      counter_backwards: backwards.checked,
    },
    display: { time_zone: zone.value.trim() },
  }));
  return { node };
}

/** @param {Settings} s @returns {Section} */
function logSection(s) {
  const level = choice(['debug', 'info', 'warn', 'error'], s.log.level);
  return {
    node: settingsForm('settings-log', 'Logging',
      [field('log.level', 'Log level', level, 'Applied at once. debug is verbose.')],
      () => ({ log: { level: /** @type {Settings['log']['level']} */ (level.value) } })),
  };
}

/**
 * The page's parts, one shown at a time (#/settings/<id>; #/settings shows the first), each with
 * its sections in order (a section maker's null: not shown to this account). Switching part is
 * a navigation: unsaved edits in the part left are asked about first (view.js guardLeave).
 * @type {{ id: string, title: string, sections: ((s: Settings) => Section | null)[] }[]}
 */
export const PARTS = [
  { id: 'discovery', title: 'Discovery', sections: [discoverySection] },
  { id: 'snmp', title: 'SNMP', sections: [snmpSection] },
  { id: 'polling', title: 'Polling and alerts', sections: [pollingSection, alertRulesSection] },
  { id: 'notifications', title: 'Notifications', sections: [notificationsSection] },
  { id: 'server', title: 'Central server', sections: [serverSection] },
  { id: 'accounts', title: 'Accounts', sections: [accountSection, accountsSection] },
  { id: 'billing', title: 'Billing and order list', sections: [billingSection] },
  { id: 'updates', title: 'Updates', sections: [updatesSection] },
  { id: 'box', title: 'Box', sections: [logSection, storageSection, provisioningSection] },
  { id: 'backup', title: 'Backup', sections: [backupSection] },
];

/** @param {string} [partId] the part in the address (#/settings/<id>); none or unknown: the first */
export async function settingsView(partId) {
  const part = PARTS.find((p) => p.id === partId) || PARTS[0];
  setTitle('Settings · ' + part.title);
  // The Accounts section is an admin's: the role must be known first.
  const [s] = await Promise.all([get('/settings'), roleKnown]);
  const sections = part.sections.map((make) => make(s)).filter((x) => x !== null);
  const nav = h('nav', { class: 'settings-parts', 'aria-label': 'Settings sections' },
    h('ul', {}, PARTS.map((p) => h('li', {}, h('a', {
      href: '#/settings/' + p.id, id: 'settings-part-' + p.id, text: p.title,
      'aria-current': p === part ? 'page' : undefined,
    })))));
  view().replaceChildren(h('h2', { class: 'sr-only', text: 'Settings: ' + part.title }), nav,
    h('div', { class: 'settings-part', id: 'settings-part', 'data-part': part.id }, ...sections.map((x) => x.node)));
  // A viewer reads every section; only their own password stays theirs to change.
  readOnlyForViewer(view());
  for (const x of sections) if (x.onEvent) onLeave(onEvent(x.onEvent));
}
