// The declared-field serializer (docs/decisions/0003-json-bodies.md): optional fields are omitted
// when empty or zero, required ones always present, in the declared order. serialize compiles each
// field list into a function once (model/serialize.ts); these cases pin what that function must do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serialize, type Fields } from '../../../src/model/serialize.js';

const FIELDS: Fields = [
  { name: 'id', kind: 'int', required: true },
  { name: 'when', kind: 'time', required: true, from: 'ts' },
  { name: 'name', kind: 'string' },
  { name: 'count', kind: 'int' },
  { name: 'on', kind: 'bool' },
  { name: 'list', kind: 'array' },
  { name: 'obj', kind: 'object' },
  { name: 'seen', kind: 'time' },
  { name: 'anything', kind: 'any' },
  { name: 'req_string', kind: 'string', required: true },
  { name: 'req_bool', kind: 'bool', required: true },
  { name: 'req_list', kind: 'array', required: true },
  { name: 'req_obj', kind: 'object', required: true },
  { name: 'req_any', kind: 'any', required: true },
];

test('optional fields: empty or zero omitted, others kept as they are, times as RFC 3339', () => {
  const empty = { ts: 0, name: '', count: 0, on: false, list: [], obj: {}, seen: 0, anything: 0 };
  assert.deepEqual(serialize(FIELDS, empty), {
    id: 0, when: '1970-01-01T00:00:00Z', req_string: '', req_bool: false, req_list: [], req_obj: {}, req_any: null,
  });
  const full = {
    id: 7, ts: Date.UTC(2026, 10, 23, 4, 5, 6, 500), name: 'x', count: 3, on: true, list: [1], obj: { a: 1 },
    seen: Date.UTC(2026, 0, 1), anything: 'y', req_string: 's', req_bool: true, req_list: [2], req_obj: { b: 2 }, req_any: 5,
    not_declared: 'dropped', when: 'ignored: read from ts',
  };
  const out = serialize(FIELDS, full);
  assert.deepEqual(out, {
    id: 7, when: '2026-11-23T04:05:06.5Z', name: 'x', count: 3, on: true, list: [1], obj: { a: 1 },
    seen: '2026-01-01T00:00:00Z', anything: 'y', req_string: 's', req_bool: true, req_list: [2], req_obj: { b: 2 }, req_any: 5,
  });
  assert.deepEqual(Object.keys(out), FIELDS.map((f) => f.name), 'the declared order');
});

test('null and undefined are empty; a required array or object is a fresh one each time', () => {
  const a = serialize(FIELDS, { id: null, name: null, count: undefined });
  const b = serialize(FIELDS, {});
  assert.deepEqual(a, b);
  assert.equal(a.id, 0);
  assert.notEqual(a.req_list, b.req_list);
  assert.notEqual(a.req_obj, b.req_obj);
});

test('a value of another type than declared is passed through, as JSON would carry it', () => {
  assert.equal(serialize(FIELDS, { list: 'not an array' }).list, 'not an array');
  assert.equal(serialize(FIELDS, { count: '0' }).count, '0');
});
