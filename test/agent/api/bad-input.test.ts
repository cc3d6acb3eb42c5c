// Bad input never crashes the agent or corrupts data: malformed query
// strings, invalid UTF-8, huge or negative numbers, very long serials, unknown methods, huge headers,
// garbage on the wire. Every failure is a clear status and message; the agent answers afterwards.
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { expectJson, expectTextError, describe as show, startAgent, type Agent, type Res } from '../../kit/agent.js';
import { HOUR, device, metrics, ndjson, nowSeconds } from '../../kit/seed.js';

const NOW = nowSeconds();
const SEED = ndjson([
  device('BAD-1', '10.5.0.1', NOW, { is_saved: true }),
  device('BAD-2', '10.5.0.2', NOW),
  device('ÜNÏ-1', '10.5.0.3', NOW),
  metrics('BAD-1', 'raw', NOW - HOUR, { page_count: 10 }),
  metrics('ÜNÏ-1', 'raw', NOW - HOUR, { page_count: 11 }),
]);
let agent: Agent;
let baseline = { list: '', discovered: '' };

before(async () => {
  agent = await startAgent({ seed: SEED });
  baseline = { list: (await agent.get('/devices/list')).body, discovered: (await agent.get('/devices/discovered')).body };
});
after(async () => {
  await agent?.stop();
});

/** A failure from the API: 4xx, plain text, message + newline. */
function expectClearError(r: Res, allowed: number[]) {
  assert.ok(allowed.includes(r.status), `status ${r.status} not in ${allowed}: ${show(r)}`);
  if (r.status === 414 || r.status === 431) return; // transport-level answers (status line is the message)
  assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8', show(r));
  assert.ok(r.body.length > 1 && r.body.endsWith('\n'), show(r));
}
async function stillHealthy() {
  assert.ok(agent.alive(), `agent died; stderr:\n${agent.stderr()}`);
  expectJson(await agent.get('/api/version'));
  assert.equal((await agent.get('/devices/list')).body, baseline.list, 'saved devices unchanged');
}

function raw(data: string | Buffer, useTls = true): Promise<string> {
  return new Promise((res) => {
    const chunks: Buffer[] = [];
    const s = useTls
      ? tls.connect({ host: '127.0.0.1', port: agent.httpsPort, rejectUnauthorized: false }, () => s.write(data))
      : net.connect({ host: '127.0.0.1', port: agent.httpsPort }, () => s.write(data));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.setTimeout(5000, () => s.destroy());
    const done = () => res(Buffer.concat(chunks).toString('latin1'));
    s.on('close', done);
    s.on('error', () => undefined);
  });
}

describe('malformed query strings and encodings', () => {
  for (const q of ['serial=%zz', 'serial=%', 'serial=%E0%A4%A', 'serial=%FF%FE', 'serial=%C0%AF', 'serial=%ED%A0%80', 'serial=BAD-1%', '%zz=1&serial=%zz']) {
    test(`profile?${q}`, async () => {
      expectClearError(await agent.get(`/api/devices/profile?${q}`), [400, 404]);
      expectClearError(await agent.get(`/api/devices/metrics/latest?${q}`), [400, 404]);
      expectClearError(await agent.get(`/api/devices/metrics/bounds?${q}`), [400, 404]);
      const h = await agent.get(`/api/devices/metrics/history?${q}`);
      if (h.status === 200) assert.equal(h.body, 'null\n');
      else expectClearError(h, [400]);
      await stillHealthy();
    });
  }
  test('malformed encodings elsewhere in the query of list operations', async () => {
    for (const q of ['minutes=%zz', 'include_known=%FF', '%%%', 'a=%E0%A4%A&minutes=5']) {
      const r = await agent.get(`/devices/discovered?${q}`);
      if (r.status === 200) assert.ok(Array.isArray(JSON.parse(r.body)), show(r));
      else expectClearError(r, [400]);
      expectJson(await agent.get(`/devices/list?${q}`));
    }
    await stillHealthy();
  });
  test('a malformed path', async () => {
    const r = await agent.get('/api/devices/%zz');
    assert.ok(r.status >= 400 && r.status < 500, show(r));
    // A route parameter that does not decode: tinyhttp answers through the agent's res.sendStatus.
    expectTextError(await agent.get('/ui/%E0%A4%A'), 400, 'bad request');
    await stillHealthy();
  });
  test('unusual but valid serials are looked up exactly', async () => {
    expectJson(await agent.get('/api/devices/profile?serial=%C3%9CN%C3%8F-1'));
    for (const s of ['%00', 'BAD-1%00', '%0A', 'BAD-1%0D%0A', '%E2%80%8B', 'BAD-1;DROP%20TABLE%20devices', "'%20OR%201=1--", '%25', '*']) {
      expectTextError(await agent.get(`/api/devices/profile?serial=${s}`), 404, 'not found');
      expectTextError(await agent.get(`/api/devices/metrics/latest?serial=${s}`), 404, 'no metrics found');
      assert.equal((await agent.get(`/api/devices/metrics/history?serial=${s}`)).body, 'null\n');
    }
    await stillHealthy();
  });
  test('a repeated parameter does not fail', async () => {
    const r = await agent.get('/api/devices/profile?serial=BAD-1&serial=NOPE');
    assert.ok(r.status === 200 || r.status === 404, show(r));
    await stillHealthy();
  });
});

describe('huge and negative numbers', () => {
  for (const v of ['99999999999999999999999', '-99999999999999999999999', '1e400', '9007199254740993', '-1', '0x10', 'NaN', 'Infinity', '-Infinity']) {
    test(`minutes=${v}`, async () => {
      const r = await agent.get(`/devices/discovered?minutes=${v}`);
      const list = expectJson(r) as { ip: string }[];
      assert.deepEqual(list.map((p) => p.ip).sort(), ['10.5.0.2', '10.5.0.3'], `minutes=${v}`);
    });
    test(`maxPoints=${v}`, async () => {
      const r = await agent.get(`/api/devices/metrics/history?serial=BAD-1&maxPoints=${v}`);
      const rows = expectJson(r) as unknown[];
      assert.equal(rows.length, 1);
    });
  }
  test('extreme but valid RFC 3339 bounds', async () => {
    const r = await agent.get('/api/devices/metrics/history?serial=BAD-1&since=0000-01-01T00:00:00Z&until=9999-12-31T23:59:59.999999999Z');
    assert.equal((expectJson(r) as unknown[]).length, 1);
    await stillHealthy();
  });
  for (const b of ['10000-01-01T00:00:00Z', '2026-03-01T10:00:00+99:99', '2026-03-01T10:00:00+24:00', '2026-03-01T10:00:00.1234567890123456789012345Z9', '9'.repeat(5000)]) {
    test(`since=${b.slice(0, 40)} is a 400`, async () => {
      expectTextError(await agent.get(`/api/devices/metrics/history?serial=BAD-1&since=${encodeURIComponent(b)}&until=2026-03-01T10:00:00Z`), 400,
        'invalid since parameter (use RFC3339 format)');
    });
  }
});

describe('very long input', () => {
  test('a 10 KB serial is just not found', async () => {
    const s = 'S'.repeat(10_000);
    expectTextError(await agent.get(`/api/devices/profile?serial=${s}`), 404, 'not found');
    expectTextError(await agent.get(`/api/devices/metrics/bounds?serial=${s}`), 404, 'no metrics found');
    assert.equal((await agent.get(`/api/devices/metrics/history?serial=${s}`)).body, 'null\n');
    await stillHealthy();
  });
  test('a 100 KB serial gets a clear status', async () => {
    const s = 'S'.repeat(100_000);
    for (const p of ['/api/devices/profile', '/api/devices/metrics/latest', '/api/devices/metrics/history', '/api/devices/metrics/bounds']) {
      const r = await agent.get(`${p}?serial=${s}`);
      if (r.status === 200) assert.equal(r.body, 'null\n', show(r));
      else expectClearError(r, [400, 404, 414, 431]);
    }
    await stillHealthy();
  });
  test('a huge header', async () => {
    const r = await agent.request('/api/version', { headers: { 'X-Big': 'a'.repeat(70_000) } }).catch((e: Error) => ({ status: -1, body: e.message }) as Res);
    assert.ok(r.status === 431 || r.status === 400 || r.status === -1, `status ${r.status}`);
    await stillHealthy();
  });
  test('many headers', async () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 3000; i++) headers[`X-H-${i}`] = 'v';
    const r = await agent.request('/api/version', { headers }).catch((e: Error) => ({ status: -1, body: e.message }) as Res);
    assert.ok(r.status === 200 || r.status === 431 || r.status === 400 || r.status === -1, `status ${r.status}`);
    await stillHealthy();
  });
  test('a large body on a GET and on the login endpoint', async () => {
    const big = 'x'.repeat(5 * 1024 * 1024);
    // A reset connection (status -1) is an acceptable answer too; it carries no headers to show.
    const r1 = await agent.request('/devices/list', { body: big }).catch((e: Error) => ({ status: -1, body: e.message, headers: {} }) as Res);
    assert.ok(r1.status === -1 || r1.status < 500, show(r1 as Res));
    const r2 = await agent.request('/api/v1/auth/login', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: big })
      .catch((e: Error) => ({ status: -1, body: e.message, headers: {} }) as Res);
    assert.ok(r2.status === -1 || (r2.status >= 400 && r2.status < 500), `status ${r2.status}`);
    await stillHealthy();
  });
});

describe('methods and the wire', () => {
  for (const method of ['PATCH', 'OPTIONS', 'PROPFIND', 'PURGE']) {
    test(`${method} on guarded operations -> 405 GET only`, async () => {
      for (const p of ['/api/devices/profile?serial=BAD-1', '/api/devices/metrics/latest?serial=BAD-1', '/api/version']) {
        expectTextError(await agent.request(p, { method }), 405, 'GET only');
      }
      await stillHealthy();
    });
  }
  test('an unknown method token', async () => {
    const resp = await raw('FOOBAR /api/version HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(resp, /^HTTP\/1\.1 (400|405|501) /, JSON.stringify(resp.slice(0, 100)));
    await stillHealthy();
  });
  test('garbage over TLS and plain text on the TLS port', async () => {
    const r1 = await raw(Buffer.from([0, 1, 2, 3, 255, 254, 13, 10, 13, 10]));
    assert.ok(r1 === '' || /^HTTP\/1\.1 4\d\d /.test(r1), JSON.stringify(r1.slice(0, 100)));
    await raw('GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n', false);
    await raw('GET /api/version HTTP/1.1\r\nContent-Length: -5\r\nHost: x\r\n\r\n');
    await raw('GET /api/version HTTP/1.1\r\nTransfer-Encoding: chunked\r\nHost: x\r\n\r\nzz\r\n');
    await raw('GET /api/version HTTP/1.1\r\nHost: x\r\n'); // never finished
    await stillHealthy();
  });
  test('path traversal and odd paths do not leak files', async () => {
    for (const p of ['/../../../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '//etc/passwd', '/api/version/../../etc/passwd']) {
      const r = await agent.get(p);
      assert.ok(!r.body.includes('root:'), `${p}: ${show(r)}`);
      assert.ok(r.status < 500, `${p}: ${show(r)}`);
    }
    await stillHealthy();
  });
  test('nothing was corrupted and nothing crashed', async () => {
    await stillHealthy();
    assert.equal((await agent.get('/devices/discovered')).body, baseline.discovered);
    assert.doesNotMatch(agent.stderr(), /uncaught|unhandled/i);
  });
});
