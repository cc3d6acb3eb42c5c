// Alerts in plain words: "ink" or "toner" from the supply's own type, one entry per
// supply with its worst state, times in the box's zone (summer time included), and the e-mail a
// person acts on. Pure functions; the parser on real recordings for the status lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alertText, describeAlert, localDate, localTime, worstPerSupply, type PrinterFacts } from '../../../src/alerts/words.js';
import { boxIdentity } from '../../../src/alerts/box.js';
import { evaluateAlerts, DEFAULT_ALERT_RULES } from '../../../src/model/alert-rules.js';
import { agentWordsIn, supplyName, printerAgent } from '../../../src/model/supply-words.js';
import { emailSubject, emailText } from '../../../src/notify/message.js';
import { parsePrinter } from '../../../src/snmp/parse/index.js';
import { readSnmprec } from '../../kit/snmprec.js';
import { fixturePath } from '../../kit/snmpsim.js';
import type { AlertJson } from '../../../src/events/payloads.js';

const OPENED = '2026-11-29T09:14:00Z';
const NOW = Date.parse(OPENED);

/** An alert as the rules open it: the message is the rules' own (evaluateAlerts). */
function opened(facts: Parameters<typeof evaluateAlerts>[1], id = 1, serial = 'X7F4008528'): AlertJson[] {
  return evaluateAlerts(DEFAULT_ALERT_RULES, facts, [], NOW).open.map((c, i) => ({
    id: id + i, serial, kind: c.kind, supply: c.supply || null, severity: c.severity, message: c.message, opened_at: OPENED, cleared_at: null, acknowledged_at: null,
  }));
}

const INKJET: PrinterFacts = {
  manufacturer: 'EPSON', model: 'SC-T3200', location: 'Plan room', ip: '10.0.0.31',
  printer_info: { supply_types: { black: 'inkCartridge', cyan: 'inkCartridge', waste_ink: 'wasteInk' }, is_inkjet: true },
};
const LASER: PrinterFacts = {
  manufacturer: 'HP', model: 'Color LaserJet M553', location: '2nd floor copy room', ip: '10.0.0.23', description: '',
  printer_info: { supply_types: { black: 'toner', cyan: 'toner', drum_black: 'opc' } },
};

test('ink or toner from the supply\'s own type; the printer\'s technology when the type is not said; neither: "cartridge"', () => {
  assert.equal(supplyName(INKJET.printer_info, 'cyan'), 'Cyan ink');
  assert.equal(supplyName(LASER.printer_info, 'cyan'), 'Cyan toner');
  // A supply whose own type is unknown: the printer's other supplies say what it marks with.
  assert.equal(supplyName(INKJET.printer_info, 'magenta'), 'Magenta ink');
  assert.equal(supplyName({ is_inkjet: true }, 'yellow'), 'Yellow ink');
  assert.equal(supplyName({ is_laser: true }, 'yellow'), 'Yellow toner');
  assert.equal(supplyName(undefined, 'yellow'), 'Yellow cartridge');
  assert.equal(supplyName(INKJET.printer_info, 'waste_ink'), 'Waste ink box');
  assert.equal(supplyName(LASER.printer_info, 'drum_black'), 'Drum black');
  assert.equal(printerAgent({ supply_types: { black: 'toner', cyan: 'inkCartridge' } }), undefined, 'two agents: neither said');
  const [low] = opened({ levels: { cyan: 9 } });
  assert.equal(alertText(low, INKJET, 'UTC').text, 'Cyan ink is low (9%)');
  assert.equal(alertText(low, LASER, 'UTC').text, 'Cyan toner is low (9%)');
  const [empty] = opened({ levels: { black: 0 } });
  assert.equal(alertText(empty, INKJET, 'UTC').text, 'Black ink is empty');
});

test('an inkjet\'s status never says "Low toner", nor says it is low twice; a laser\'s toner is toner (real recordings)', () => {
  const epson = parsePrinter(readSnmprec(fixturePath('printmaster/epson_cw.snmprec')), '10.0.0.1', new Date(NOW)).info;
  assert.equal(epson.supply_types?.cyan, 'inkCartridge');
  // The low bit ("Low toner" in the MIB's words) and the alert table's "Ink is low." (three rows): said once.
  assert.deepEqual(epson.status_messages, ['Ink is low.', 'Idle']);
  assert.ok(!epson.status_messages?.some((m) => /toner/i.test(m)), JSON.stringify(epson.status_messages));
  assert.deepEqual(agentWordsIn(['Low toner', 'No toner', 'Idle'], 'ink'), ['Low ink', 'No ink', 'Idle'], 'no line of its own: the bit in ink words');
  assert.deepEqual(agentWordsIn(['Low toner', 'Toner Low: Black'], 'toner'), ['Toner Low: Black']);
  assert.deepEqual(agentWordsIn(['Low toner'], undefined), ['Low toner']);
  const kyocera = parsePrinter(readSnmprec(fixturePath('printmaster/kyocera_cs4053.snmprec')), '10.0.0.2', new Date(NOW)).info;
  assert.equal(printerAgent(kyocera), 'toner');
  assert.equal(supplyName(kyocera, 'cyan'), 'Cyan toner');
});

test('times in the box\'s zone: Berlin in winter (CET) and in summer (CEST); a forecast date across the change', () => {
  assert.equal(localTime(Date.parse('2026-11-29T09:14:00Z'), 'Europe/Berlin'), '29 Nov, 10:14 CET');
  assert.equal(localTime(Date.parse('2026-07-01T09:14:00Z'), 'Europe/Berlin'), '1 Jul, 11:14 CEST');
  assert.equal(localTime(Date.parse('2026-07-01T09:14:00Z'), 'UTC'), '1 Jul, 09:14 UTC');
  // 23:30 UTC on 24 Oct is already the 25th in Berlin (summer time, +2), and in UTC still the 24th.
  assert.equal(localDate(Date.parse('2026-10-24T23:30:00Z'), 'Europe/Berlin'), '25 Oct');
  assert.equal(localDate(Date.parse('2026-10-24T23:30:00Z'), 'UTC'), '24 Oct');
  const [soon] = opened({ days_to_empty: { cyan: 4 } });
  assert.equal(alertText(soon, LASER, 'Europe/Berlin').text, 'Cyan toner will run out around 3 Dec');
  const [today] = opened({ days_to_empty: { cyan: 0.4 } });
  assert.equal(alertText(today, LASER, 'UTC').text, 'Cyan toner will run out today');
  const [offline] = opened({ last_seen: NOW - 90 * 60_000 });
  assert.equal(alertText(offline, { ...LASER, last_seen: NOW - 90 * 60_000 }, 'America/New_York').text, 'Not answering since 29 Nov, 02:44 GMT-5');
});

test('one entry per supply with its worst state; other alerts as they are', () => {
  const zone = 'Europe/Berlin';
  const alerts = [
    ...opened({ levels: { cyan: 9, magenta: 0 }, days_to_empty: { cyan: 4, magenta: 0 } }),
    ...opened({ status_messages: ['Paper jam: Tray 2'] }, 10),
  ].map((a) => describeAlert(a, LASER, zone, null));
  assert.equal(alerts.length, 5);
  const rows = worstPerSupply(alerts);
  assert.deepEqual(rows.map((r) => [r.supply, r.kind, r.severity, r.text]), [
    ['cyan', 'supply_low', 'warning', 'Cyan toner is low (9%), will run out around 3 Dec'],
    ['magenta', 'supply_low', 'critical', 'Magenta toner is empty, will run out today'],
    [null, 'jam', 'critical', 'Paper jam: Tray 2'],
  ]);
});

test('the e-mail names the supply, the printer\'s model, location and address, the box, a local time and the link', () => {
  const box = boxIdentity(8443, 'printbox-1a2b', '10.0.0.5');
  const alerts = opened({ levels: { cyan: 9 }, days_to_empty: { cyan: 4 } }).map((a) => describeAlert(a, LASER, 'Europe/Berlin', box.pageUrl(a.serial)));
  const speaker = { box: box.name, address: box.address, zone: 'Europe/Berlin' };
  assert.equal(emailSubject(speaker, alerts), '[PrintBox printbox-1a2b] Cyan toner is low (9%), will run out around 3 Dec (HP Color LaserJet M553, 2nd floor copy room, 10.0.0.23)');
  const text = emailText(speaker, alerts);
  assert.match(text, /^PrintBox printbox-1a2b \(10\.0\.0\.5\) opened 1 alert:/);
  assert.ok(text.includes('HP Color LaserJet M553, 2nd floor copy room, 10.0.0.23\n  - Cyan toner is low (9%), will run out around 3 Dec\n'), text);
  assert.ok(text.includes('Serial X7F4008528; opened 29 Nov, 10:14 CET'), text);
  assert.ok(text.includes('https://printbox-1a2b.local:8443/#/printer/X7F4008528'), text);
  assert.ok(!/supply_low|Z\b/.test(text), 'no machine words, no UTC timestamp');
  // A name someone gave the printer comes first, its model beside it.
  const named = describeAlert(opened({ levels: { black: 5 } })[0], { ...LASER, description: 'Copier A' }, 'UTC', null);
  assert.match(emailSubject(speaker, [named]), /\(Copier A \(HP Color LaserJet M553\), 2nd floor copy room, 10\.0\.0\.23\)$/);
  assert.equal(boxIdentity(443, 'pb.example.org', '').pageUrl('A B'), 'https://pb.example.org/#/printer/A%20B');
});
