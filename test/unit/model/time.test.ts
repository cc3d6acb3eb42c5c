import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTime, parseTime } from '../../../src/model/time.js';

test('formatTime trims fractional zeros and omits a zero fraction', () => {
  assert.equal(formatTime(Date.UTC(2026, 2, 1, 10, 0, 0)), '2026-03-01T10:00:00Z');
  assert.equal(formatTime(Date.UTC(2026, 2, 1, 10, 0, 0, 500)), '2026-03-01T10:00:00.5Z');
  assert.equal(formatTime(Date.UTC(2026, 2, 1, 10, 0, 0, 120)), '2026-03-01T10:00:00.12Z');
  assert.equal(formatTime(Date.UTC(2026, 2, 1, 10, 0, 0, 7)), '2026-03-01T10:00:00.007Z');
  assert.equal(formatTime(Date.UTC(2026, 2, 1, 10, 0, 0, 10)), '2026-03-01T10:00:00.01Z');
  assert.equal(formatTime(Date.UTC(2026, 2, 1, 10, 0, 0, 100)), '2026-03-01T10:00:00.1Z');
});

test('parseTime accepts RFC 3339 with Z, offsets and fractions', () => {
  assert.equal(parseTime('2026-03-01T10:00:00Z'), Date.UTC(2026, 2, 1, 10));
  assert.equal(parseTime('2026-03-01T12:00:00+02:00'), Date.UTC(2026, 2, 1, 10));
  assert.equal(parseTime('2026-03-01T05:30:00-04:30'), Date.UTC(2026, 2, 1, 10));
  assert.equal(parseTime('2026-03-01T10:00:00.123456789Z'), Date.UTC(2026, 2, 1, 10, 0, 0, 123));
  assert.equal(parseTime('2028-02-29T00:00:00Z'), Date.UTC(2028, 1, 29));
  assert.equal(parseTime('0050-01-01T00:00:00Z'), new Date('0050-01-01T00:00:00Z').getTime());
});

test('parseTime rejects what RFC 3339 does not allow', () => {
  for (const bad of [
    '2026-03-01 10:00:00Z', '2026-03-01t10:00:00Z', '2026-03-01T10:00:00z', '2026-03-01T10:00:00',
    '2026-03-01T10:00:00+0200', '2026-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-03-01T24:00:00Z',
    '2026-03-01T10:60:00Z', '2026-03-01', '', 'now', '2026-03-01T10:00:00.Z', ' 2026-03-01T10:00:00Z',
  ]) {
    assert.equal(parseTime(bad), null, bad);
  }
});

test('format and parse round-trip', () => {
  for (const ms of [0, 1, 999, Date.UTC(2026, 10, 22, 6, 30, 15, 250)]) {
    assert.equal(parseTime(formatTime(ms)), ms);
  }
});
