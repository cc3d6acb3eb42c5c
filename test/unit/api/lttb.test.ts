import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lttb } from '../../../src/api/lttb.js';

const series = (n: number) => Array.from({ length: n }, (_, i) => ({ i, page_count: Math.round(1000 + 50 * Math.sin(i / 7) + i) }));

test('returns the rows untouched when there are no more than target', () => {
  const rows = series(10);
  assert.equal(lttb(rows, 10), rows);
  assert.equal(lttb(rows, 200), rows);
});

test('targets below 3 cause no reduction', () => {
  const rows = series(50);
  assert.equal(lttb(rows, 1).length, 50);
  assert.equal(lttb(rows, 2).length, 50);
});

test('returns exactly target rows, keeps first and last, preserves order and identity', () => {
  for (const [n, target] of [[1000, 200], [201, 200], [57, 3], [10_000, 10_000 - 1], [5, 4]] as const) {
    const rows = series(n);
    const out = lttb(rows, target);
    assert.equal(out.length, target, `${n}->${target}`);
    assert.equal(out[0], rows[0]);
    assert.equal(out[out.length - 1], rows[n - 1]);
    for (let k = 1; k < out.length; k++) assert.ok(out[k].i > out[k - 1].i, 'strictly ascending positions');
    for (const r of out) assert.equal(r, rows[r.i], 'rows are the original objects');
  }
});

test('picks the spike within a bucket', () => {
  const rows = Array.from({ length: 100 }, (_, i) => ({ i, page_count: i === 42 ? 10_000 : 100 }));
  assert.ok(lttb(rows, 10).some((r) => r.i === 42));
});

test('rows without page_count count as zero and do not throw', () => {
  const rows = Array.from({ length: 30 }, (_, i) => (i % 2 ? { i } : { i, page_count: i }));
  assert.equal(lttb(rows as { i: number; page_count?: number }[], 5).length, 5);
});
