// BodyChunks (api/body-chunks.ts) builds a body from text and bytes in chunks: whatever the pieces
// and the chunk size, the chunks joined are the pieces' UTF-8 in order, and no piece is cut.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BodyChunks } from '../../../src/api/body-chunks.js';

type Piece = string | Buffer;

function build(pieces: Piece[], chunkBytes?: number): Buffer[] {
  const body = new BodyChunks(chunkBytes);
  for (const p of pieces) {
    if (typeof p === 'string') body.text(p);
    else body.bytes(p);
  }
  const chunks = body.done();
  const expected = Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
  assert.deepEqual(Buffer.concat(chunks), expected);
  return chunks;
}

test('nothing, and one piece', () => {
  assert.equal(build([]).length, 0);
  assert.equal(build(['[]\n']).length, 1);
});

test('many text and byte pieces with multi-byte characters: more than one chunk, none ending inside a character', () => {
  const pieces: Piece[] = [];
  for (let i = 0; i < 3000; i++) pieces.push(`{"serial":"S${i}","location":`, Buffer.from('"Büro 2. Stock, Raum ☃ 🖨️"'), '}');
  const chunks = build(pieces);
  assert.ok(chunks.length > 1, 'a long body is more than one chunk');
  for (const c of chunks) assert.equal(Buffer.from(c.toString('utf8')).length, c.length);
  build(pieces, 1);
});

test('a part of a piece of bytes', () => {
  const body = new BodyChunks(4);
  const b = Buffer.from('0123456789');
  body.bytes(b, 0, 3);
  body.text('-');
  body.bytes(b, 3, 7);
  body.bytes(b, 7);
  assert.equal(Buffer.concat(body.done()).toString(), '012-3456789');
});

test('pieces longer than a chunk', () => {
  build(['x'.repeat(100_000), Buffer.from('é'.repeat(40_000)), '🖨️'.repeat(30_000), ']']);
  build(['x'.repeat(100_000), Buffer.from('é'.repeat(40_000)), '🖨️'.repeat(30_000), ']'], 100);
});
