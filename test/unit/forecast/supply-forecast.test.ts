// Supply forecasts against histories whose answer is known: linear use, weekday-only
// use, a replaced cartridge, coarse steps, unknown levels, noise, too little history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { currentLife, forecastSupplies, forecastSupply, theilSen, type SupplyReading } from '../../../src/forecast/supply-forecast.js';
import { lcg } from '../../kit/seed.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// A Monday, noon UTC.
const T0 = Date.UTC(2026, 0, 5, 12);

/** Readings every `every` ms over [0, days) of `level(dayFraction)` and `pages(dayFraction)`. */
function series(days: number, level: (d: number) => number, opts: { every?: number; pages?: (d: number) => number } = {}): SupplyReading[] {
  const out: SupplyReading[] = [];
  for (let t = 0; t < days * DAY; t += opts.every ?? 6 * HOUR) {
    const d = t / DAY;
    out.push({ ts: T0 + t, level: level(d), pages: opts.pages?.(d) });
  }
  return out;
}
const nowAfter = (days: number) => T0 + days * DAY;

function near(actual: number | null, expected: number, tolerance: number, what: string): void {
  assert.ok(actual !== null && Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected} ± ${tolerance}`);
}

test('Theil–Sen ignores a wild point that least squares would follow', () => {
  const xs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const ys = xs.map((x) => 100 - 2 * x);
  ys[4] = 0;
  const fit = theilSen(xs, ys)!;
  assert.equal(fit.slope, -2);
  assert.equal(fit.intercept, 100);
});

test('linear use: 1 % a day and 100 pages a day, 40 days in: 60 days and 6,000 pages left', () => {
  const r = series(40, (d) => 100 - d, { pages: (d) => Math.round(10_000 + 100 * d) });
  const f = forecastSupply('black', r, nowAfter(40));
  near(f.days_to_empty, 60, 1, 'days');
  near(f.pages_to_empty, 6000, 150, 'pages');
  assert.equal(f.empty_on, new Date(nowAfter(100)).toISOString().slice(0, 10));
  assert.ok(f.confidence! >= 0.9, `confidence ${f.confidence}`);
  assert.equal(f.reason, null);
  near(f.level, 60.25, 0.01, 'level');
});

test('weekday-only use: 1.4 % each working day is 1 % a calendar day', () => {
  // Level at day d: 1.4 % for every weekday elapsed (T0 is a Monday), flat on Saturdays and Sundays.
  const used = (d: number) => {
    let u = 0;
    for (let k = 0; k < Math.floor(d); k++) if (k % 7 < 5) u += 1.4;
    if (Math.floor(d) % 7 < 5) u += 1.4 * (d - Math.floor(d));
    return u;
  };
  const r = series(56, (d) => Math.round((100 - used(d)) * 10) / 10);
  const f = forecastSupply('black', r, nowAfter(56));
  const left = 100 - used(56);
  near(f.days_to_empty, left, 4, 'days');
});

test('a replaced cartridge starts a new life: the old one does not bend the fit', () => {
  const first = series(48, (d) => 100 - 2 * d); // 100 -> 4 in 48 days at 2 %/day
  const second = series(30, (d) => 100 - d).map((x) => ({ ...x, ts: x.ts + 48 * DAY }));
  const r = [...first, ...second];
  assert.equal(currentLife(r)[0].ts, T0 + 48 * DAY);
  const f = forecastSupply('black', r, nowAfter(78));
  near(f.days_to_empty, 70, 1.5, 'days');
  // one reading 30 points up, then back down, is noise, not a new cartridge
  const spike = series(30, (d) => 80 - d);
  spike[60] = { ...spike[60], level: 95 };
  assert.equal(currentLife(spike).length, spike.length);
  near(forecastSupply('black', spike, nowAfter(30)).days_to_empty, 50, 1, 'days with a spike');
});

test('coarse 10 % steps: the staircase is fitted on its steps', () => {
  const r = series(45, (d) => Math.round((100 - d) / 10) * 10);
  const f = forecastSupply('black', r, nowAfter(45));
  near(f.days_to_empty, 55, 6, 'days');
  assert.equal(f.level, 60);
});

test('noise of ±3 points every reading: still the trend', () => {
  const rnd = lcg(36);
  const r = series(40, (d) => Math.round(90 - 0.8 * d + (rnd() - 0.5) * 6), { every: HOUR });
  const f = forecastSupply('cyan', r, nowAfter(40));
  near(f.days_to_empty, 58 / 0.8, 4, 'days');
});

test('unknown levels (-2, -3) are ignored; only unknown gives a reason', () => {
  const r = series(40, (d) => 100 - d);
  const mixed = r.map((x, i) => (i % 3 === 0 ? { ...x, level: i % 2 ? -2 : -3 } : x));
  near(forecastSupply('black', mixed, nowAfter(40)).days_to_empty, 60, 1.5, 'days with unknowns');
  const last = [...r, { ts: nowAfter(40), level: -3 }];
  const f = forecastSupply('black', last, nowAfter(40));
  assert.equal(f.level, null, 'the last report was "some left": the level is unknown');
  near(f.days_to_empty, 60, 1.5, 'days');
  const unknown = forecastSupply('black', series(40, () => -3), nowAfter(40));
  assert.deepEqual(unknown, { name: 'black', level: null, days_to_empty: null, pages_to_empty: null, empty_on: null, confidence: null, reason: 'no level reported (unknown or "some left" only)' });
});

test('too little history: nulls and a reason, not a guess', () => {
  const short = forecastSupply('black', series(3, (d) => 100 - 5 * d), nowAfter(3));
  assert.equal(short.days_to_empty, null);
  assert.equal(short.empty_on, null);
  assert.equal(short.confidence, null);
  assert.match(short.reason!, /^not enough history: 2 days/);
  const oneStep = forecastSupply('black', series(20, (d) => (d < 10 ? 100 : 90)), nowAfter(20));
  assert.match(oneStep.reason!, /^not enough history: the level changed 1 time, 2 changes needed$/);
  const flat = forecastSupply('black', series(30, () => 77), nowAfter(30));
  assert.match(flat.reason!, /not enough history|not falling/);
  const rising = forecastSupply('black', series(30, (d) => 40 + d / 2), nowAfter(30));
  assert.equal(rising.reason, 'the level is not falling');
  const recent = series(40, (d) => 100 - d).map((x) => ({ ...x, ts: x.ts }));
  const justReplaced = [...recent, { ts: nowAfter(40), level: 100 }, { ts: nowAfter(41), level: 99 }];
  assert.match(forecastSupply('black', justReplaced, nowAfter(41)).reason!, /^not enough history: 1 days since/);
});

test('an empty supply: 0 days, 0 pages, the day it emptied', () => {
  const r = series(20, (d) => Math.max(0, 10 - d));
  const f = forecastSupply('black', r, nowAfter(20));
  assert.equal(f.days_to_empty, 0);
  assert.equal(f.pages_to_empty, 0);
  assert.equal(f.empty_on, '2026-01-15');
});

test('forecastSupplies: one entry per supply of the newest reading, each from its own levels', () => {
  const h = series(40, (d) => d).map((x) => ({
    ts: x.ts,
    page_count: 1000 + Math.round(x.level! * 50),
    toner_levels: { black: 100 - x.level!, cyan: 80 - x.level! / 2, waste: -3, odd: 'x' },
  }));
  const out = forecastSupplies(h, nowAfter(40));
  assert.deepEqual(out.map((s) => s.name), ['black', 'cyan', 'waste', 'odd']);
  near(out[0].days_to_empty, 60, 1, 'black');
  near(out[1].days_to_empty, 120, 2, 'cyan');
  near(out[0].pages_to_empty, 3000, 100, 'black pages');
  assert.equal(out[2].reason, 'no level reported (unknown or "some left" only)');
  assert.equal(out[3].level, null);
  assert.deepEqual(forecastSupplies([], nowAfter(1)), []);
});
