// The server peer alone (no agent): real HTTPS clients trusting its certificate, and a tiny `ws`
// client standing in for an agent, so the peer is known-good before agents are tested against it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { WebSocket } from 'ws';
import { startServerPeer, WS_PATH, type ServerPeer } from '../../kit/server-peer.js';

let peer: ServerPeer;
let ca: Buffer;
before(async () => {
  peer = await startServerPeer({ users: { admin: 'secret' } });
  ca = readFileSync(peer.caFile);
});
after(() => peer?.stop());

interface Reply {
  status: number;
  text: string;
  json: any;
}

/** One POST on a fresh connection, with real certificate and host-name checks against the peer's CA. */
function post(path: string, body: unknown, o: { token?: string; gzip?: boolean; port?: number } = {}): Promise<Reply> {
  const raw = Buffer.from(JSON.stringify(body));
  const payload = o.gzip ? gzipSync(raw) : raw;
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) };
  if (o.gzip) headers['Content-Encoding'] = 'gzip';
  if (o.token) headers.Authorization = `Bearer ${o.token}`;
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: o.port ?? peer.port, path, method: 'POST', headers, ca, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, text, json });
      });
      res.on('error', reject);
    });
    req.setTimeout(15_000, () => req.destroy(new Error('client timeout')));
    req.on('error', reject);
    req.end(payload);
  });
}

async function register(agentId: string = crypto.randomUUID()): Promise<string> {
  const r = await post('/api/v1/agents/register-with-token', { token: peer.enrollmentToken, agent_id: agentId, name: 'box', agent_version: '0.1.0', protocol_version: '1' });
  assert.equal(r.status, 200, r.text);
  return r.json.agent_token as string;
}

const envelope = (type: string, data?: unknown) => JSON.stringify({ type, ...(data === undefined ? {} : { data }), timestamp: new Date().toISOString() });

/**
 * A stand-in agent: answers proxy_request (GET /stream* streams three SSE events when asked to
 * stream; anything else echoes method, URL and body), command (recorded only: fire and forget),
 * and answers a frame it cannot use with {type:'error'}.
 */
function fakeAgent(token: string): Promise<{ ws: WebSocket; received: unknown[]; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(peer.wsUrl(token), { ca });
    const received: unknown[] = [];
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.on('error', reject);
    ws.on('open', () => resolve({ ws, received, closed }));
    ws.on('message', (data) => {
      let msg: any;
      try {
        msg = JSON.parse(String(data));
      } catch {
        return ws.send(envelope('error', { message: 'frame is not JSON' }));
      }
      received.push(msg);
      const d = msg?.data ?? {};
      if (msg?.type === 'proxy_request') {
        if (typeof d.request_id !== 'string') return ws.send(envelope('error', { message: 'proxy_request without request_id' }));
        const path = new URL(d.url).pathname;
        if (d.streaming && path.startsWith('/stream')) {
          ws.send(envelope('proxy_stream_chunk', { request_id: d.request_id, status_code: 200, headers: { 'Content-Type': 'text/event-stream' }, is_start: true }));
          let i = 0;
          const tick = setInterval(() => {
            if (++i > 3) {
              clearInterval(tick);
              return ws.send(envelope('proxy_stream_end', { request_id: d.request_id }));
            }
            ws.send(envelope('proxy_stream_chunk', { request_id: d.request_id, chunk: Buffer.from(`data: ${i}\n\n`).toString('base64') }));
          }, 20);
          return;
        }
        const echo = Buffer.concat([Buffer.from(`${d.method} ${d.url} `), Buffer.from(d.body, 'base64')]);
        return ws.send(envelope('proxy_response', { request_id: d.request_id, status_code: 200, headers: { 'Content-Type': 'application/octet-stream', 'X-Got': JSON.stringify(d.headers) }, body: echo.toString('base64') }));
      }
      if (msg?.type === 'command' || msg?.type === 'pong') return;
      ws.send(envelope('error', { message: `unknown type ${String(msg?.type)}` }));
    });
  });
}

/** Client-side waits: the peer's waitFor only wakes on the peer's own events. */
async function poll(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function wsStatus(token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(peer.wsUrl(token), { ca });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => {
      resolve(101);
      ws.close();
    });
    ws.on('error', (e) => (e.message.includes('Unexpected server response') ? undefined : reject(e)));
  });
}

test('register-with-token: a known token issues an agent token, an unknown one is 401; open registration is off', async () => {
  const ok = await post('/api/v1/agents/register-with-token', { token: peer.enrollmentToken, agent_id: 'a-1', name: 'box', agent_version: '0.1.0', protocol_version: '1' });
  assert.equal(ok.status, 200);
  assert.equal(ok.json.success, true);
  assert.equal(typeof ok.json.tenant_id, 'string');
  assert.ok(ok.json.agent_token.length >= 16);
  const again = await post('/api/v1/agents/register-with-token', { token: peer.enrollmentToken, agent_id: 'a-1' });
  assert.notEqual(again.json.agent_token, ok.json.agent_token, 'a fresh token per registration');
  const bad = await post('/api/v1/agents/register-with-token', { token: 'nope', agent_id: 'a-1' });
  assert.equal(bad.status, 401);
  assert.equal(bad.json.success, false);
  assert.equal((await post('/api/v1/agents/register', { agent_id: 'a-2', name: 'x', version: '1', protocol_version: '1' })).status, 401);
  assert.deepEqual(peer.registrations().map((r) => r.agentId), ['a-1', 'a-1']);
});

test('heartbeat: 401 without or with an unknown token; snapshot only while the agent is behind; body recorded verbatim', async () => {
  const token = await register('hb-agent');
  const hb = (v: string, extra: object = {}) => ({ agent_id: 'hb-agent', timestamp: new Date().toISOString(), status: 'active', version: '0.1.0', settings_version: v, ...extra });
  assert.equal((await post('/api/v1/agents/heartbeat', hb(''))).status, 401);
  assert.equal((await post('/api/v1/agents/heartbeat', hb(''), { token: 'forged' })).status, 401);
  const none = await post('/api/v1/agents/heartbeat', hb(''), { token });
  assert.equal(none.status, 200);
  assert.deepEqual(none.json, { success: true, settings_version: '' });

  peer.setManagedSettings('v3', { settings: { snmp: { timeout_ms: 1500 } } });
  const behind = await post('/api/v1/agents/heartbeat', hb('v2'), { token });
  assert.deepEqual(behind.json, { success: true, settings_version: 'v3', settings_snapshot: { settings: { snmp: { timeout_ms: 1500 } } } });
  const current = await post('/api/v1/agents/heartbeat', hb('v3', { settings_error: { version: 'v3', error: 'rejected' } }), { token });
  assert.deepEqual(current.json, { success: true, settings_version: 'v3' });
  const last = peer.httpHeartbeats().at(-1)!;
  assert.deepEqual(last.body.settings_error, { version: 'v3', error: 'rejected' });
  assert.equal(last.agentId, 'hb-agent');
  assert.deepEqual(peer.httpHeartbeats().map((h) => h.snapshotSent), [false, true, false]);
  peer.setManagedSettings('', {});
});

test('batches: a gzip metrics batch is decoded and recorded with sizes; devices; dedupe view; revoked tokens are 401', async () => {
  const token = await register('up-agent');
  const metrics = Array.from({ length: 50 }, (_, i) => ({ serial: 'SN1', timestamp: `2026-01-01T00:${String(i).padStart(2, '0')}:00Z`, page_count: 1000 + i }));
  const r = await post('/api/v1/metrics/batch', { agent_id: 'up-agent', timestamp: new Date().toISOString(), metrics }, { token, gzip: true });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { success: true, received: 50 });
  const b = peer.batches('metrics').at(-1)!;
  assert.equal(b.encoding, 'gzip');
  assert.ok(b.wireBytes > 0 && b.wireBytes < b.bytes, `compressed ${b.wireBytes} < decoded ${b.bytes}`);
  assert.equal(b.agentId, 'up-agent');
  assert.deepEqual(peer.metrics(), metrics);

  // The same snapshot again plus one hourly row: three keys per duplicate-aware view.
  const dup = [metrics[0], { serial: 'SN1', timestamp: '2025-12-01T00:00:00Z', tier: 'hourly', page_count: 5 }];
  assert.equal((await post('/api/v1/metrics/batch', { agent_id: 'up-agent', metrics: dup }, { token })).status, 200);
  assert.equal(peer.batches('metrics').at(-1)!.encoding, '');
  const snaps = peer.distinctSnapshots();
  assert.equal(snaps.size, 51);
  assert.equal(snaps.get(`SN1|${metrics[0].timestamp}|`)!.count, 2);
  assert.equal(snaps.get('SN1|2025-12-01T00:00:00Z|hourly')!.tier, 'hourly');

  const dev = await post('/api/v1/devices/batch', { agent_id: 'up-agent', timestamp: new Date().toISOString(), devices: [{ serial: 'SN1', ip: '10.0.0.5' }] }, { token });
  assert.deepEqual(dev.json, { success: true, received: 1 });
  assert.deepEqual(peer.devices(), [{ serial: 'SN1', ip: '10.0.0.5' }]);
  assert.equal((await post('/api/v1/devices/batch', { devices: 'x' }, { token })).status, 400);

  peer.revokeTokens();
  assert.equal((await post('/api/v1/metrics/batch', { metrics: [] }, { token })).status, 401);
  assert.equal((await post('/api/v1/agents/heartbeat', {}, { token })).status, 401);
});

test("mode down refuses connections; 'ok' serves again on the same port", async () => {
  const before = peer.requestCount('/api/v1/agents/heartbeat');
  const total = peer.requestCount();
  await peer.setMode('down');
  await assert.rejects(post('/api/v1/agents/heartbeat', {}), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
  await peer.setMode('ok');
  const r = await post('/api/v1/agents/heartbeat', {});
  assert.equal(r.status, 401, 'answered again, same URL');
  assert.equal(peer.requestCount('/api/v1/agents/heartbeat'), before + 1, 'the refused one was never seen');
  assert.equal(peer.requestCount(), total + 1);
});

test('mode error500: 500 and nothing recorded; drop: recorded, socket destroyed unanswered; slow: answered late; only narrows a fault', async () => {
  const token = await register('fault-agent');
  const n = peer.metrics().length;
  const batch = { agent_id: 'fault-agent', metrics: [{ serial: 'SN9', timestamp: '2026-02-01T00:00:00Z' }] };

  await peer.setMode('error500');
  const e = await post('/api/v1/metrics/batch', batch, { token });
  assert.equal(e.status, 500);
  assert.equal((await post('/api/v1/agents/heartbeat', {}, { token })).status, 500);
  assert.equal(peer.metrics().length, n, 'a failing server stores nothing');
  assert.equal(peer.requests().at(-1)!.mode, 'error500');

  await peer.setMode('drop');
  const dropsBefore = peer.requestCount('/api/v1/metrics/batch');
  await assert.rejects(post('/api/v1/metrics/batch', batch, { token }), (err: NodeJS.ErrnoException) => ['ECONNRESET', 'EPIPE'].includes(err.code ?? '') || /socket hang up/.test(err.message));
  assert.equal(peer.requestCount('/api/v1/metrics/batch'), dropsBefore + 1, 'a dropped request is counted');
  assert.equal(peer.metrics().length, n + 1, 'stored, but the answer was lost');
  assert.equal(peer.batches('metrics').at(-1)!.answered, false);
  assert.equal(peer.requests().at(-1)!.status, 'dropped');

  await peer.setMode('slow', { delayMs: 200 });
  const s = await post('/api/v1/metrics/batch', batch, { token });
  assert.equal(s.status, 200);
  assert.equal(peer.requests().at(-1)!.mode, 'slow');
  assert.equal(peer.distinctSnapshots().get('SN9|2026-02-01T00:00:00Z|')!.count, 2);

  await peer.setMode('error500', { only: ['/api/v1/metrics/batch'] });
  assert.equal((await post('/api/v1/metrics/batch', batch, { token })).status, 500);
  assert.equal((await post('/api/v1/agents/heartbeat', {}, { token })).status, 200);

  // The WebSocket upgrade takes the same faults.
  await peer.setMode('error500', { only: [WS_PATH] });
  assert.equal(await wsStatus(token), 500);
  await peer.setMode('drop', { only: [WS_PATH] });
  await assert.rejects(wsStatus(token));
  assert.deepEqual(peer.wsAttempts().slice(-2).map((a) => a.status), [500, 0]);
  await peer.setMode('ok');
});

test('login: configured users get a token, others 401', async () => {
  const ok = await post('/api/v1/auth/login', { username: 'admin', password: 'secret' });
  assert.equal(ok.status, 200);
  assert.equal(typeof ok.json.token, 'string');
  assert.ok(!Number.isNaN(Date.parse(ok.json.expires_at)));
  assert.equal((await post('/api/v1/auth/login', { username: 'admin', password: 'wrong' })).status, 401);
  assert.equal((await post('/api/v1/auth/login', { username: 'toString', password: undefined })).status, 401);
});

test('websocket: an unknown token is refused with 401 before the upgrade; attempts are counted with times', async () => {
  const n = peer.wsAttempts().length;
  assert.equal(await wsStatus('forged'), 401);
  assert.equal(await wsStatus(''), 401);
  const token = await register('ws-agent');
  assert.equal(await wsStatus(token), 101);
  const a = peer.wsAttempts().slice(n);
  assert.deepEqual(a.map((x) => [x.status, x.accepted]), [[401, false], [401, false], [101, true]]);
  assert.ok(a.every((x) => typeof x.at === 'number'));
  assert.equal(a[2].token, token);
  await peer.waitFor(() => peer.agentSockets().every((c) => c.closedAt !== undefined), 5000, 'the probe socket to close');
});

test('websocket: heartbeat is recorded and answered with pong; proxy, streaming proxy and command round trips', async () => {
  const token = await register('rt-agent');
  let agent = await fakeAgent(token);
  let conn = await peer.waitForAgentSocket(5000);
  assert.equal(conn.agentId, 'rt-agent');

  agent.ws.send(envelope('heartbeat', { device_count: 2, status: 'active', version: '0.1.0' }));
  await poll(() => (agent.received as any[]).some((m) => m.type === 'pong'), 5000, 'pong');
  assert.deepEqual(peer.heartbeats().at(-1)!.data, { device_count: 2, status: 'active', version: '0.1.0' });

  const bin = Buffer.from([0, 1, 2, 250, 255]);
  const r = await peer.proxy({ url: 'http://localhost:8443/devices/list', method: 'POST', headers: { Accept: 'application/json' }, body: bin });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, Buffer.concat([Buffer.from('POST http://localhost:8443/devices/list '), bin]));
  assert.equal(r.headers['X-Got'], JSON.stringify({ Accept: 'application/json' }));
  // The request frame exactly as the protocol shapes it.
  const sent = JSON.parse([...peer.sent()].reverse().find((s) => s.raw.includes('proxy_request'))!.raw);
  assert.deepEqual(Object.keys(sent).sort(), ['data', 'timestamp', 'type']);
  assert.deepEqual(Object.keys(sent.data).sort(), ['body', 'headers', 'method', 'request_id', 'streaming', 'url']);
  assert.equal(sent.data.body, bin.toString('base64'));
  assert.equal(sent.data.streaming, false);

  const s = await peer.proxy({ url: 'http://localhost:8443/stream/events', method: 'GET', streaming: true });
  assert.equal(s.status, 200);
  assert.equal(s.headers['Content-Type'], 'text/event-stream');
  assert.match(await s.waitForText('data: 2'), /data: 1\n\ndata: 2/);
  assert.equal((await s.waitForEnd(5000)).toString(), 'data: 1\n\ndata: 2\n\ndata: 3\n\n');
  assert.equal(s.isEnded(), true);
  assert.deepEqual(s.violations, []);
  // A stream whose chunks carry `data` instead of `chunk` still works, but is noted.
  agent.ws.removeAllListeners('message');
  agent.ws.on('message', (m) => {
    const d = JSON.parse(String(m)).data;
    agent.ws.send(envelope('proxy_stream_chunk', { request_id: d.request_id, status_code: 200, headers: {}, is_start: true }));
    agent.ws.send(envelope('proxy_stream_chunk', { request_id: d.request_id, data: Buffer.from('x').toString('base64') }));
    agent.ws.send(envelope('proxy_stream_end', { request_id: d.request_id }));
  });
  const alt = await peer.proxy({ url: 'http://localhost:8443/stream/alt', streaming: true });
  assert.equal((await alt.waitForEnd(5000)).toString(), 'x');
  assert.match(alt.violations.join(), /reads `chunk`/);
  agent.ws.removeAllListeners('message');
  agent.ws.close();
  await agent.closed;
  agent = await fakeAgent(token);
  conn = await peer.waitForAgentSocket(5000);
  assert.equal(s.buffered, false);

  // A streaming request answered in one piece still resolves, marked buffered.
  const one = await peer.proxy({ url: 'http://localhost:8443/other', streaming: true });
  assert.equal(one.buffered, true);
  assert.match(one.text(), /^GET http:\/\/localhost:8443\/other $/);

  // WebSocket pings are answered (and counted) until setWsPongs(false) makes the peer go silent.
  // Frames keep their order, so a pong control frame would arrive before the heartbeat's pong.
  let pongs = 0;
  agent.ws.on('pong', () => pongs++);
  agent.ws.ping();
  await poll(() => pongs === 1, 5000, 'a WebSocket pong');
  peer.setWsPongs(false);
  const seen = agent.received.length;
  agent.ws.ping();
  agent.ws.send(envelope('heartbeat', { status: 'active' }));
  await poll(() => agent.received.length > seen, 5000, 'the pong frame');
  assert.equal(pongs, 1, 'no pong while silent');
  assert.equal(conn.pings, 2);
  peer.setWsPongs(true);

  const commands = agent.received.length;
  await peer.command('collect', { serial: 'SN1' });
  await poll(() => agent.received.length > commands, 5000, 'the command frame');
  const c = agent.received.slice(commands).find((m: any) => m?.type === 'command') as any;
  assert.equal(c.data.command, 'collect');
  assert.equal(c.data.serial, 'SN1');
  assert.equal(typeof c.data.command_id, 'string');

  agent.ws.close();
  await agent.closed;
});

test('websocket: sendRaw/nextFrame for malformed frames; dropAgentSocket; down kills the socket', async () => {
  const token = await register('raw-agent');
  let agent = await fakeAgent(token);
  await peer.waitForAgentSocket(5000);

  peer.sendRaw('this is not json');
  const e1 = await peer.nextFrame((f) => f.type === 'error', 5000);
  assert.equal(e1.data.message, 'frame is not JSON');
  const mark = peer.frames().length;
  peer.send('no_such_type', { x: 1 });
  peer.sendRaw(envelope('proxy_request', { url: 'http://localhost/' }));
  const e2 = await peer.nextFrame((f) => f.type === 'error', 5000, { since: mark });
  assert.equal(e2.data.message, 'unknown type no_such_type');
  const e3 = await peer.nextFrame((f) => f.type === 'error' && f.seq > e2.seq, 5000, { since: mark });
  assert.equal(e3.data.message, 'proxy_request without request_id');
  peer.sendRaw('x'.repeat(2 * 1024 * 1024)); // a huge frame goes out as is
  await peer.nextFrame((f) => f.type === 'error', 5000);

  // A frame without a data object is read from the top level; a non-JSON frame is kept raw.
  agent.ws.send(JSON.stringify({ type: 'device_deleted', serial: 'SN7' }));
  agent.ws.send('garbage');
  const dd = await peer.nextFrame((f) => f.type === 'device_deleted', 5000, { since: 0 });
  assert.deepEqual(dd.data, { serial: 'SN7' });
  const g = await peer.nextFrame((f) => f.raw === 'garbage', 5000, { since: 0 });
  assert.equal(g.json, undefined);

  await peer.dropAgentSocket();
  assert.equal(await agent.closed, 1006, 'terminated, no close frame');
  await assert.rejects(peer.proxy({ url: 'http://localhost/' }), /no agent WebSocket/);

  agent = await fakeAgent(token);
  const conn = await peer.waitForAgentSocket(5000);
  assert.equal(conn.agentId, 'raw-agent');
  // An answer that never comes: the socket closing rejects the waiting proxy.
  const pending = peer.proxy({ url: 'http://localhost/never', streaming: false }, 60_000);
  agent.ws.removeAllListeners('message');
  await peer.setMode('down');
  await assert.rejects(pending, /socket closed/);
  await agent.closed;
  await peer.setMode('ok');
  assert.equal(await wsStatus(token), 101);
});
