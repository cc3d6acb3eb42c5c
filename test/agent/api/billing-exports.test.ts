// Billing reads, the order list and the CSV exports against a real agent (HTTPS, a real SQLite
// file) and a simulated printer (snmpsim on 127.0.59.1 serving the Kyocera P2040 recording):
// - a billing read taken by the agent's own schedule at the billing time set to the current
//   minute, through the ordinary poll path, listed with its delta against the previous period's
//   read (written into the database before the agent started);
// - the order list from seeded forecasts, with a part number where the record has one;
// - every CSV export parsed back by csv-parse, with names holding commas, quotes, line breaks and a
//   leading `=` (written as text, never as a formula);
// - bad parameters answered 400 with the parameter named.
// The printers were saved an hour ago: the period that began on the 1st (the default billing day)
// owes no read, the one the test sets to the current minute does.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { importNdjson, startAgent, writeConfig, expectJson, expectTextError, type Agent } from '../../kit/agent.js';
import { DAY, HOUR, device, metrics, ndjson, type MetricsLine } from '../../kit/seed.js';
import { startSnmpSim, fixturePath, ensureSnmpsim, type SnmpSim } from '../../kit/snmpsim.js';
import { until } from '../../kit/until.js';
import { openDatabase } from '../../../src/store/db.js';
import { join } from 'node:path';

const skip = ensureSnmpsim();
if (skip) console.log(`# billing tests skipped: ${skip}`);

const SIM = { address: '127.0.59.1', serial: 'VD21457943' }; // kyocera_p2040
const ORDER = 'ORDER-0001';
const PLAIN = 'PLAIN-0002';
const HOSTILE_LOCATION = 'Hall 3, "B" wing\nshelf 2';
const FORMULA_MODEL = '=HYPERLINK("http://x","y")';
const now = Date.now();

let sim: SnmpSim;
let agent: Agent;
let previousPeriod = '';


/** Twenty days of a falling black toner (about 3 points a day from 70 %) and cyan stuck low at 5 %. */
function draining(serial: string): MetricsLine[] {
  const rows: MetricsLine[] = [];
  for (let t = now - 20 * DAY; t < now - 10 * 60_000; t += 6 * HOUR) {
    const days = (now - t) / DAY;
    rows.push(metrics(serial, 'raw', t, { page_count: Math.round(90_000 - days * 300), toner_levels: { black: Math.round(10 + days * 3), cyan: 5 } }));
  }
  return rows;
}

function csvOf(body: string): Record<string, string>[] {
  return parse(body, { bom: true, columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
}

before(async () => {
  if (skip) return;
  sim = await startSnmpSim({ endpoints: [{ address: SIM.address, recording: fixturePath('printmaster/kyocera_p2040.snmprec') }] });
  const config = await writeConfig();
  const seed = ndjson([
    device(SIM.serial, SIM.address, now, { is_saved: true, source_type: 'snmp', location: HOSTILE_LOCATION, first_seen: now - HOUR, created_at: now - HOUR }),
    device(ORDER, '127.0.59.2', now, {
      is_saved: true, model: FORMULA_MODEL, location: 'Store, "cellar"', first_seen: now - HOUR, created_at: now - HOUR,
      printer_info: { ip: '127.0.59.2', last_seen: new Date(now).toISOString(), learned_oids: {}, supply_part_numbers: { black: 'TK-1170' } },
    }),
    device(PLAIN, '127.0.59.3', now, { is_saved: true, model: '-plain', location: '@home', created_at: now + DAY }),
    ...draining(ORDER),
    metrics(PLAIN, 'raw', now - HOUR, { page_count: 10, toner_levels: { black: 90 } }),
  ]);
  const imported = await importNdjson(config.configPath, seed);
  assert.equal(imported.code, 0, imported.stderr);
  // The simulated printer's read of the previous period, as the schedule would have kept it.
  const db = openDatabase(join(config.dataDir, 'printbox.db'));
  const d = new Date(now);
  previousPeriod = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
  db.prepare(`INSERT INTO meter_reads (serial, period, due_at, read_at, source, page_count, created_at) VALUES (?, ?, ?, ?, 'poll', 1000, ?)`)
    .run(SIM.serial, previousPeriod, now - 30 * DAY, now - 30 * DAY + 60_000, now);
  db.close();
  agent = await startAgent({ config });
});

after(async () => {
  await agent?.stop();
  await sim?.stop();
});

test('the billing read: taken by the schedule at the billing time through a real poll, listed with its delta; as CSV', { skip: skip ?? false }, async () => {
  expectTextError(await agent.post('/settings', { billing: { time: '24:00' } }), 400, 'billing.time must be a time of day as HH:MM, 24-hour (00:00 to 23:59)');
  expectTextError(await agent.post('/settings', { billing: { time_zone: 'Mars/Olympus' } }), 400, 'billing.time_zone must be an IANA time zone name such as UTC or Europe/Berlin');
  expectTextError(await agent.post('/settings', { billing: { day: 32 } }), 400, 'billing.day must be an integer from 1 to 31');
  const t = new Date();
  const time = `${String(t.getUTCHours()).padStart(2, '0')}:${String(t.getUTCMinutes()).padStart(2, '0')}`;
  const due = Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes());
  const period = t.toISOString().slice(0, 7);
  expectJson(await agent.post('/settings', {
    discovery: { allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 1500 },
    snmp: { port: sim.port },
    billing: { day: t.getUTCDate(), time, time_zone: 'UTC' },
  }));
  // The schedule's minute tick takes it (within about a minute); the printer answers at once.
  const list = await until('the billing read', async () => {
    const r = expectJson(await agent.get(`/api/billing/reads?period=${period}`)) as any;
    return r.reads.some((x: any) => x.serial === SIM.serial) ? r : undefined;
  }, 150_000);
  assert.equal(list.period, period);
  const read = list.reads.find((x: any) => x.serial === SIM.serial);
  assert.equal(read.source, 'poll');
  assert.equal(read.billing_time, new Date(due).toISOString().replace('.000Z', 'Z'));
  assert.ok(Date.parse(read.read_at) >= due, 'read at or after the billing time');
  assert.ok(read.offset_minutes >= 0 && read.offset_minutes <= 3);
  assert.equal(read.location, HOSTILE_LOCATION);
  assert.ok(read.total > 1000, 'the recording\'s page counter');
  assert.deepEqual(read.previous, { period: previousPeriod, read_at: new Date(now - 30 * DAY + 60_000).toISOString().replace(/\.(\d*?)0*Z$/, (_m, f: string) => (f ? `.${f}Z` : 'Z')), total: 1000, counters: { page_count: 1000 } });
  assert.equal(read.delta.total, read.total - 1000);
  // The printer the schedule had to read without an answer is listed once the day is over (unit
  // tests); a printer saved after the billing time owes none.
  assert.ok(!list.reads.some((x: any) => x.serial === PLAIN));
  assert.ok(list.periods.some((p: any) => p.period === previousPeriod));

  const csv = await agent.get(`/api/billing/reads?period=${period}&format=csv`);
  assert.equal(csv.status, 200);
  assert.match(String(csv.headers['content-type']), /^text\/csv; charset=utf-8/);
  assert.match(String(csv.headers['content-disposition']), new RegExp(`attachment; filename="billing-reads-${period}.csv"`));
  assert.ok(csv.body.startsWith('\uFEFFserial,'), 'UTF-8 with a BOM and the header row');
  assert.ok(csv.body.endsWith('\r\n'), 'RFC 4180 CRLF');
  const rows = csvOf(csv.body);
  const row = rows.find((r) => r.serial === SIM.serial)!;
  assert.equal(row.location, HOSTILE_LOCATION);
  assert.equal(row.source, 'poll');
  assert.equal(Number(row.delta_total), read.delta.total);
  assert.equal(row.previous_period, previousPeriod);
  expectTextError(await agent.get('/api/billing/reads?period=2026-13'), 400, 'invalid period parameter: a month as YYYY-MM');
  expectTextError(await agent.get('/api/billing/reads?format=xml'), 400, 'invalid format parameter: json or csv');
});

test('the order list from seeded forecasts: low now, or forecast to run out within 14 days; with the part number where reported', { skip: skip ?? false }, async () => {
  const list = expectJson(await agent.get('/api/supplies/order-list')) as any;
  assert.equal(list.within_days, 14);
  const mine = list.items.filter((i: any) => i.serial === ORDER);
  const black = mine.find((i: any) => i.supply === 'black');
  const cyan = mine.find((i: any) => i.supply === 'cyan');
  // Black at about 10 % falling 3 points a day: low already, and empty in about 3 days.
  assert.deepEqual(black.reasons, ['low', 'forecast']);
  assert.equal(black.part_number, 'TK-1170');
  assert.ok(black.days_to_empty > 1 && black.days_to_empty < 6, `black empty in ${black.days_to_empty} days`);
  assert.equal(black.expected_empty_on, new Date(now + black.days_to_empty * DAY).toISOString().slice(0, 10));
  assert.equal(black.location, 'Store, "cellar"');
  // Cyan at 5 % and not falling: low, no forecast, no part number in the record.
  assert.deepEqual([cyan.reasons, cyan.part_number, cyan.expected_empty_on], [['low'], null, null]);
  assert.ok(!list.items.some((i: any) => i.serial === PLAIN), 'a full supply with no trend is not listed');
  // Soonest first: dated items before undated ones.
  assert.ok(list.items.indexOf(black) < list.items.indexOf(cyan));
  // With a window of 1 day, black stays (low) and is still listed; the setting is validated.
  expectTextError(await agent.post('/settings', { order_list: { within_days: 0 } }), 400, 'order_list.within_days must be an integer from 1 to 365');

  const csv = await agent.get('/api/supplies/order-list?format=csv');
  assert.equal(csv.status, 200);
  const rows = csvOf(csv.body);
  const b = rows.find((r) => r.serial === ORDER && r.supply === 'black')!;
  assert.equal(b.model, `'${FORMULA_MODEL}`, 'a leading = is written as text');
  assert.equal(b.part_number, 'TK-1170');
  assert.equal(b.reasons, 'low forecast');
  assert.equal(rows.length, list.items.length);
});

test('the printers list and a printer\'s meter history as CSV: every field back as written, formulas defused', { skip: skip ?? false }, async () => {
  const csv = await agent.get('/api/printers?filter=all&format=csv');
  assert.equal(csv.status, 200);
  const rows = csvOf(csv.body);
  assert.deepEqual(rows.map((r) => r.serial), [ORDER, PLAIN, SIM.serial]);
  const bySerial = new Map(rows.map((r) => [r.serial, r]));
  assert.equal(bySerial.get(SIM.serial)!.location, HOSTILE_LOCATION);
  assert.equal(bySerial.get(ORDER)!.model, `'${FORMULA_MODEL}`);
  assert.equal(bySerial.get(PLAIN)!.model, "'-plain");
  assert.equal(bySerial.get(PLAIN)!.location, "'@home");
  assert.equal(bySerial.get(PLAIN)!.supply_black_percent, '90');
  assert.equal(bySerial.get(ORDER)!.supply_cyan_percent, '5');
  assert.equal(bySerial.get(ORDER)!.supply_part_numbers, 'black: TK-1170');
  assert.equal(bySerial.get(PLAIN)!.page_count, '10');

  const since = new Date(now - 21 * DAY).toISOString().replace(/\.\d+Z$/, 'Z');
  const json = expectJson(await agent.get(`/api/devices/meter-history?serial=${ORDER}&tier=raw&since=${since}`)) as any[];
  const hist = await agent.get(`/api/devices/meter-history?serial=${ORDER}&tier=raw&since=${since}&format=csv`);
  assert.equal(hist.status, 200);
  const h = csvOf(hist.body);
  assert.equal(h.length, json.length);
  // Raw rows older than 7 days were rolled up and removed at start (retention): the week's 28 stay (a whole day of them may outlive its window).
  assert.ok(h.length >= 28 && h.length <= 32, `${h.length} raw rows`);
  assert.deepEqual(h.map((r) => Number(r.page_count)), json.map((s) => s.page_count));
  assert.deepEqual(h.map((r) => r.timestamp), json.map((s) => s.timestamp));
  assert.deepEqual(Object.keys(h[0]).slice(-2), ['supply_black_percent', 'supply_cyan_percent']);
  expectTextError(await agent.get(`/api/devices/meter-history?serial=${ORDER}&tier=weekly`), 400, 'invalid tier parameter: one of raw, hourly, daily, monthly');
  expectTextError(await agent.get(`/api/devices/meter-history?serial=${ORDER}&since=yesterday`), 400, 'invalid since parameter (use RFC3339 format)');
  expectTextError(await agent.get('/api/devices/meter-history?serial=NOPE'), 404, 'no device with serial "NOPE"');
});
