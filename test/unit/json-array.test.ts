// jsonArrayChunks (api/respond.ts) builds a JSON array item by item, in UTF-8 chunks cut between
// items: whatever the number of items, their text and the chunk size, the chunks joined are
// JSON.stringify's array and a newline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonArrayChunks } from '../../src/api/respond.js';

const same = (items: unknown[], chunkChars?: number) => {
  const chunks = jsonArrayChunks(items, (x) => JSON.stringify(x), chunkChars);
  assert.equal(Buffer.concat(chunks).toString('utf8'), JSON.stringify(items) + '\n');
  return chunks;
};

test('no item, one item', () => {
  assert.equal(same([]).length, 1);
  same([{ a: 1 }]);
});

test('many items, with multi-byte characters, cut into chunks between items', () => {
  const items = Array.from({ length: 3000 }, (_, i) => ({ serial: `S${i}`, location: 'Büro 2. Stock, Raum ☃', emoji: '🖨️', n: i }));
  const chunks = same(items);
  assert.ok(chunks.length > 1, 'a long list is more than one chunk');
  // Every chunk is whole UTF-8: none ends inside a character.
  for (const c of chunks) assert.equal(Buffer.from(c.toString('utf8')).length, c.length);
  same(items, 1);
});

test('long items, and an item that is not an object', () => {
  same(['x'.repeat(40_000), { y: 'é'.repeat(20_000) }, 3]);
  same(['x'.repeat(40_000), { y: 'é'.repeat(20_000) }, 3], 100);
});
