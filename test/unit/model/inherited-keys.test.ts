// The shared check for __proto__, constructor and prototype keys (model/inherited-keys.ts) and the
// own-property lookups of the rule tables it protects. The real agent's routes,
// channel, managed settings and restore are tried in test/agent/api/inherited-keys.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findInheritedKey, INHERITED_KEYS, inheritedKeyProblem, ownValue, storableKey, withStorableKeys, type NameKind } from '../../../src/model/inherited-keys.js';
import { defaultSettings, knownSettingsOnly, mergeSettings, SettingsError } from '../../../src/settings/settings.js';
import { parseProvision, ProvisionError } from '../../../src/provision/file.js';
import { ConfigError, parseConfig } from '../../../src/config/config.js';

const base = () => defaultSettings({ subnet_scan: false, auto_discover: false, allowed_ranges: [] });

test('finds each refused key anywhere, the outermost first, with its path', () => {
  const cases: [string, string | undefined, string | undefined][] = [
    ['{"a":1,"b":[1,"x",{"c":null}]}', undefined, undefined],
    ['{"constructor":{"entries":{}}}', 'constructor', 'constructor'],
    ['{"a":{"b":[1,{"c":2},{"__proto__":1}]}}', '__proto__', 'a.b[2].__proto__'],
    ['[[{"prototype":1}]]', 'prototype', '[0][0].prototype'],
    ['{"x":{"\\u005f_proto__":{}}}', '__proto__', 'x.__proto__'],
    ['{"a":{"prototype":1},"constructor":2}', 'constructor', 'constructor'],
    ['{"a":{"b":{"prototype":1}},"c":{"__proto__":2}}', 'prototype', 'a.b.prototype'],
    ['{"a":[{"b":{}},{"b":{"constructor":0}}]}', 'constructor', 'a[1].b.constructor'],
    // Only keys count: the words as values are data.
    ['{"a":"__proto__","b":["constructor"]}', undefined, undefined],
    ['"constructor"', undefined, undefined],
  ];
  for (const [text, key, path] of cases) {
    const found = findInheritedKey(JSON.parse(text));
    assert.deepEqual(found, key === undefined ? undefined : { key, path }, text);
  }
  assert.equal(
    inheritedKeyProblem(JSON.parse('{"a":{"__proto__":{}}}')),
    'key "__proto__" (at a.__proto__) is not accepted: __proto__, constructor and prototype are refused anywhere in a document',
  );
});

test('a document nested 30,000 deep is walked without a stack overflow', () => {
  const deep = JSON.parse('['.repeat(30_000) + '{"prototype":1}' + ']'.repeat(30_000));
  assert.equal(findInheritedKey(deep)?.key, 'prototype');
  assert.equal(findInheritedKey(JSON.parse('{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000))), undefined);
});

test('ownValue: an inherited name picks nothing', () => {
  const table: Record<string, number> = { day: 1 };
  assert.equal(ownValue(table, 'day'), 1);
  for (const k of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) assert.equal(ownValue(table, k), undefined, k);
});

test('the renaming and the refusal agree: every key the import refuses is renamed to one it accepts', () => {
  const kinds: NameKind[] = ['supply', 'tray', 'txt', 'key'];
  assert.ok(INHERITED_KEYS.size >= 3);
  for (const key of INHERITED_KEYS) {
    for (const kind of kinds) {
      const renamed = storableKey(key, kind);
      assert.notEqual(renamed, key, `${key} is renamed`);
      assert.equal(renamed, `${kind}_${key}`);
      // Stored as the box stores a reading, the renamed key passes the import's check.
      const doc = JSON.parse(`{"toner_levels":{${JSON.stringify(renamed)}:5}}`);
      assert.equal(findInheritedKey(doc), undefined, `${renamed} accepted`);
      assert.equal(inheritedKeyProblem(doc), undefined);
      assert.equal(storableKey(renamed, kind), renamed, 'renaming twice changes nothing');
    }
  }
  // Everything else is kept as the printer gave it.
  for (const name of ['black', 'toString', 'hasOwnProperty', 'valueOf', 'supply_constructor', '']) assert.equal(storableKey(name, 'supply'), name);
});

test('withStorableKeys: a stored document from before the renaming, renamed by the field it is under', () => {
  const stored = JSON.parse(
    '{"kind":"device","printer_info":{"toner_levels":{"constructor":5,"prototype":40,"__proto__":60,"black":90},"paper_tray_status":{"constructor":"ok"},' +
      '"meters":{"prototype":1}},"raw_data":{"deep":[{"x":{"__proto__":{"y":1}}}]}}',
  );
  const before = JSON.stringify(stored);
  const out = withStorableKeys(stored);
  assert.equal(JSON.stringify(stored), before, 'the original is left as it was');
  assert.equal(findInheritedKey(out), undefined);
  assert.deepEqual(JSON.parse(JSON.stringify(out)), {
    kind: 'device',
    printer_info: {
      toner_levels: { supply_constructor: 5, supply_prototype: 40, supply___proto__: 60, black: 90 },
      paper_tray_status: { tray_constructor: 'ok' },
      meters: { key_prototype: 1 },
    },
    raw_data: { deep: [{ x: { key___proto__: { y: 1 } } }] },
  });
  const clean = { a: { b: [1, 2] } };
  assert.equal(withStorableKeys(clean), clean, 'a clean document is not copied');
  // A renamed key meeting one of its name: the first in order is kept.
  assert.deepEqual(withStorableKeys(JSON.parse('{"toner_levels":{"supply_constructor":1,"constructor":2}}')), { toner_levels: { supply_constructor: 1 } });
});

test('settings: refused keys anywhere and inherited names are errors that change nothing', () => {
  const s = base();
  const before = structuredClone(s);
  for (const [text, message] of [
    ['{"constructor":{"entries":{}}}', /key "constructor" is not accepted/],
    ['{"__proto__":{"constructor":{"x":1}}}', /key "__proto__" is not accepted/],
    ['{"snmp":{"v3":[{"user":"u","prototype":{}}]}}', /key "prototype" \(at snmp\.v3\[0\]\.prototype\)/],
    ['{"toString":{"call":1}}', /^unknown setting toString$/],
    ['{"discovery":{"hasOwnProperty":true}}', /^unknown setting discovery\.hasOwnProperty$/],
  ] as const) {
    assert.throws(() => mergeSettings(s, JSON.parse(text)), (e: Error) => e instanceof SettingsError && message.test(e.message), text);
  }
  assert.deepEqual(s, before);
  assert.equal(typeof Object.entries, 'function');
  assert.equal(Object.prototype.toString.call([]), '[object Array]');
  // Stored settings read back: an inherited name is an unknown key, not a section.
  assert.deepEqual(knownSettingsOnly(JSON.parse('{"toString":{},"collection":{"valueOf":1,"interval_minutes":5}}')).unknown, ['toString', 'collection.valueOf']);
});

test('provisioning and the config file: an inherited name is an unknown section, not a rule', () => {
  assert.throws(() => parseProvision('[constructor]\nx = 1\n', base()), (e: Error) => e instanceof ProvisionError && /unknown section or key constructor/.test(e.message));
  assert.throws(() => parseProvision('[snmp]\ncommunities = ["a"]\n[toString]\n', base()), ProvisionError);
  assert.throws(() => parseConfig('[constructor]\nentries = 1\n', '/etc/printbox'), (e: Error) => e instanceof ConfigError && /unknown config key constructor/.test(e.message));
  assert.throws(() => parseConfig('[web]\nhasOwnProperty = 1\n', '/etc/printbox'), (e: Error) => e instanceof ConfigError && /unknown config key web\.hasOwnProperty/.test(e.message));
});
