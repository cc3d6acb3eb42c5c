// Inherited keys in JSON from outside: `{"constructor":{"entries":{}}}` sent to
// POST /settings replaced Object.entries, and every later POST /settings answered 500 until a
// restart. A real agent in password mode (no local admin), enrolled with the test server peer,
// gets `__proto__`, `constructor` and `prototype` in every position of a valid body of every route
// that accepts JSON (the list is checked against docs/openapi.yaml), in channel frames, in managed
// settings and in backups; each is refused naming the key and where it is, nothing changes, and
// the routes that would show a broken Object (the settings merge, a device update reading absent
// fields) still work afterwards. Frames come from test/kit/server-peer.ts (sendRaw puts any text on the
// socket); PrintMaster's own server (test/kit/printmaster.ts) only sends the frames its code
// builds, so it cannot carry these keys.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importNdjson, startAgent, type Agent, type Res } from '../../kit/agent.js';
import { openapiDocument } from '../../kit/openapi.js';
import { device, metrics, ndjson, nowSeconds, MINUTE } from '../../kit/seed.js';
import { startServerPeer, type ServerPeer } from '../../kit/server-peer.js';

type Json = Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it holds, within a generous bound (the machine may be loaded). */
async function until(what: string, probe: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
const KEYS = ['__proto__', 'constructor', 'prototype'] as const;
// Values a hostile document would hang under the key: what replaced Object.entries, what would
// pollute Object.prototype with fields a route reads (device update), and plain values.
const VALUES = ['{"entries":{}}', '{"location":"polluted","asset_number":"polluted","visible":false}', '{}', 'null', '"x"', '[{"a":1}]'];

const PASSWORD = 'a long enough password';
const SAVED = 'KEYS-SAVED-1';
const OTHER = 'KEYS-OTHER-2';

/** Every object in a value (the root included), with its path as the agent names it. */
function objectPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [];
  const own = Array.isArray(value) ? [] : [path];
  const children = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  return [...own, ...children.flatMap(([k, v]) => objectPaths(v, [...path, k]))];
}

const pathText = (path: (string | number)[]) =>
  path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');

/** `value` as JSON text with `"key": raw` added to the object at `at`, first or last among its keys. */
function withKey(value: unknown, at: (string | number)[], keyText: string, raw: string, first: boolean, here: (string | number)[] = []): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v, i) => withKey(v, at, keyText, raw, first, [...here, i])).join(',')}]`;
  const parts = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${withKey(v, at, keyText, raw, first, [...here, k])}`);
  if (pathText(here) === pathText(at) && here.length === at.length) {
    const added = `${keyText}:${raw}`;
    if (first) parts.unshift(added);
    else parts.push(added);
  }
  return `{${parts.join(',')}}`;
}

interface Variant {
  text: string;
  key: string;
  /** Where the agent must say the key is ('' at the top level). */
  path: string;
}

/** A valid document with each refused key added at each object of it, first and last, with varied values. */
function variants(valid: unknown): Variant[] {
  const out: Variant[] = [];
  let n = 0;
  for (const at of objectPaths(valid)) {
    for (const key of KEYS) {
      for (const first of [true, false]) {
        const raw = VALUES[n++ % VALUES.length];
        out.push({ text: withKey(valid, at, JSON.stringify(key), raw, first), key, path: at.length ? `${pathText(at)}.${key}` : '' });
      }
    }
  }
  // Escaped in the text, the same key once parsed.
  out.push({ text: withKey(valid, [], '"\\u005f_proto__"', '{}', true), key: '__proto__', path: '' });
  return out;
}

/** The refusal names the key, and its path when it is not at the top. */
function assertRefused(r: Res, v: Variant, what: string): void {
  assert.equal(r.status, 400, `${what} ${v.text}: ${r.status} ${r.body}`);
  assert.ok(r.body.includes(`key "${v.key}"`), `${what} ${v.text}: names the key: ${r.body}`);
  if (v.path) assert.ok(r.body.includes(`(at ${v.path})`), `${what} ${v.text}: names ${v.path}: ${r.body}`);
}

// Each JSON-accepting route with a valid body (one a refusal must leave unapplied).
const ROUTES: { path: string; body: Json }[] = [
  {
    path: '/settings',
    body: {
      discovery: { subnet_scan: true, allowed_ranges: ['127.0.0.0/8'] },
      snmp: { communities: ['public', 'other'], v3: [{ user: 'u1', auth_protocol: 'SHA', auth_key: 'authkey-123' }] },
      collection: { interval_minutes: 20 },
    },
  },
  { path: '/settings/subnet_scan', body: { subnet_scan: true } },
  { path: '/devices/save', body: { serial: OTHER } },
  { path: '/devices/delete', body: { serial: SAVED } },
  { path: '/devices/update', body: { serial: SAVED, location: 'changed', asset_number: 'changed', visible: false } },
  { path: '/devices/metrics/collect', body: { serial: SAVED } },
  { path: '/devices/confirm-move', body: { serial: SAVED, ip: '127.0.1.200' } },
  { path: '/devices/confirm-counter', body: { serial: SAVED } },
  { path: '/devices/preview', body: { serial: SAVED } },
  { path: '/api/report', body: { device_serial: SAVED, issue_type: 'other', description: 'a report' } },
  { path: '/api/report/stream', body: { device_serial: SAVED, issue_type: 'other', description: 'a report' } },
  { path: '/api/autoupdate/force', body: { reason: 'a reason' } },
  { path: '/api/alerts/acknowledge', body: { id: 1 } },
  { path: '/api/notifications/test', body: { target: 'ops@example.test' } },
  { path: '/api/v1/auth/login', body: { username: 'admin', password: PASSWORD } },
  { path: '/api/v1/auth/password', body: { current_password: PASSWORD, new_password: 'another long password' } },
  { path: '/api/v1/auth/setup', body: { setup_code: 'AAAA-BBBB-CCCC', username: 'admin', password: PASSWORD } },
  { path: '/api/v1/accounts', body: { username: 'office', password: 'a long passphrase', role: 'viewer' } },
  { path: '/api/v1/accounts/update', body: { username: 'admin', role: 'viewer' } },
  { path: '/api/v1/accounts/delete', body: { username: 'admin' } },
];

describe('inherited keys in JSON from outside', () => {
  let peer: ServerPeer;
  let agent: Agent;
  let cookie = '';
  let settingsBefore: Json;
  const now = nowSeconds();

  const post = (path: string, text: string, type = 'application/json') =>
    agent.request(path, { method: 'POST', headers: { 'Content-Type': type, Accept: 'application/json', ...(cookie ? { Cookie: cookie } : {}) }, body: text });
  const get = (path: string) => agent.request(path, { headers: { Accept: 'application/json', ...(cookie ? { Cookie: cookie } : {}) } });
  /** The settings as GET shows them, without the read-only parts that change on their own. */
  const settingsNow = async (): Promise<Json> => {
    const r = await get('/settings');
    assert.equal(r.status, 200, r.body);
    const s = JSON.parse(r.body) as Json & { server: Json };
    delete s.storage;
    delete s.server.link;
    return s;
  };
  /** The device record (undefined when there is none) and its latest reading. */
  const deviceNow = async (serial: string): Promise<Json | undefined> => {
    const r = await get(`/api/devices/profile?serial=${encodeURIComponent(serial)}`);
    if (r.status === 404) return undefined;
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as Json;
  };
  const signIn = async () => {
    cookie = '';
    const r = await post('/api/v1/auth/login', JSON.stringify({ username: 'admin', password: PASSWORD }));
    assert.equal(r.status, 200, r.body);
    cookie = (r.headers['set-cookie'] ?? []).find((c) => c.startsWith('pm_agent_session='))!.split(';')[0];
  };

  before(async () => {
    peer = await startServerPeer();
    agent = await startAgent({
      authMode: 'password',
      allowLocalAdmin: false,
      serverUrl: peer.url,
      server: { enrollment_token: peer.enrollmentToken, ca_file: peer.caFile },
      seed: ndjson([
        device(SAVED, { ip: '127.0.1.71', is_saved: true, location: 'shelf', asset_number: 'A-1' }),
        device(OTHER, { ip: '127.0.1.72' }),
        metrics(SAVED, 'raw', now - 10 * MINUTE, { page_count: 100, toner_levels: { black: 80 } }),
      ]),
    });
  });
  after(async () => {
    await agent?.stop();
    await peer?.stop();
  });

  test('the routes tried are every route docs/openapi.yaml gives a JSON request body', () => {
    const documented: string[] = [];
    for (const [path, item] of Object.entries(openapiDocument().paths)) {
      for (const op of Object.values(item) as { requestBody?: { content?: Json } }[]) {
        if (op?.requestBody?.content?.['application/json']) documented.push(path);
      }
    }
    assert.deepEqual([...new Set(documented)].sort(), ROUTES.map((r) => r.path).sort());
  });

  test('onboarding: each refused before the setup code is tried; the right code then works', async () => {
    const setup = ROUTES.find((r) => r.path === '/api/v1/auth/setup')!;
    for (const v of variants(setup.body)) assertRefused(await post(setup.path, v.text), v, setup.path);
    const code = readFileSync(join(agent.dataDir, 'setup-code'), 'utf8').trim();
    const r = await post(setup.path, JSON.stringify({ ...setup.body, setup_code: code }));
    assert.equal(r.status, 201, r.body);
    await signIn();
  });

  test('every JSON route: 400 naming the key at each position, and nothing changes', async () => {
    settingsBefore = await settingsNow();
    const saved = await deviceNow(SAVED);
    let tried = 0;
    for (const route of ROUTES.filter((r) => r.path !== '/api/v1/auth/setup')) {
      for (const v of variants(route.body)) {
        assertRefused(await post(route.path, v.text), v, route.path);
        tried++;
      }
    }
    assert.ok(tried >= 80, `${tried} refused bodies`);
    assert.deepEqual(await settingsNow(), settingsBefore, 'no setting changed');
    assert.deepEqual(await deviceNow(SAVED), saved, 'the saved device is unchanged (neither deleted nor updated)');
    assert.equal(((await deviceNow(OTHER))?.device as Json).is_saved, false, 'the other device was not saved');
    await signIn(); // the password was not changed
  });

  test('afterwards Object is intact: the settings merge and a device update work as before', async () => {
    // A device update with no fields reads each field of the body: an Object.prototype that had
    // gained `location` would set it here.
    const same = await post('/devices/update', JSON.stringify({ serial: SAVED }));
    assert.equal(same.status, 200, same.body);
    const d = JSON.parse(same.body) as Json;
    assert.equal(d.location, 'shelf');
    assert.equal(d.asset_number, 'A-1');
    assert.equal(d.visible, true);
    const r = await post('/settings', JSON.stringify({ collection: { interval_minutes: 21 }, snmp: { communities: ['public', 'second'] } }));
    assert.equal(r.status, 200, r.body);
    const s = await settingsNow();
    assert.deepEqual(s, { ...settingsBefore, collection: { interval_minutes: 21 }, snmp: { ...(settingsBefore.snmp as Json), communities: ['public', 'second'] } });
    const again = await post('/settings', JSON.stringify({ collection: { interval_minutes: 22 } }));
    assert.equal(again.status, 200, again.body);
    settingsBefore = await settingsNow();
    assert.deepEqual(settingsBefore.collection, { interval_minutes: 22 });
  });

  test('other inherited names pick no rule: an unknown setting, a default period', async () => {
    for (const [text, message] of [
      ['{"toString":{"call":1}}', 'unknown setting toString'],
      ['{"hasOwnProperty":{"name":1}}', 'unknown setting hasOwnProperty'],
      ['{"valueOf":{"bind":1}}', 'unknown setting valueOf'],
      ['{"discovery":{"toString":true}}', 'unknown setting discovery.toString'],
      ['{"collection":{"isPrototypeOf":1}}', 'unknown setting collection.isPrototypeOf'],
      // The plain words (Settings-Problem) look names up too: an entry's key from outside.
      ['{"snmp":{"v3":[{"user":"u1","valueof":1}]}}', 'unknown setting snmp.v3[0].valueof'],
    ]) {
      const r = await post('/settings', text);
      assert.equal(r.status, 400, `${text}: ${r.body}`);
      assert.equal(r.body, `${message}\n`);
      // Never an Object's own function turned into words, whatever the name.
      const words = r.headers['settings-problem'];
      assert.ok(words === undefined || !/function|native code|\[object/.test(decodeURIComponent(String(words))), `${text}: ${words}`);
      if (words !== undefined) assert.equal(decodeURIComponent(String(words)), `${String(r.headers['settings-field'])} is not a setting this box knows`);
    }
    assert.deepEqual(await settingsNow(), settingsBefore);
    const week = await get(`/api/devices/metrics/history?serial=${SAVED}&period=no-such-period`);
    assert.equal(week.status, 200, week.body);
    for (const period of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const r = await get(`/api/devices/metrics/history?serial=${SAVED}&period=${period}`);
      assert.equal(r.status, 200, r.body);
      assert.equal(r.body, week.body, `period=${period} is an unknown period (the default week)`);
    }
  });

  test('restore and import: refused naming the line and the key; nothing restored', async () => {
    const before = await deviceNow(SAVED);
    const dev = device('KEYS-RESTORED', { ip: '127.0.1.73', is_saved: true });
    const met = metrics('KEYS-RESTORED', 'raw', now - MINUTE, { page_count: 7, toner_levels: { black: 50 } });
    const lines = [dev, met];
    let tried = 0;
    for (const [index, line] of lines.entries()) {
      for (const v of variants(line)) {
        const text = ndjson(lines)
          .split('\n')
          .map((l, i) => (i === index + 1 ? v.text : l))
          .join('\n');
        const lineNo = index + 2; // after the header
        const r = await post('/restore', text, 'application/x-ndjson');
        assertRefused(r, v, `restore line ${lineNo}`);
        assert.ok(r.body.startsWith(`line ${lineNo}: key "${v.key}"`), r.body);
        assert.ok(r.body.endsWith('; nothing was restored\n'), r.body);
        tried++;
      }
    }
    assert.ok(tried >= 18, `${tried} refused backups`);
    // The command line's import reads backups with the same function.
    const bad = ndjson([dev]).replace('"kind":"device"', '"kind":"device","prototype":{"x":1}');
    const cli = await importNdjson(agent.configPath, bad);
    assert.notEqual(cli.code, 0);
    assert.match(cli.stderr, /line 2: key "prototype" is not accepted/);
    assert.equal(await deviceNow('KEYS-RESTORED'), undefined, 'nothing restored');
    assert.deepEqual(await deviceNow(SAVED), before);
    // A clean backup still restores.
    const ok = await post('/restore', ndjson([...lines]), 'application/x-ndjson');
    assert.equal(ok.status, 200, ok.body);
    assert.equal(((await deviceNow('KEYS-RESTORED'))?.device as Json).is_saved, true);
  });

  test('channel frames: refused as malformed (logged naming the key: the reference server knows no error frame), their request never run', async () => {
    await peer.waitForAgentSocket(30_000);
    const settingsBody = Buffer.from('{"collection":{"interval_minutes":44}}').toString('base64');
    const frame = {
      type: 'proxy_request',
      data: { request_id: 'r-1', url: 'http://localhost/settings', method: 'POST', headers: { 'content-type': 'application/json' }, body: settingsBody },
      timestamp: new Date().toISOString(),
    };
    // pino writes the reason as a JSON string: its quotes come escaped.
    const logged = (from: number, key: string, path?: string) =>
      until(`the refusal of "${key}" logged`, async () => {
        const text = agent.stdout().slice(from);
        return text.includes('frame refused: ') && text.includes(`key \\"${key}\\"`) && (!path || text.includes(`(at ${path})`));
      });
    const since = peer.frames().length;
    let tried = 0;
    for (const v of variants(frame)) {
      const from = agent.stdout().length;
      peer.sendRaw(v.text);
      await logged(from, v.key, v.path);
      tried++;
    }
    assert.ok(tried >= 18, `${tried} refused frames`);
    // A command frame likewise: refused, never run.
    const from = agent.stdout().length;
    peer.sendRaw('{"type":"command","data":{"command":"discover","command_id":"c-1","constructor":{}}}');
    await logged(from, 'constructor');
    assert.ok(!agent.stdout().slice(from).includes('server command done'), 'the command never ran');
    assert.deepEqual(peer.frames().slice(since).filter((f) => f.type === 'proxy_response' || f.type === 'error'), [], 'no request ran, no frame the server does not know');
    assert.deepEqual(await settingsNow(), settingsBefore, 'no refused frame changed a setting');

    // A well-formed frame whose proxied body carries the key: the route's own 400.
    const refused = await peer.proxy({ url: 'http://localhost/settings', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"collection":{"__proto__":{"x":1}}}' });
    assert.equal(refused.status, 400, refused.text());
    assert.match(refused.text(), /key "__proto__" \(at collection\.__proto__\)/);
    // And the channel still carries requests that are fine.
    const fine = await peer.proxy({ url: 'http://localhost/settings', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"collection":{"interval_minutes":23}}' });
    assert.equal(fine.status, 200, fine.text());
    settingsBefore = await settingsNow();
    assert.deepEqual(settingsBefore.collection, { interval_minutes: 23 });
  });

  test('managed settings with such a key: refused whole and reported; the next clean ones apply', async () => {
    // PrintMaster's schema; JSON.parse keeps "__proto__" and "constructor" as own keys, so the peer sends them as written.
    const v7 = '7'.repeat(64);
    peer.setManagedSettings(v7, JSON.parse('{"settings":{"snmp":{"timeout_ms":3600,"constructor":{"entries":{}}}},"managed_sections":["snmp"]}') as Json);
    await agent.restart(); // a start sends a heartbeat at once
    const refused = await peer.waitFor(
      () => peer.httpHeartbeats().find((h) => (h.body.settings_error as Json | undefined)?.version === v7),
      30_000,
      'the refusal reported',
    );
    assert.match(String((refused.body.settings_error as Json).error), /key "constructor" \(at settings\.snmp\.constructor\)/);
    await signIn(); // sessions do not outlive a restart here
    assert.deepEqual(await settingsNow(), settingsBefore, 'nothing of the refused snapshot applied');

    peer.setManagedSettings('8'.repeat(64), { settings: { snmp: { timeout_ms: 3700 } }, managed_sections: ['snmp'] });
    await agent.restart();
    await signIn();
    await until('the clean managed settings applied', async () => ((await settingsNow()).discovery as Json).snmp_timeout_ms === 3700);
  });
});
