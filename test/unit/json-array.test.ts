// jsonArrayText (api/respond.ts) builds a JSON array item by item: whatever the number of items and
// their text, it is JSON.stringify's array and a newline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonArrayText } from '../../src/api/respond.js';

const same = (items: unknown[]) =>
  assert.equal(jsonArrayText(items, (x) => JSON.stringify(x)), JSON.stringify(items) + '\n');

test('no item, one item', () => {
  same([]);
  same([{ a: 1 }]);
});

test('many items, with multi-byte characters', () => {
  const items = Array.from({ length: 3000 }, (_, i) => ({ serial: `S${i}`, location: 'Büro 2. Stock, Raum ☃', emoji: '🖨️', n: i }));
  same(items);
});

test('long items, and an item that is not an object', () => {
  same(['x'.repeat(40_000), { y: 'é'.repeat(20_000) }, 3]);
});
