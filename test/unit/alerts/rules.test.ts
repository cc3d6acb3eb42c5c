// Alert rules: which conditions open an alert, which clear it, and the hysteresis that
// keeps a value flickering at a threshold from opening and clearing on every poll.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_ALERT_RULES, evaluateAlerts, FORECAST_CLEAR_MARGIN_DAYS, SUPPLY_CLEAR_MARGIN, type AlertKind, type OpenAlertKey } from '../../../src/model/alert-rules.js';

const NOW = Date.UTC(2026, 10, 26, 12);
const R = DEFAULT_ALERT_RULES;
const open = (id: number, kind: AlertKind, supply = ''): OpenAlertKey => ({ id, kind, supply });

test('a supply below the threshold opens once; an open one is not opened again', () => {
  const r = evaluateAlerts(R, { levels: { toner_black: 10, toner_cyan: 40 } }, [], NOW);
  assert.deepEqual(r.open.map((c) => [c.kind, c.supply, c.severity]), [['supply_low', 'toner_black', 'warning']]);
  assert.match(r.open[0].message, /toner_black at 10% \(below 15%\)/);
  const again = evaluateAlerts(R, { levels: { toner_black: 9 } }, [open(1, 'supply_low', 'toner_black')], NOW);
  assert.deepEqual(again, { open: [], clear: [] });
  assert.equal(evaluateAlerts(R, { levels: { toner_black: 0 } }, [], NOW).open[0].severity, 'critical');
});

test('a low-supply alert clears only at the threshold plus the margin (hysteresis)', () => {
  const was = [open(7, 'supply_low', 'toner_black')];
  const threshold = R.supply_below_percent;
  // Back at the threshold and just under threshold + margin: still open.
  for (const level of [threshold, threshold + SUPPLY_CLEAR_MARGIN - 1]) {
    assert.deepEqual(evaluateAlerts(R, { levels: { toner_black: level } }, was, NOW), { open: [], clear: [] }, `level ${level}`);
  }
  assert.deepEqual(evaluateAlerts(R, { levels: { toner_black: threshold + SUPPLY_CLEAR_MARGIN } }, was, NOW).clear, [7]);
  // Without an open alert, a level in the band opens nothing either.
  assert.deepEqual(evaluateAlerts(R, { levels: { toner_black: threshold + 1 } }, [], NOW).open, []);
});

test('an unknown level (-2, -3) leaves a low-supply alert as it was; a supply no longer reported clears', () => {
  const was = [open(3, 'supply_low', 'toner_black')];
  assert.deepEqual(evaluateAlerts(R, { levels: { toner_black: -3 } }, was, NOW), { open: [], clear: [] });
  assert.deepEqual(evaluateAlerts(R, { levels: { toner_cyan: 80 } }, was, NOW).clear, [3]);
});

test('a forecast within N days opens; it clears beyond N plus the margin or with no forecast', () => {
  const days = R.supply_empty_within_days;
  const r = evaluateAlerts(R, { days_to_empty: { toner_black: days - 2, toner_cyan: days + 10, toner_yellow: null } }, [], NOW);
  assert.deepEqual(r.open.map((c) => [c.kind, c.supply]), [['supply_empty_soon', 'toner_black']]);
  assert.match(r.open[0].message, /in about 5 days/);
  const was = [open(4, 'supply_empty_soon', 'toner_black')];
  assert.deepEqual(evaluateAlerts(R, { days_to_empty: { toner_black: days + FORECAST_CLEAR_MARGIN_DAYS } }, was, NOW).clear, []);
  assert.deepEqual(evaluateAlerts(R, { days_to_empty: { toner_black: days + FORECAST_CLEAR_MARGIN_DAYS + 0.5 } }, was, NOW).clear, [4]);
  assert.deepEqual(evaluateAlerts(R, { days_to_empty: { toner_black: null } }, was, NOW).clear, [4]);
});

test('status lines over SNMP, IPP and USB open jam, door, paper and service alerts; their end clears them', () => {
  const cases: [string, AlertKind][] = [
    ['Paper jam', 'jam'],
    ['media-jam-error', 'jam'],
    ['Door open', 'door_open'],
    ['Cover open', 'door_open'],
    ['door-open-warning', 'door_open'],
    ['Cover is Open', 'door_open'], // a Brother panel's words
    ['Front Door is open.', 'door_open'],
    ['No paper', 'paper_out'],
    ['media-empty-error', 'paper_out'],
    ['paper empty', 'paper_out'],
    ['Service requested', 'service_requested'],
  ];
  for (const [line, kind] of cases) {
    const r = evaluateAlerts(R, { status_messages: ['Low toner', line] }, [], NOW);
    assert.deepEqual(r.open.map((c) => c.kind), [kind], line);
  }
  assert.deepEqual(evaluateAlerts(R, { status_messages: ['Low paper', 'Door closed', 'Cover is closed', 'Sleep mode'] }, [], NOW).open, []);
  assert.deepEqual(evaluateAlerts(R, { status_messages: [] }, [open(9, 'jam'), open(10, 'door_open')], NOW).clear, [9, 10]);
});

test('a rule turned off opens nothing and clears what it opened', () => {
  const off = { ...R, jam: false, supply_below_percent: 0, offline_after_minutes: 0, counter_backwards: false };
  const was = [open(1, 'jam'), open(2, 'supply_low', 'toner_black'), open(3, 'offline'), open(4, 'counter_backwards')];
  const r = evaluateAlerts(off, { levels: { toner_black: 1 }, status_messages: ['Paper jam'], last_seen: NOW - 86_400_000, counter_flag: true }, was, NOW);
  assert.deepEqual(r, { open: [], clear: [1, 2, 3, 4] });
});

test('offline opens after N minutes of silence and clears at the next answer', () => {
  const n = R.offline_after_minutes * 60_000;
  assert.deepEqual(evaluateAlerts(R, { last_seen: NOW - n + 1000 }, [], NOW).open, []);
  const r = evaluateAlerts(R, { last_seen: NOW - n }, [], NOW);
  assert.deepEqual(r.open.map((c) => [c.kind, c.severity]), [['offline', 'critical']]);
  assert.deepEqual(evaluateAlerts(R, { last_seen: NOW }, [open(5, 'offline')], NOW).clear, [5]);
  assert.equal(r.open[0].message, `not answering for ${R.offline_after_minutes} minutes`);
  // The smallest setting reads as English too.
  const one = evaluateAlerts({ ...R, offline_after_minutes: 1 }, { last_seen: NOW - 90_000 }, [], NOW).open[0];
  assert.equal(one.message, 'not answering for 1 minute');
});

test('a counter going backwards opens; accepted or dismissed, it clears', () => {
  assert.deepEqual(evaluateAlerts(R, { counter_flag: true }, [], NOW).open.map((c) => c.kind), ['counter_backwards']);
  assert.deepEqual(evaluateAlerts(R, { counter_flag: false }, [open(6, 'counter_backwards')], NOW).clear, [6]);
});

test('facts not known in an evaluation neither open nor clear their kind (the offline check knows only last_seen)', () => {
  const was = [open(1, 'jam'), open(2, 'supply_low', 'toner_black'), open(3, 'counter_backwards'), open(4, 'supply_empty_soon', 'toner_black')];
  assert.deepEqual(evaluateAlerts(R, { last_seen: NOW }, was, NOW), { open: [], clear: [] });
});
