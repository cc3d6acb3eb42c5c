// GET /api/devices/page-counts against a real agent (HTTPS, a real SQLite file seeded
// with three days of hourly readings, 10 pages an hour of which 3 in colour): pages per day in UTC
// and in a zone half an hour off the readings (Asia/Kolkata, +05:30), per week and month; the same
// as CSV parsed back by csv-parse; bad parameters answered 400 naming the parameter, an unknown
// printer 404. Every answer also passes the OpenAPI response check of test/kit/agent.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { startAgent, expectJson, expectTextError, type Agent } from '../../kit/agent.js';
import { DAY, HOUR, device, metrics, ndjson, nowSeconds } from '../../kit/seed.js';

const SERIAL = 'PAGES-1';
const MONO_ONLY = 'PAGES-MONO';
const now = nowSeconds();
const first = Math.floor(now / HOUR) * HOUR - 72 * HOUR;
let agent: Agent;

const pagesAt = (t: number) => 1000 + 10 * ((t - first) / HOUR);
const colourAt = (t: number) => 300 + 3 * ((t - first) / HOUR);

before(async () => {
  const rows = [];
  for (let t = first; t <= now; t += HOUR) {
    rows.push(metrics(SERIAL, 'raw', t, { page_count: pagesAt(t), color_pages: colourAt(t), mono_pages: pagesAt(t) - colourAt(t) }));
    rows.push(metrics(MONO_ONLY, 'raw', t, { page_count: pagesAt(t) }));
  }
  agent = await startAgent({
    seed: ndjson([device(SERIAL, '192.0.2.58', now, { is_saved: true }), device(MONO_ONLY, '192.0.2.59', now, { is_saved: true }), ...rows]),
  });
});
after(async () => {
  await agent?.stop();
});

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

test('pages per day in UTC and in Asia/Kolkata: whole days exact, today so far, totals; weeks and months hold them', async () => {
  const from = day(now - 2 * DAY);
  const r = expectJson(await agent.get(`/api/devices/page-counts?serial=${SERIAL}&period=day&from=${from}`)) as any;
  assert.equal(r.serial, SERIAL);
  assert.equal(r.tz, 'UTC');
  assert.deepEqual(r.periods.map((p: any) => p.label), [day(now - 2 * DAY), day(now - DAY), day(now)]);
  for (const p of r.periods.slice(0, 2)) {
    assert.deepEqual([p.pages, p.color_pages, p.mono_pages, p.coverage, p.reset, p.tier], [240, 72, 168, 1, false, 'raw'], p.label);
  }
  const today = r.periods[2];
  const sinceMidnight = Math.floor((now - Math.floor(now / DAY) * DAY) / HOUR);
  assert.equal(today.pages, 10 * sinceMidnight, 'today up to the last reading');
  assert.deepEqual(r.totals, { pages: 480 + today.pages, mono_pages: 336 + today.mono_pages, color_pages: 144 + today.color_pages });
  assert.equal(r.from, `${from}T00:00:00Z`);

  // Kolkata days begin at 18:30 UTC, between two readings: an hour's pages are shared half and half.
  const k = expectJson(await agent.get(`/api/devices/page-counts?serial=${SERIAL}&period=day&tz=Asia/Kolkata&from=${day(now - 2 * DAY)}`)) as any;
  assert.equal(k.tz, 'Asia/Kolkata');
  const whole = k.periods.filter((p: any) => Date.parse(p.end) <= now && Date.parse(p.start) >= first);
  assert.ok(whole.length >= 1);
  for (const p of whole) {
    assert.match(p.start, /T18:30:00Z$/);
    assert.equal(p.pages, 240, p.label);
  }

  // A printer without colour counters: colour and mono are null, not 0.
  const m = expectJson(await agent.get(`/api/devices/page-counts?serial=${MONO_ONLY}&period=week&tz=Europe/Berlin`)) as any;
  assert.equal(m.periods.length, 13, 'thirteen weeks by default');
  assert.ok(m.periods.every((p: any) => /^\d{4}-W\d{2}$/.test(p.label)));
  assert.equal(m.totals.pages, pagesAt(Math.floor(now / HOUR) * HOUR) - 1000);
  assert.equal(m.totals.color_pages, null);
  assert.equal(m.periods[0].pages, null, 'a week without readings is unknown');
  const months = expectJson(await agent.get(`/api/devices/page-counts?serial=${SERIAL}&period=month`)) as any;
  assert.equal(months.periods.length, 12);
  assert.equal(months.totals.pages, m.totals.pages);
});

test('the same as CSV, parsed back', async () => {
  const q = `serial=${SERIAL}&period=day&from=${day(now - 2 * DAY)}`;
  const json = expectJson(await agent.get(`/api/devices/page-counts?${q}`)) as any;
  const csv = await agent.get(`/api/devices/page-counts?${q}&format=csv`);
  assert.equal(csv.status, 200);
  assert.match(String(csv.headers['content-type']), /^text\/csv; charset=utf-8/);
  assert.equal(csv.headers['content-disposition'], `attachment; filename="page-counts-${SERIAL}-day.csv"`);
  const rows = parse(csv.body, { bom: true, columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
  assert.deepEqual(Object.keys(rows[0]), ['serial', 'period', 'label', 'start', 'end', 'pages', 'mono_pages', 'color_pages', 'coverage', 'reset', 'tier']);
  assert.deepEqual(rows.map((r) => [r.label, Number(r.pages), Number(r.color_pages), Number(r.coverage), r.reset, r.start]),
    json.periods.map((p: any) => [p.label, p.pages, p.color_pages, p.coverage, String(p.reset), p.start]));
  assert.ok(rows.every((r) => r.serial === SERIAL && r.period === 'day'));
});

test('bad parameters: 400 naming the parameter; an unknown printer: 404', async () => {
  const base = `/api/devices/page-counts?serial=${SERIAL}`;
  expectTextError(await agent.get('/api/devices/page-counts?period=day'), 400, 'serial parameter required');
  expectTextError(await agent.get(`${base}&period=year`), 400, 'invalid period parameter: one of day, week, month');
  expectTextError(await agent.get(`${base}&tz=Mars/Olympus`), 400, 'invalid tz parameter: an IANA time zone name such as UTC or Europe/Berlin');
  expectTextError(await agent.get(`${base}&tz=%2B01:00`), 400, 'invalid tz parameter: an IANA time zone name such as UTC or Europe/Berlin');
  expectTextError(await agent.get(`${base}&from=yesterday`), 400, 'invalid from parameter: RFC 3339 or a date (YYYY-MM-DD)');
  expectTextError(await agent.get(`${base}&to=2026-02-30`), 400, 'invalid to parameter: RFC 3339 or a date (YYYY-MM-DD)');
  expectTextError(await agent.get(`${base}&from=${day(now)}&to=${day(now - DAY)}`), 400, 'invalid range: from is after to (or after now)');
  expectTextError(await agent.get(`${base}&from=2000-01-01`), 400, 'invalid range: more than 1100 periods; choose a shorter range or a longer period');
  expectTextError(await agent.get(`${base}&format=xml`), 400, 'invalid format parameter: json or csv');
  expectTextError(await agent.get('/api/devices/page-counts?serial=NOPE'), 404, 'no device with serial "NOPE"');
  const post = await agent.request('/api/devices/page-counts', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  assert.equal(post.status, 405);
  // From 2000 by month is fine: 300-odd periods, the old ones unknown.
  const long = expectJson(await agent.get(`${base}&period=month&from=2000-01-01`)) as any;
  assert.equal(long.periods[0].label, '2000-01');
  assert.equal(long.periods[0].pages, null);
});
