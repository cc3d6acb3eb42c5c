// The link to a central server (server-protocol.md), tried against a real protocol
// peer (test/kit/server-peer.ts: HTTPS and a WebSocket over TLS on loopback, keeping what it received)
// with the real agent: enrollment and its secrets, heartbeat and managed settings, uploads
// through an outage and a SIGKILL, the WebSocket proxy and commands, malformed frames, and
// reconnection without a hot loop.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { importNdjson, runCli, startAgent, writeConfig, type Agent } from '../../kit/agent.js';
import { DAY, HOUR, MINUTE, device, hourStart, metrics, ndjson, nowSeconds } from '../../kit/seed.js';
import { startServerPeer, WS_PATH, type ServerPeer } from '../../kit/server-peer.js';
import { openEventStream } from '../../kit/events.js';
import { until } from '../../kit/until.js';

type Json = Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A saved printer nobody answers for (loopback, no agent): reads of it time out. */
const SILENT = { serial: 'SILENT-LINK-1', ip: '127.0.1.99' };
const SERIALS = ['LINK-A', 'LINK-B', 'LINK-C'];

function seedLines(perDevice: number, start: number): object[] {
  return SERIALS.flatMap((serial, k) => [
    device(serial, { ip: `127.0.1.${50 + k}`, is_saved: true, model: 'ECOSYS P2040dw', manufacturer: 'Kyocera' }),
    ...Array.from({ length: perDevice }, (_, i) => metrics(serial, 'raw', start + i * MINUTE, { page_count: 1000 + i, toner_levels: { black: 90 } })),
  ]);
}

async function linkOf(agent: Agent): Promise<Json> {
  const r = await agent.get('/settings');
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { server: { link: Json } }).server.link;
}


const keyOf = (m: Json) => `${m.serial}|${m.timestamp}`;

describe('enrolled agent', () => {
  let peer: ServerPeer;
  let agent: Agent;
  const start = nowSeconds() - 2 * HOUR;

  before(async () => {
    peer = await startServerPeer();
    agent = await startAgent({
      serverUrl: peer.url,
      server: { enrollment_token: peer.enrollmentToken, ca_file: peer.caFile, upload_batch_size: 25, upload_interval_ms: 0 },
      seed: ndjson([...seedLines(40, start), device(SILENT.serial, { ip: SILENT.ip, is_saved: true })]),
    });
  });
  after(async () => {
    await agent?.stop();
    await peer?.stop();
  });

  test('enrolls with the token, keeps its identity, and never shows or logs a secret', async () => {
    const reg = await peer.waitFor(() => peer.registrations()[0], 20_000, 'registration');
    assert.equal(reg.path, '/api/v1/agents/register-with-token');
    assert.equal(reg.body.token, peer.enrollmentToken);
    assert.match(String(reg.body.agent_id), /^[0-9a-f-]{36}$/);
    assert.equal(reg.body.protocol_version, '1');
    await peer.waitForAgentSocket(20_000);
    const link = await until('link online', async () => {
      const l = await linkOf(agent);
      return l.state === 'online' ? l : undefined;
    });
    assert.equal(link.agent_id, reg.body.agent_id);
    assert.equal(link.registered, true);
    const settings = await agent.get('/settings');
    const server = (JSON.parse(settings.body) as { server: Json }).server;
    assert.equal(server.url, peer.url);
    assert.equal(server.enrollment_token, '');
    for (const secret of [reg.token, peer.enrollmentToken]) {
      assert.ok(!settings.body.includes(secret), 'GET /settings shows no secret');
      assert.ok(!agent.stdout().includes(secret) && !agent.stderr().includes(secret), 'the log holds no secret');
    }
    // A restart keeps the identity and the token: no second registration. (After the first
    // drain: a restart during a batch sends that batch again, which the next test would count.)
    await until('the first drain', async () => ((await linkOf(agent)).backlog === 0 && peer.metrics().length >= 120 ? true : undefined));
    await agent.restart();
    await until('reconnected', async () => (peer.agentSockets().filter((c) => c.closedAt === undefined).length ? true : undefined));
    assert.equal(peer.registrations().length, 1);
    assert.equal((await linkOf(agent)).agent_id, reg.body.agent_id);
  });

  test('every snapshot arrives once, in order, in bounded batches; devices too', async () => {
    await peer.waitFor(() => (peer.metrics().length >= 120 ? true : undefined), 30_000, '120 snapshots');
    const got = peer.metrics();
    assert.equal(got.length, 120, 'each once');
    assert.equal(new Set(got.map(keyOf)).size, 120);
    const ids = got.map((m) => m.id as number);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'in the order they were stored');
    for (const b of peer.batches('metrics')) {
      assert.ok(b.items.length <= 25, `batch of ${b.items.length} <= 25`);
      // The reference server stores each reading at its batch's timestamp: none may move by more than 30 s.
      const stamp = Date.parse(String(b.body.timestamp));
      for (const m of b.items) assert.ok(Math.abs(Date.parse(String(m.timestamp)) - stamp) <= 30_000, `${m.timestamp} in a batch stamped ${b.body.timestamp}`);
    }
    assert.ok(peer.batches().every((b) => b.encoding === ''), 'plain JSON bodies: the reference server reads no Content-Encoding');
    const serials = new Set(peer.devices().map((d) => d.serial));
    for (const s of [...SERIALS, SILENT.serial]) assert.ok(serials.has(s), `device ${s} uploaded`);
    assert.equal((await linkOf(agent)).backlog, 0);
  });

  test('heartbeat reports the devices as a string-versioned server expects; managed settings in its schema apply; what cannot apply is reported', async () => {
    const hb = await peer.waitFor(() => peer.httpHeartbeats()[0], 20_000, 'heartbeat');
    assert.equal(hb.body.device_count, 4);
    assert.equal(hb.body.settings_version, '', 'a string, as the reference server decodes it (a number fails the whole heartbeat)');
    for (const field of ['hostname', 'ip', 'platform', 'os_version', 'architecture', 'git_commit']) assert.equal(typeof hb.body[field], 'string', field);
    // PrintMaster's schema (test/fixtures/printmaster): only managed sections count.
    const v5 = 'a'.repeat(64);
    peer.setManagedSettings(v5, {
      version: v5,
      settings: { snmp: { version: '2c', community: 'site-ro', timeout_ms: 3500 }, spooler: { enabled: true, include_network_printers: true } },
      managed_sections: ['snmp', 'spooler'],
    });
    await agent.restart(); // a start sends a heartbeat at once
    const link = await until('managed settings applied', async () => {
      const s = JSON.parse((await agent.get('/settings')).body) as { discovery: { snmp_timeout_ms: number }; snmp: { communities: string[] }; server: { link: Json } };
      return s.discovery.snmp_timeout_ms === 3500 && s.server.link.settings_version === v5 ? { s, link: s.server.link } : undefined;
    });
    assert.deepEqual(link.s.snmp.communities, ['site-ro']);
    assert.ok((link.link.settings_unmapped as string[]).some((f) => f.startsWith('spooler.')), JSON.stringify(link.link.settings_unmapped));
    const reported = await peer.waitFor(
      () => peer.httpHeartbeats().find((h) => h.body.settings_version === v5 && Array.isArray(h.body.settings_unmapped)),
      20_000,
      'the applied version and what could not apply, in a heartbeat',
    );
    assert.ok((reported.body.settings_unmapped as string[]).some((f) => f.startsWith('spooler.')));
  });

  test('an outage (down, 500s, answers lost): readings are kept, then drain in order with no gap', async () => {
    let stamp = nowSeconds() - 30 * MINUTE;
    const statuses: Json[] = [];
    const stream = openEventStream(agent.httpsPort, (name, data) => name === 'server_status' && statuses.push(data as Json));
    try {
      for (const mode of ['down', 'error500', 'drop'] as const) {
        const before = new Set(peer.metrics().map(keyOf)).size;
        await peer.setMode(mode, mode === 'down' ? {} : { only: ['/api/v1/metrics/batch'] });
        const lines = SERIALS.map((s) => metrics(s, 'raw', (stamp += 1000), { page_count: 5000 }));
        const r = await importNdjson(agent.configPath, ndjson(lines));
        assert.equal(r.code, 0, r.stderr);
        // Stored and waiting while the server cannot take them.
        await until(`a backlog while ${mode}`, async () => ((await linkOf(agent)).backlog === 3 ? true : undefined));
        if (mode === 'error500') {
          // The channel is up, the server refuses the uploads: the link says so, not "online".
          const link = await until('the link failing', async () => {
            const l = await linkOf(agent);
            return l.state === 'failing' ? l : undefined;
          });
          assert.match(String(link.upload_error), /500/);
          // ... and the UI hears it: a server_status event carries the state and the error.
          await until('a server_status event saying failing', async () =>
            statuses.some((e) => e.state === 'failing' && /500/.test(String(e.upload_error))) ? true : undefined);
        }
        if (mode === 'drop') await peer.waitFor(() => (peer.requests().some((q) => q.status === 'dropped') ? true : undefined), 30_000, 'a dropped answer');
        await peer.setMode('ok');
        await peer.waitFor(() => (new Set(peer.metrics().map(keyOf)).size >= before + 3 ? true : undefined), 60_000, `the backlog after ${mode}`);
        await until('backlog drained', async () => ((await linkOf(agent)).backlog === 0 ? true : undefined));
        assert.equal(new Set(peer.metrics().map(keyOf)).size, before + 3, `${mode}: every reading, no gap`);
      }
      // Only an answer the agent never got makes it send a batch again; the server dedupes those.
      const counts = new Map<string, number>();
      for (const m of peer.metrics()) counts.set(keyOf(m), (counts.get(keyOf(m)) ?? 0) + 1);
      assert.ok([...counts.values()].every((n) => n <= 2));
      const ids = peer.metrics().map((m) => m.id as number);
      for (let k = 1; k < ids.length; k++) assert.ok(ids[k] > ids[k - 1] || counts.get(keyOf(peer.metrics()[k]))! > 1, 'in order');
      await until('a server_status event saying online again once the uploads are taken', async () =>
        (statuses.at(-1)?.state === 'online' ? true : undefined));
    } finally {
      stream.destroy();
    }
  });

  test('the token refused: the agent registers again (same identity)', async () => {
    const n = peer.registrations().length;
    peer.revokeTokens();
    await agent.restart();
    const again = await peer.waitFor(() => peer.registrations()[n], 30_000, 're-registration');
    assert.equal(again.body.agent_id, peer.registrations()[0].body.agent_id);
    await until('online again', async () => ((await linkOf(agent)).state === 'online' ? true : undefined));
    assert.equal(peer.registrations().length, n + 1, 'once');
  });

  test('a refusal that answers a call made with the old token does not drop the new one', async () => {
    const HEARTBEAT = '/api/v1/agents/heartbeat';
    const n = peer.registrations().length;
    const seq0 = peer.requests().at(-1)?.seq ?? 0;
    const refusals = () => agent.stdout().split('the server refused the agent token').length - 1;
    const refused0 = refusals();
    // The heartbeat sent with the revoked token is answered late; the channel's refusal comes at once.
    await peer.setMode('slow', { delayMs: 10_000, only: [HEARTBEAT] });
    try {
      peer.revokeTokens();
      await agent.restart();
      const late = await peer.waitFor(() => peer.requests().find((r) => r.seq > seq0 && r.path === HEARTBEAT && r.status === 401), 60_000, 'the late refusal');
      const again = peer.registrations()[n];
      assert.ok(again && again.at < late.at + 10_000, 'registered again (channel refused) before the late refusal was answered');
      await peer.setMode('ok');
      // A round trip through the channel after the late refusal: the box has dealt with it by then.
      await peer.waitForAgentSocket(20_000);
      const version = await peer.proxy({ url: 'http://localhost/api/version', method: 'GET' });
      assert.equal(version.status, 200, version.text());
      assert.equal(peer.registrations().length, n + 1, 'one registration: the late 401 for the old token changed nothing');
      assert.equal(refusals() - refused0, 1, 'one refusal acted on');
    } finally {
      await peer.setMode('ok');
    }
  });

  test('the WebSocket proxy runs requests through the agent as the proxy principal', async () => {
    await peer.waitForAgentSocket(20_000);
    const list = await peer.proxy({ url: 'http://localhost:8443/devices/list', method: 'GET' });
    assert.equal(list.status, 200, list.text());
    assert.deepEqual((list.json() as Json[]).map((d) => d.serial).sort(), [...SERIALS, SILENT.serial].sort());

    const update = await peer.proxy({
      url: 'http://localhost/devices/update',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ serial: 'LINK-A', location: 'Room 7' }),
    });
    assert.equal(update.status, 200, update.text());
    const profile = JSON.parse((await agent.get('/api/devices/profile?serial=LINK-A')).body) as { device: Json };
    assert.equal(profile.device.location, 'Room 7');
    // Over the channel a field the box does not know is ignored and named (the server's UI is
    // another program); locally it is a 400. Inherited keys are refused from both.
    const lenient = await peer.proxy({
      url: 'http://localhost/devices/update', method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ serial: 'LINK-A', colour: 'red', subnet_mask: '255.0.0.0', model: 'Mine' }),
    });
    assert.equal(lenient.status, 200, lenient.text());
    assert.equal(lenient.headers['x-ignored-fields'], 'colour, subnet_mask');
    assert.equal((lenient.json() as Json).model, 'Mine');
    const local = await agent.request('/devices/update', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ serial: 'LINK-A', colour: 'red' }),
    });
    assert.equal(local.status, 400, local.body);
    assert.equal(local.body, 'unknown field colour\n');
    const hostile = await peer.proxy({
      url: 'http://localhost/devices/update', method: 'POST', headers: { 'content-type': 'application/json' },
      body: '{"serial": "LINK-A", "constructor": {"prototype": {"location": "x"}}}',
    });
    assert.equal(hostile.status, 400, hostile.text());
    assert.match(hostile.text(), /^JSON body: /);

    const events = await peer.proxy({ url: 'http://127.0.0.1/events', method: 'GET', streaming: true });
    assert.equal(events.status, 200);
    await events.waitForText('event: connected', 10_000);
    await agent.request('/devices/update', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ serial: 'LINK-B', location: 'Hall' }),
    });
    await events.waitForText('"serial":"LINK-B"', 10_000);
    peer.send('proxy_cancel', { request_id: events.requestId });
    await events.waitForEnd(10_000);

    // Without streaming (the reference server's generic proxy, which serves the box's UI), the event
    // stream is answered at once: one `unavailable` event, and the UI refreshes instead (docs/ui.md).
    // Not the 30 s timeout's answer (that one is a 504 saying so; 60 s is only the peer's give-up),
    // and no event of the stream itself: what the answer is shows it was not waited for.
    const plain = await peer.proxy({ url: 'http://localhost/events', method: 'GET', headers: { Accept: 'text/event-stream' } }, 60_000);
    assert.equal(plain.status, 200, plain.text());
    assert.match(String(plain.headers['content-type']), /^text\/event-stream/);
    assert.match(plain.text(), /^retry: \d+\nevent: unavailable\ndata: \{"reason":"[^"]+"\}\n\n$/);

    // A browser's POST relayed by the server comes from a page on the server (the box's UI under
    // its prefix): accepted as same-origin there; a cross-site one is refused.
    const browserPost = (fetchSite: string) => peer.proxy({
      url: 'http://localhost/devices/update', method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://office.example', 'sec-fetch-site': fetchSite },
      body: JSON.stringify({ serial: 'LINK-A', location: 'Room 8' }),
    });
    const fromServerPage = await browserPost('same-origin');
    assert.equal(fromServerPage.status, 200, fromServerPage.text());
    const crossSite = await browserPost('cross-site');
    assert.equal(crossSite.status, 403, crossSite.text());
    assert.match(crossSite.text(), /Sec-Fetch-Site is cross-site/);
    const noFetchSite = await peer.proxy({
      url: 'http://localhost/devices/update', method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://elsewhere.example' },
      body: JSON.stringify({ serial: 'LINK-A', location: 'Room 9' }),
    });
    assert.equal(noFetchSite.status, 403, noFetchSite.text());
    assert.match(noFetchSite.text(), /is not the central server/);
    const fromServerOrigin = await peer.proxy({
      url: 'http://localhost/devices/update', method: 'POST',
      headers: { 'content-type': 'application/json', origin: new URL(peer.url).origin },
      body: JSON.stringify({ serial: 'LINK-A', location: 'Room 10' }),
    });
    assert.equal(fromServerOrigin.status, 200, fromServerOrigin.text());

    const elsewhere = await peer.proxy({ url: 'http://printer.example.invalid/devices/list', method: 'GET' });
    assert.equal(elsewhere.status, 502);
    assert.match(elsewhere.text(), /localhost only/);

    const big = await peer.proxy({ url: 'http://localhost/devices/update', method: 'POST', body: Buffer.alloc(1024 * 1024 + 1, 'a') });
    assert.equal(big.status, 413);
    assert.match(big.text(), /1048576 bytes/, 'refused by the channel before the agent sees it');
    // Under the channel's bound, over the route's (64 KiB): the route's own 413 comes back.
    const overRoute = await peer.proxy({
      url: 'http://localhost/devices/update', method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(100 * 1024, ' '),
    });
    assert.equal(overRoute.status, 413, overRoute.text());
    assert.match(overRoute.text(), /larger than 65536 bytes/);
    const afterwards = await peer.proxy({ url: 'http://localhost/api/version', method: 'GET' });
    assert.equal(afterwards.status, 200, 'the channel goes on');

    const traversal = await peer.proxy({ url: 'http://localhost/devices//list', method: 'GET' });
    assert.equal(traversal.status, 400, 'the request-target check applies to proxied requests too');
  });

  test('proxied requests are bounded: the ninth at once is refused', async () => {
    const s = await agent.request('/settings', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ discovery: { snmp_timeout_ms: 4000, allowed_ranges: ['127.0.0.0/8'] } }),
    });
    assert.equal(s.status, 200, s.body);
    // Four event streams and four reads of a silent printer hold the eight slots.
    const streams = await Promise.all([1, 2, 3, 4].map(() => peer.proxy({ url: 'http://localhost/events', method: 'GET', streaming: true })));
    const slow = [1, 2, 3, 4].map(() =>
      peer.proxy(
        { url: 'http://localhost/devices/metrics/collect', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ serial: SILENT.serial }) },
        60_000,
      ),
    );
    await sleep(500);
    const ninth = await peer.proxy({ url: 'http://localhost/api/version', method: 'GET' });
    assert.equal(ninth.status, 503, ninth.text());
    for (const st of streams) peer.send('proxy_cancel', { request_id: st.requestId });
    const answers = await Promise.all(slow);
    for (const a of answers) assert.equal(a.status, 504, a.text());
    const after = await peer.proxy({ url: 'http://localhost/api/version', method: 'GET' });
    assert.equal(after.status, 200, 'slots come back');
  });

  test('every command is handled or answered in a frame the reference server knows (update_progress, job_progress)', async () => {
    await peer.waitForAgentSocket(20_000);
    const since = peer.frames().length;
    const scans = JSON.parse((await agent.get('/discover')).body) as { scan_id?: number } | null;
    await peer.command('discover');
    await until('a scan started by the command', async () => {
      const now = JSON.parse((await agent.get('/discover')).body) as { scan_id?: number } | null;
      return now && now.scan_id !== scans?.scan_id ? true : undefined;
    });
    const scanned = await peer.nextFrame((f) => f.type === 'job_progress' && f.data.job_type === 'discover', 10_000, { since });
    assert.equal(scanned.data.status, 'completed', JSON.stringify(scanned.data));
    await peer.command('collect', { serial: SILENT.serial });
    const collect = await peer.nextFrame((f) => f.type === 'job_progress' && f.data.job_type === 'collect', 60_000, { since });
    assert.equal(collect.data.status, 'failed');
    assert.equal(collect.data.error, `no snapshot read from ${SILENT.serial}`);
    // The update commands reach the update service; here it says why it cannot (the VM boot test installs for real).
    await peer.command('check_update');
    const update = await peer.nextFrame((f) => f.type === 'update_progress', 10_000, { since });
    assert.equal(update.data.status, 'failed', JSON.stringify(update.data));
    assert.match(String(update.data.error), /^updates need RAUC/);
    await peer.command('reboot_the_moon');
    const unknown = await peer.nextFrame((f) => f.type === 'job_progress' && f.data.job_type === 'reboot_the_moon', 10_000, { since });
    assert.equal(unknown.data.status, 'failed');
    assert.match(String(unknown.data.error), /^unknown command "reboot_the_moon": this box handles check_update, force_update, cancel_update, restart, discover, collect$/);
    // The server's "collect" button: async=true answers a job at once; its outcome follows as job_progress frames.
    const job = await peer.proxy({
      url: 'http://localhost:8080/devices/metrics/collect?async=true', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ serial: SILENT.serial, async: true }),
    });
    assert.equal(job.status, 202, job.text());
    const { job_id } = job.json() as { job_id: string };
    const failed = await peer.nextFrame((f) => f.type === 'job_progress' && f.data.job_id === job_id && f.data.status === 'failed', 60_000, { since });
    assert.equal(failed.data.job_type, 'metrics_collect');
    const answers = peer.frames().slice(since).filter((f) => f.type === 'command_result' || f.type === 'error');
    assert.deepEqual(answers, [], 'no command_result or error frame: the reference server knows neither');
  });

  test('a local delete is reported to the server; one the server asked for is not', async () => {
    const since = peer.frames().length;
    const local = await agent.request('/devices/delete', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ serial: 'LINK-C' }) });
    assert.equal(local.status, 200, local.body);
    const frame = await peer.nextFrame((f) => f.type === 'device_deleted', 10_000, { since });
    assert.equal(frame.data.serial, 'LINK-C');
    const mark = Date.now();
    const remote = await peer.proxy({ url: 'http://localhost/devices/delete', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ serial: 'LINK-B' }) });
    assert.equal(remote.status, 200, remote.text());
    await sleep(1000);
    assert.equal(peer.frames('device_deleted').filter((f) => f.at >= mark).length, 0);
  });

  test('malformed frames are logged (the reference server knows no error frame from an agent); the agent keeps serving', async () => {
    await peer.waitForAgentSocket(20_000);
    const since = peer.frames().length;
    for (const [raw, reason] of [
      ['not json', 'not JSON'],
      [JSON.stringify({ type: 'no_such_type', data: {} }), 'unknown frame type from the server'],
      [JSON.stringify({ type: 'proxy_request', data: { url: 'http://localhost/api/version', method: 'GET' } }), 'request_id'],
      [JSON.stringify({ type: 'command', data: 'x' }), 'data must be an object'],
    ] as const) {
      peer.sendRaw(raw);
      await until(`logged: ${reason}`, async () => (agent.stdout().includes(reason) ? true : undefined), 10_000);
    }
    assert.deepEqual(peer.frames().slice(since).filter((f) => f.type === 'error'), []);
    const attempts = peer.wsAttempts().length;
    peer.sendRaw(JSON.stringify({ type: 'heartbeat', data: { pad: 'x'.repeat(5 * 1024 * 1024) } }));
    await peer.waitFor(() => (peer.wsAttempts().length > attempts ? true : undefined), 30_000, 'a reconnection after the huge frame');
    assert.equal((await agent.get('/api/version')).status, 200);
  });

  test('the agent reconnects after the server drops the socket, backing off (no hot loop)', async () => {
    await peer.waitForAgentSocket(20_000);
    await peer.setMode('error500', { only: [WS_PATH] });
    const from = peer.wsAttempts().length;
    await peer.dropAgentSocket();
    await sleep(14_000);
    const tries = peer.wsAttempts().slice(from);
    // 5 s then 10 s (each +-20%): two or three tries in 14 s, never a burst.
    assert.ok(tries.length >= 1 && tries.length <= 3, `${tries.length} attempts in 14 s`);
    for (let i = 1; i < tries.length; i++) assert.ok(tries[i].at - tries[i - 1].at >= 3_500, 'spaced');
    await peer.setMode('ok');
    await peer.waitForAgentSocket(40_000);
  });
});

test('a SIGKILL in the middle of a batch: after restart nothing is missing, at most that batch twice', async () => {
  const peer = await startServerPeer();
  // The peer stores each metrics batch and answers 3 s later: the kill lands before the answer.
  await peer.setMode('slow', { delayMs: 3000, only: ['/api/v1/metrics/batch'] });
  const start = nowSeconds() - HOUR;
  const agent = await startAgent({
    serverUrl: peer.url,
    server: { enrollment_token: peer.enrollmentToken, ca_file: peer.caFile, upload_batch_size: 50, upload_interval_ms: 0 },
    seed: ndjson(seedLines(100, start)),
  });
  try {
    await peer.waitFor(() => (peer.batches('metrics').length >= 1 ? true : undefined), 30_000, 'a batch stored');
    await agent.stop({ signal: 'SIGKILL', keepDir: true });
    const unanswered = peer.requests().filter((r) => r.path === '/api/v1/metrics/batch' && r.status === 0);
    assert.equal(unanswered.length, 1, 'the kill came before the stored batch was answered');
    await peer.setMode('ok');
    await agent.restart();
    await peer.waitFor(() => (new Set(peer.metrics().map(keyOf)).size >= 300 ? true : undefined), 60_000, 'all 300');
    const counts = new Map<string, number>();
    for (const m of peer.metrics()) counts.set(keyOf(m), (counts.get(keyOf(m)) ?? 0) + 1);
    assert.equal(counts.size, 300, 'no gap');
    const twice = [...counts.values()].filter((n) => n > 1).length;
    assert.ok(twice > 0 && twice <= 50, `${twice} sent twice (the one unacknowledged batch, sent again)`);
    assert.ok([...counts.values()].every((n) => n <= 2));
  } finally {
    await agent.stop();
    await peer.stop();
  }
});

test('an outage longer than raw retention: hourly rows stand in for the raw ones retention removed', async () => {
  const peer = await startServerPeer();
  const cfg = await writeConfig({ serverUrl: peer.url, server: { ca_file: peer.caFile, upload_interval_ms: 0 } });
  // A box registered ten days ago whose server last acknowledged the readings of that moment; it
  // kept reading every hour since, with the uplink down.
  const now = hourStart(Date.now());
  const from = now - 10 * DAY;
  const hours = Array.from({ length: 10 * 24 + 1 }, (_, i) => from + i * HOUR);
  const r = await importNdjson(cfg.configPath, ndjson([
    device('GAP-1', { ip: '127.0.1.61', is_saved: true }),
    device('GAP-2', { ip: '127.0.1.62', is_saved: true }),
    ...hours.flatMap((ts, i) => ['GAP-1', 'GAP-2'].map((serial) => metrics(serial, 'raw', ts, { page_count: 100 + i }))),
  ]));
  assert.equal(r.code, 0, r.stderr);
  const db = new Database(join(cfg.dataDir, 'printbox.db'));
  const agentId = '0b3f5c1e-1111-4a2b-9c3d-000000000001';
  const first = db.prepare('SELECT max(id) AS id FROM metrics_raw WHERE ts = ?').get(from) as { id: number };
  db.prepare(`INSERT INTO server_link (id, agent_id, server_url, agent_token, metrics_cursor, metrics_cursor_ts) VALUES (1, ?, ?, ?, ?, ?)`)
    .run(agentId, peer.url, peer.issueToken(agentId), first.id, from);
  db.close();
  const rollup = await runCli(['rollup'], { configPath: cfg.configPath });
  assert.equal(rollup.code, 0, rollup.stderr);
  const agent = await startAgent({ config: cfg });
  try {
    await peer.waitFor(() => (new Set(peer.metrics().map((m) => `${m.serial}|${Date.parse(String(m.timestamp))}`)).size >= 2 * (hours.length - 1) ? true : undefined), 60_000, 'every hour');
    const got = peer.metrics();
    const hourly = got.filter((m) => m.tier === 'hourly');
    const raw = got.filter((m) => m.tier === 'raw');
    assert.ok(hourly.length > 0, 'hourly rows sent for the gap');
    // Every hour after the acknowledged one arrives, raw where raw is left, hourly where it is not.
    for (const serial of ['GAP-1', 'GAP-2']) {
      const seen = new Set(got.filter((m) => m.serial === serial).map((m) => Date.parse(String(m.timestamp))));
      for (const ts of hours.slice(1)) assert.ok(seen.has(ts), `${serial} ${new Date(ts).toISOString()}`);
      assert.ok(!seen.has(from), 'the acknowledged reading is not sent again');
    }
    const lastHourly = Math.max(...hourly.map((m) => Date.parse(String(m.timestamp))));
    const firstRaw = Math.min(...raw.map((m) => Date.parse(String(m.timestamp))));
    assert.ok(lastHourly < firstRaw, 'tier rows only for the time raw no longer holds');
    assert.ok(got.indexOf(hourly.at(-1)!) < got.indexOf(raw[0]), 'the gap first, then raw, in order');
  } finally {
    await agent.stop();
    await peer.stop();
  }
});

test('a refused enrollment token: state rejected, retries back off', async () => {
  const peer = await startServerPeer();
  const agent = await startAgent({ serverUrl: peer.url, server: { enrollment_token: 'not-the-token', ca_file: peer.caFile } });
  try {
    await sleep(13_000);
    const tries = peer.requestCount('/api/v1/agents/register-with-token');
    assert.ok(tries >= 2 && tries <= 3, `${tries} registration attempts in 13 s (5 s, then 10 s)`);
    const link = await linkOf(agent);
    assert.equal(link.state, 'rejected');
    assert.match(String(link.last_error), /refused/);
    assert.equal(link.registered, false);
  } finally {
    await agent.stop();
    await peer.stop();
  }
});

test('enrollment through POST /settings; TLS is verified; server_status events follow the link', async () => {
  const peer = await startServerPeer();
  const stranger = await startServerPeer(); // a server whose certificate this box has no reason to trust
  const agent = await startAgent({ server: { ca_file: peer.caFile } });
  const seen: Json[] = [];
  const stream = openEventStream(agent.httpsPort, (name, data) => name === 'server_status' && seen.push(data as Json));
  const enroll = (url: string, token: string) =>
    agent.request('/settings', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ server: { url, enrollment_token: token } }),
    });
  try {
    assert.equal((await linkOf(agent)).state, 'off');
    assert.equal((await enroll(stranger.url, stranger.enrollmentToken)).status, 200);
    await until('a certificate error', async () => {
      const l = await linkOf(agent);
      return /certificate/i.test(String(l.last_error ?? '')) ? l : undefined;
    });
    assert.equal(stranger.registrations().length, 0, 'nothing is sent over an unverified connection');

    assert.equal((await enroll(peer.url, peer.enrollmentToken)).status, 200);
    await peer.waitForAgentSocket(30_000);
    await until('online', async () => ((await linkOf(agent)).state === 'online' ? true : undefined));
    const states = seen.map((e) => e.state);
    for (const s of ['registering', 'online']) assert.ok(states.includes(s), `server_status ${s} in ${states.join(', ')}`);

    // Unenrolling stops the link.
    assert.equal((await enroll('', '')).status, 200);
    await until('off', async () => ((await linkOf(agent)).state === 'off' ? true : undefined));
    assert.equal(seen.at(-1)?.state, 'off');
  } finally {
    stream.destroy();
    await agent.stop();
    await peer.stop();
    await stranger.stop();
  }
});

test('a settings change while the box registers leaves that registration alone; a new enrollment token starts over', async () => {
  const REGISTER = '/api/v1/agents/register-with-token';
  const peer = await startServerPeer({ enrollmentTokens: ['first-token', 'second-token'] });
  // The registration's answer comes late, so the changes below arrive while it is under way.
  await peer.setMode('slow', { delayMs: 4_000, only: [REGISTER] });
  const agent = await startAgent({ serverUrl: peer.url, server: { enrollment_token: 'first-token', ca_file: peer.caFile } });
  const post = (body: Json) => agent.request('/settings', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  try {
    await peer.waitFor(() => peer.requests().find((r) => r.path === REGISTER), 30_000, 'the registration under way');
    assert.equal((await post({ discovery: { snmp_timeout_ms: 900 } })).status, 200);
    await peer.waitForAgentSocket(30_000);
    assert.equal(peer.requestCount(REGISTER), 1, 'one registration: the server keeps only the token it issued last');

    // Unregistered again, then a new enrollment token while that registration is under way: it starts over with it.
    peer.revokeTokens();
    await agent.restart();
    await peer.waitFor(() => peer.requestCount(REGISTER) === 2 || undefined, 30_000, 'the second registration under way');
    assert.equal((await post({ server: { url: peer.url, enrollment_token: 'second-token' } })).status, 200);
    const last = await peer.waitFor(() => peer.registrations().find((r) => r.body.token === 'second-token'), 30_000, 'a registration with the new token');
    assert.equal(last.agentId, peer.registrations()[0].agentId, 'same identity');
    await until('online', async () => ((await linkOf(agent)).state === 'online' ? true : undefined));
  } finally {
    await agent.stop();
    await peer.stop();
  }
});
