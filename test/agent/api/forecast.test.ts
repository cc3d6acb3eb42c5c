// GET /api/devices/forecast on a real agent seeded through `import`: the forecast is
// fitted on the history the tiers hold (daily, hourly and raw rows of the last 90 days), each
// supply on its own life; bad input is refused with the read routes' words.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAgent, expectJson, expectTextError, type Agent } from '../../kit/agent.js';
import { DAY, HOUR, MINUTE, dayStart, device, hourStart, metrics, ndjson, nowSeconds } from '../../kit/seed.js';

interface Forecast {
  name: string; level: number | null; days_to_empty: number | null; pages_to_empty: number | null;
  empty_on: string | null; confidence: number | null; reason: string | null;
}

describe('GET /api/devices/forecast', () => {
  let agent: Agent;
  const NOW = nowSeconds();
  // black: 1 %/day since 60 days ago (40 % now), 300 pages a day (300 pages per %): 40 days, 12,000 pages.
  // cyan: replaced 20 days ago at 100 after 2 %/day; 0.5 %/day since (90 % now): 180 days.
  // magenta: the printer says only "some left" (-3). yellow: appeared 3 days ago.
  const levels = (t: number) => {
    const d = (t - (NOW - 60 * DAY)) / DAY;
    const c = t < NOW - 20 * DAY ? 60 - 2 * ((t - (NOW - 40 * DAY)) / DAY) : 100 - 0.5 * ((t - (NOW - 20 * DAY)) / DAY);
    const out: Record<string, number> = { black: Math.round((100 - d) * 10) / 10, cyan: Math.round(c * 10) / 10, magenta: -3 };
    if (t > NOW - 3 * DAY) out.yellow = 100;
    return out;
  };
  const pages = (t: number) => Math.round(50_000 + ((t - (NOW - 90 * DAY)) / DAY) * 300);

  before(async () => {
    const lines: object[] = [
      device('FC-1', '10.0.0.1', NOW, { is_saved: true }),
      device('FC-EMPTY', '10.0.0.2', NOW, { is_saved: true }),
    ];
    const row = (tier: 'raw' | 'hourly' | 'daily', ts: number, at = ts) =>
      lines.push(metrics('FC-1', tier, ts, { page_count: pages(at), toner_levels: levels(at) }));
    // each tier inside its window (model/tiers.ts), as roll-ups and retention leave them
    for (let t = dayStart(NOW - 60 * DAY); t <= NOW - 31 * DAY; t += DAY) row('daily', t, t + 23 * HOUR);
    for (let t = hourStart(NOW - 29 * DAY); t <= NOW - 8 * DAY; t += HOUR) row('hourly', t, t + 59 * MINUTE);
    for (let t = NOW - 7 * DAY + HOUR; t <= NOW - MINUTE; t += 15 * MINUTE) row('raw', t);
    agent = await startAgent({ seed: ndjson(lines) });
  });
  after(async () => agent?.stop());

  test('each supply: days, pages, the date and a confidence, or nulls and a reason', async () => {
    const body = expectJson(await agent.get('/api/devices/forecast?serial=FC-1')) as { supplies: Forecast[] };
    assert.deepEqual(Object.keys(body), ['supplies']);
    const by = Object.fromEntries(body.supplies.map((s) => [s.name, s]));
    assert.deepEqual(body.supplies.map((s) => s.name), ['black', 'cyan', 'magenta', 'yellow']);
    const { black, cyan, magenta, yellow } = by;
    assert.deepEqual(Object.keys(black), ['name', 'level', 'days_to_empty', 'pages_to_empty', 'empty_on', 'confidence', 'reason']);
    assert.ok(Math.abs(black.days_to_empty! - 40) <= 1.5, JSON.stringify(black));
    assert.ok(Math.abs(black.pages_to_empty! - 12_000) <= 500, JSON.stringify(black));
    const emptyOn = Date.parse(black.empty_on! + 'T00:00:00Z');
    assert.ok(Math.abs(emptyOn - (NOW + 40 * DAY)) <= 2 * DAY, JSON.stringify(black));
    assert.ok(black.confidence! >= 0.7 && black.confidence! <= 1, JSON.stringify(black));
    assert.equal(black.reason, null);
    assert.ok(Math.abs(cyan.days_to_empty! - 180) <= 8, `the replacement starts a new life: ${JSON.stringify(cyan)}`);
    assert.deepEqual(magenta, { name: 'magenta', level: null, days_to_empty: null, pages_to_empty: null, empty_on: null, confidence: null, reason: 'no level reported (unknown or "some left" only)' });
    assert.equal(yellow.level, 100);
    assert.equal(yellow.days_to_empty, null);
    assert.match(yellow.reason!, /^not enough history: 2 days since/);
  });

  test('a device without readings has no supplies; unknown and missing serials are refused', async () => {
    assert.deepEqual(expectJson(await agent.get('/api/devices/forecast?serial=FC-EMPTY')), { supplies: [] });
    expectTextError(await agent.get('/api/devices/forecast?serial=NOPE'), 404, 'no device with serial "NOPE"');
    expectTextError(await agent.get('/api/devices/forecast'), 400, 'serial parameter required');
    expectTextError(await agent.get('/api/devices/forecast?serial='), 400, 'serial parameter required');
    expectTextError(await agent.request('/api/devices/forecast?serial=FC-1', { method: 'POST' }), 405, 'GET only');
  });
});
