// GET /api/printers: the Printers page in one request. One real agent seeded through
// `import` with 2,000 saved printers (each with raw readings, the newest one served), 40 hidden,
// 60 with an alert, 20 discovered but not saved: search, filter, paging, the 400s, and the plan of
// the statement (no metrics table scanned).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { startAgent, expectJson, expectTextError, type Agent } from '../../kit/agent.js';
import { DAY, HOUR, device, hourStart, metrics, ndjson, nowSeconds, rfc3339 } from '../../kit/seed.js';
import { PRINTER_FILTERS, PrinterListStore } from '../../../src/store/printer-list.js';

const N = 2000;
const serialOf = (i: number) => `PRN-${String(i).padStart(5, '0')}`;
const hidden = (i: number) => i % 50 === 7; // 40
const lowToner = (i: number) => i % 100 === 3; // 20, a supply at 10 %
const statusLine = (i: number) => i % 100 === 5 || i === 7; // 21, "paper jam" (PRN-00007 is hidden)
const tonerAlert = (i: number) => i % 100 === 9; // 20, the printer's own alert
const alerting = (i: number) => lowToner(i) || statusLine(i) || tonerAlert(i); // hidden or not

let agent: Agent;
let NOW = 0;

interface Printer {
  serial: string;
  model: string | null;
  hidden: boolean;
  last_reading: string | null;
  meters: { total: number | null; mono: number | null; colour: number | null };
  toner_levels: Record<string, number> | null;
  status_messages: string[];
  toner_alerts: string[];
  [k: string]: unknown;
}
interface Page {
  total: number;
  offset: number;
  limit: number;
  printers: Printer[];
}

async function page(query: string): Promise<Page> {
  return expectJson(await agent.get(`/api/printers${query}`)) as Page;
}

before(async () => {
  NOW = nowSeconds();
  const lines: object[] = [];
  for (let i = 0; i < N; i++) {
    const serial = serialOf(i);
    lines.push(device(serial, `10.${(i >> 8) & 255}.${i & 255}.${(i % 250) + 1}`, NOW, {
      is_saved: true, visible: !hidden(i), manufacturer: i % 2 ? 'Kyocera' : 'Brother', model: i % 2 ? 'ECOSYS M3145' : 'HL-L8360CDW',
      location: `Building ${Math.floor(i / 100)} room ${i}`, asset_number: `ASSET-${i}`, description: i === N - 1 ? 'The last one, by the Lift' : undefined,
      status_messages: statusLine(i) ? ['paper jam'] : [],
      printer_info: tonerAlert(i) ? { toner_alerts: ['cyan toner low'] } : undefined,
    }));
    // two readings: the newest is the one served
    lines.push(metrics(serial, 'raw', NOW - 2 * HOUR, { page_count: 1000 + i, mono_pages: 900, color_pages: 100 + i, toner_levels: { black: i === 1 ? 41 : 90 } }));
    lines.push(metrics(serial, 'raw', NOW - HOUR, {
      page_count: i % 10 === 4 ? undefined : 2000 + i, mono_pages: 1500, color_pages: 500 + i,
      toner_levels: { black: lowToner(i) ? 10 : i === 1 ? 40 : 80, cyan: 55 },
    }));
  }
  // PRN-00001's black falls 2 points a day for four weeks: a forecast of about 20 days.
  for (let d = 29; d >= 8; d--) {
    lines.push(metrics(serialOf(1), 'hourly', hourStart(NOW - d * DAY), { page_count: 10 * (30 - d), toner_levels: { black: 100 - (29 - d) * 2, cyan: 55 } }));
  }
  for (let i = 0; i < 20; i++) lines.push(device(`DISC-${i}`, `10.9.9.${i + 1}`, NOW, { model: 'ECOSYS M3145' }));
  agent = await startAgent({ seed: ndjson(lines) });
});
after(async () => {
  await agent?.stop();
});

test('the first page: 200 shown printers in serial order, each with its newest reading, and the total', async () => {
  const p = await page('');
  assert.equal(p.total, N - 40, 'shown printers: saved, not hidden, not the discovered ones');
  assert.equal(p.limit, 200);
  assert.equal(p.offset, 0);
  assert.equal(p.printers.length, 200);
  const serials = p.printers.map((x) => x.serial);
  assert.deepEqual(serials, [...serials].sort());
  assert.equal(serials[0], serialOf(0));
  const first = p.printers[0];
  assert.equal(first.model, 'HL-L8360CDW');
  assert.equal(first.hidden, false);
  assert.equal(first.last_reading, rfc3339(NOW - HOUR));
  assert.deepEqual(first.meters, { total: 2000, mono: 1500, colour: 500 });
  assert.deepEqual(first.toner_levels, { black: 80, cyan: 55 });
  assert.equal(first.location, 'Building 0 room 0');
  assert.equal(first.asset_number, 'ASSET-0');
  // No page_count in the newest reading: the total is mono + colour.
  const four = p.printers.find((x) => x.serial === serialOf(4))!;
  assert.deepEqual(four.meters, { total: 1500 + 504, mono: 1500, colour: 504 });
  assert.ok(!serials.some((s) => s.startsWith('DISC-')));
});

test('search finds the last printer by serial, location, asset number and description, without regard to case', async () => {
  const last = serialOf(N - 1);
  for (const q of [last, last.toLowerCase(), `room ${N - 1}`, `asset-${N - 1}`, 'BY THE LIFT', '  by the lift  ']) {
    const p = await page(`?search=${encodeURIComponent(q)}`);
    assert.equal(p.total, 1, q);
    assert.equal(p.printers[0].serial, last, q);
    assert.deepEqual(p.printers[0].meters, { total: 2000 + N - 1, mono: 1500, colour: 500 + N - 1 });
  }
  // By address and model, with the page and total told apart.
  const addr = await page(`?search=${encodeURIComponent('10.7.207.')}&filter=all`);
  assert.ok(addr.printers.every((x) => String(x.ip).startsWith('10.7.207.')));
  assert.equal(addr.total, addr.printers.length);
  const model = await page('?search=ecosys&limit=10&filter=all');
  assert.equal(model.total, N / 2, 'the discovered ECOSYS printers are not counted');
  assert.equal(model.printers.length, 10);
  assert.equal((await page('?search=no-such-printer')).total, 0);
  // Characters that mean something to LIKE or SQL are text.
  assert.equal((await page(`?search=${encodeURIComponent("%'_")}`)).total, 0);
});

test('filters: hidden, alerts (status, toner alert, low supply), all', async () => {
  const hid = await page('?filter=hidden&limit=1000');
  assert.equal(hid.total, 40);
  assert.ok(hid.printers.every((x) => x.hidden));
  assert.deepEqual(hid.printers.map((x) => x.serial), Array.from({ length: N }, (_, i) => i).filter(hidden).map(serialOf));

  const alerts = await page('?filter=alerts&limit=1000');
  const expected = Array.from({ length: N }, (_, i) => i).filter(alerting).map(serialOf);
  assert.equal(alerts.total, expected.length);
  assert.deepEqual(alerts.printers.map((x) => x.serial), expected);
  assert.equal(alerts.printers.find((x) => x.serial === serialOf(7))?.hidden, true, 'a hidden printer with an alert is listed, as the page had it');
  const jam = alerts.printers.find((x) => x.serial === serialOf(5))!;
  assert.deepEqual(jam.status_messages, ['paper jam']);
  const alert = alerts.printers.find((x) => x.serial === serialOf(9))!;
  assert.deepEqual(alert.toner_alerts, ['cyan toner low']);
  assert.equal((await page('?filter=all&limit=1')).total, N);
});

test('paging: the pages of a filter add up to its total, without a gap or a repeat', async () => {
  for (const [filter, limit] of [['all', 1000], ['shown', 333]] as const) {
    const seen: string[] = [];
    let total = -1;
    for (let offset = 0; ; offset += limit) {
      const p = await page(`?filter=${filter}&offset=${offset}&limit=${limit}`);
      total = p.total;
      seen.push(...p.printers.map((x) => x.serial));
      if (p.printers.length < limit) break;
    }
    assert.equal(seen.length, total, filter);
    assert.equal(new Set(seen).size, total, filter);
    assert.deepEqual(seen, [...seen].sort(), filter);
  }
  // Past the end: no printers, and still the total.
  const past = await page('?offset=5000');
  assert.deepEqual(past.printers, []);
  assert.equal(past.total, N - 40);
});

test('sort: by name (a person\'s name, else the model), by a meter either way; pages of a sort add up without a gap or a repeat', async () => {
  // Every newest total is 2000 + i (page_count, or mono + colour where it is missing): largest first is the serials backwards.
  const desc = await page('?filter=all&sort=total&order=desc&limit=1000');
  const serials = desc.printers.map((x) => x.serial);
  assert.equal(serials[0], serialOf(N - 1));
  assert.deepEqual(serials, [...serials].sort().reverse());
  assert.deepEqual(desc.printers.map((x) => x.meters.total), desc.printers.map((x) => x.meters.total).sort((a, b) => b! - a!));
  // The whole list in two pages (at most 1000 a page).
  const byName = [...(await page('?filter=all&sort=name&limit=1000')).printers, ...(await page('?filter=all&sort=name&offset=1000&limit=1000')).printers];
  assert.equal(byName.length, N);
  const names = byName.map((x) => (x.description as string | null) || x.model);
  assert.deepEqual(names.slice(0, 3), ['ECOSYS M3145', 'ECOSYS M3145', 'ECOSYS M3145']);
  assert.equal(names.at(-1), 'The last one, by the Lift', 'its name, not its model, places it');
  assert.equal(byName.filter((x) => x.model === 'ECOSYS M3145').length, N / 2);
  const eco = byName.filter((x) => x.model === 'ECOSYS M3145').map((x) => x.serial);
  assert.deepEqual(eco, [...eco].sort(), 'ties in serial order');
  const seen: string[] = [];
  for (let offset = 0; ; offset += 333) {
    const p = await page(`?filter=all&sort=colour&order=desc&offset=${offset}&limit=333`);
    seen.push(...p.printers.map((x) => x.serial));
    if (p.printers.length < 333) break;
  }
  assert.equal(new Set(seen).size, N);
  assert.deepEqual(seen, [...seen].sort().reverse(), 'colour 500 + i, largest first, across pages');
});

test('forecast=true: each printer with the supply that empties first, or null', async () => {
  const p = await page('?search=PRN-0000&forecast=true&limit=5');
  assert.equal(p.printers.length, 5);
  const [zero, one] = p.printers;
  assert.equal(zero.soonest_empty, null, 'two readings are not enough history');
  const first = one.soonest_empty as { name: string; days_to_empty: number; level: number; reason: string | null };
  assert.equal(first.name, 'black');
  assert.equal(first.level, 40);
  assert.ok(first.days_to_empty > 15 && first.days_to_empty < 25, JSON.stringify(first));
  // The same as the printer's own forecast.
  const own = expectJson(await agent.get(`/api/devices/forecast?serial=${serialOf(1)}`)) as { supplies: { name: string }[] };
  assert.deepEqual(first, own.supplies.find((f) => f.name === 'black'));
  assert.ok(!('soonest_empty' in (await page('?limit=1')).printers[0]), 'only when asked');
});

test('bad parameters are 400 naming the parameter; other methods 405', async () => {
  const cases: [string, string][] = [
    ['?limit=0', 'invalid limit parameter: a whole number from 1 to 1000'],
    ['?limit=1001', 'invalid limit parameter: a whole number from 1 to 1000'],
    ['?limit=ten', 'invalid limit parameter: a whole number from 1 to 1000'],
    ['?limit=1.5', 'invalid limit parameter: a whole number from 1 to 1000'],
    ['?offset=-1', `invalid offset parameter: a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`],
    ['?offset=x', `invalid offset parameter: a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`],
    ['?filter=visible', `invalid filter parameter: one of ${PRINTER_FILTERS.join(', ')}`],
    ['?filter=__proto__', `invalid filter parameter: one of ${PRINTER_FILTERS.join(', ')}`],
    [`?search=${'x'.repeat(201)}`, 'invalid search parameter: at most 200 characters'],
    ['?forecast=yes', 'invalid forecast parameter: true or false'],
    ['?forecast=true&limit=101', 'invalid limit parameter: at most 100 with forecast=true'],
    ['?forecast=true', 'invalid limit parameter: at most 100 with forecast=true'],
    ['?sort=model', 'invalid sort parameter: one of name, last_seen, total, mono, colour'],
    ['?sort=__proto__', 'invalid sort parameter: one of name, last_seen, total, mono, colour'],
    ['?sort=name&order=up', 'invalid order parameter: one of asc, desc'],
  ];
  for (const [q, message] of cases) expectTextError(await agent.get(`/api/printers${q}`), 400, message);
  const post = await agent.request('/api/printers', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  expectTextError(post, 405, 'GET only');
});

test('one statement a page, and no metrics table is scanned (EXPLAIN QUERY PLAN)', () => {
  const db = new Database(join(agent.dataDir, 'printbox.db'), { readonly: true });
  try {
    const store = new PrinterListStore(db);
    for (const filter of PRINTER_FILTERS) {
      const plan = store.plan(filter);
      const text = plan.join('\n');
      assert.ok(!plan.some((l) => /^SCAN (metrics_|r\b|l\b)/.test(l)), `${filter}: a metrics table or device_latest is scanned:\n${text}`);
      assert.ok(plan.some((l) => /^SEARCH r USING INTEGER PRIMARY KEY/.test(l)), `${filter}: the reading by rowid:\n${text}`);
      assert.ok(plan.some((l) => /^SEARCH l USING (PRIMARY KEY|INDEX sqlite_autoindex_device_latest)/.test(l)), `${filter}: device_latest by its key:\n${text}`);
    }
  } finally {
    db.close();
  }
});
