import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSettings, mergeSettings, publicSettings, SettingsError } from '../../../src/settings/settings.js';
import { SettingsStore } from '../../../src/settings/store.js';
import { openDatabase } from '../../../src/store/db.js';

const base = () => defaultSettings({ subnet_scan: false, auto_discover: false, allowed_ranges: [] });

test('built-in defaults never scan unasked', () => {
  const s = base();
  assert.equal(s.discovery.subnet_scan, false);
  assert.equal(s.discovery.auto_discover, false);
  assert.equal(s.discovery.manual_ranges, false);
});

test('a partial update changes only what it names', () => {
  const s = mergeSettings(base(), { discovery: { manual_ranges: true, ranges_text: '127.0.1.1-20\n# comment\n127.0.2.0/30' } });
  assert.equal(s.discovery.manual_ranges, true);
  assert.equal(s.discovery.snmp_timeout_ms, base().discovery.snmp_timeout_ms);
  assert.deepEqual(s.snmp, base().snmp);
});

test('bad values name the field and leave the input untouched', () => {
  const current = base();
  const before = structuredClone(current);
  const cases: [unknown, RegExp][] = [
    [{ discovery: { snmp_timeout_ms: -5 } }, /discovery\.snmp_timeout_ms/],
    [{ discovery: { discover_concurrency: 1.5 } }, /discovery\.discover_concurrency/],
    [{ discovery: { subnet_scan: 'yes' } }, /discovery\.subnet_scan/],
    [{ discovery: { ranges_text: '10.0.0.0/8' } }, /discovery\.ranges_text/],
    [{ discovery: { allowed_ranges: ['300.1.1.1/8'] } }, /discovery\.allowed_ranges/],
    [{ discovery: { nope: 1 } }, /unknown setting discovery\.nope/],
    [{ other: {} }, /unknown setting other/],
    [{ snmp: { communities: [] } }, /snmp\.communities/],
    [{ snmp: { v3: [{ user: 'u', auth_protocol: 'SHA', auth_key: 'short' }] } }, /snmp\.v3\[0\]\.auth_key/],
    [{ snmp: { v3: [{ user: 'u', priv_protocol: 'AES', priv_key: 'longenough' }] } }, /priv_protocol needs an auth_protocol/],
    [{ collection: { interval_minutes: 0 } }, /collection\.interval_minutes/],
    [[], /JSON object/],
  ];
  for (const [patch, re] of cases) {
    assert.throws(() => mergeSettings(current, patch), (e: unknown) => e instanceof SettingsError && re.test((e as Error).message), JSON.stringify(patch));
  }
  assert.deepEqual(current, before);
});

test('v3 keys are hidden from GET and kept when a POST sends them empty', () => {
  const withUser = mergeSettings(base(), {
    snmp: { v3: [{ user: 'ops', auth_protocol: 'SHA', auth_key: 'authsecret1', priv_protocol: 'AES', priv_key: 'privsecret1' }] },
  });
  const shown = publicSettings(withUser);
  assert.equal(shown.snmp.v3[0].auth_key, '');
  assert.equal(shown.snmp.v3[0].priv_key, '');
  const again = mergeSettings(withUser, { snmp: { v3: shown.snmp.v3 } });
  assert.equal(again.snmp.v3[0].auth_key, 'authsecret1');
  assert.equal(again.snmp.v3[0].priv_key, 'privsecret1');
});

test('settings stored by a newer agent: an older one (after an update rolled back) keeps what it knows', () => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-settings-'));
  try {
    const db = openDatabase(join(dir, 'printbox.db'));
    const newer = { ...mergeSettings(base(), { server: { url: 'https://central.example/' }, collection: { interval_minutes: 7 } }), lights: { colour: 'green' } };
    (newer.snmp as Record<string, unknown>).retries = 3;
    db.prepare("INSERT INTO settings (key, value) VALUES ('settings', ?)").run(JSON.stringify(newer));
    const said: string[] = [];
    const store = new SettingsStore(db, { subnet_scan: false, auto_discover: false, allowed_ranges: [] }, (m) => said.push(m));
    assert.equal(store.get().server.url, 'https://central.example/');
    assert.equal(store.get().collection.interval_minutes, 7);
    assert.deepEqual(said, ['stored settings this agent does not know, ignored: snmp.retries, lights']);
    assert.equal('lights' in store.get(), false);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
