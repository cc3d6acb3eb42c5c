// Logs: warnings and errors kept on the data partition show in /logs after a restart
// (a torn last line tolerated, the daily cap held by the real agent), and the log level set through
// POST /settings holds at once and across a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAgent, writeConfig, expectJson, expectTextError, type Agent } from '../../kit/agent.js';

interface Entry {
  level: string;
  time: string;
  msg: string;
  previous_run?: boolean;
  [k: string]: unknown;
}

const SETUP_WARNING = 'no account exists yet: sign in at /login with the setup code';
const logFile = (agent: { dataDir: string }) => join(agent.dataDir, 'log/warnings.ndjson');
const logs = async (agent: Agent, query: string) => expectJson(await agent.get(`/logs?${query}`)) as Entry[];
const post = (agent: Agent, path: string, body: unknown) =>
  agent.request(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });

test('warnings and errors outlive a restart: /logs and /logfile show them, marked previous_run, before the new run', async (t) => {
  // Password mode with no account: the agent warns at every start (the setup code).
  const agent = await startAgent({ authMode: 'password' });
  t.after(() => agent.stop());
  const first = (await logs(agent, 'level=warn')).filter((r) => r.msg === SETUP_WARNING);
  assert.equal(first.length, 1);
  assert.equal(first[0].previous_run, undefined);

  await agent.restart(); // SIGTERM: the waiting batch is written on exit
  const after = await logs(agent, 'level=warn');
  const setup = after.filter((r) => r.msg === SETUP_WARNING);
  assert.equal(setup.length, 2, JSON.stringify(after));
  assert.equal(setup[0].previous_run, true);
  assert.equal(setup[0].time, first[0].time);
  assert.equal(setup[1].previous_run, undefined, 'this run’s own warning');
  // The earlier run's records come first, then this run's, whatever `tail` cuts.
  assert.equal((await logs(agent, 'level=warn&tail=1'))[0].msg, SETUP_WARNING);
  assert.equal((await logs(agent, 'level=warn&tail=1'))[0].previous_run, undefined);
  const file = await agent.request('/logfile');
  assert.equal(file.status, 200);
  const fileRecs = file.body.trim().split('\n').map((l) => JSON.parse(l) as Entry);
  assert.equal(fileRecs[0].previous_run, true);
  assert.equal(fileRecs[0].msg, SETUP_WARNING);
  // On the card: the first run's warning (this run's waits for its batch), never info or debug.
  const stored = readFileSync(logFile(agent), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Entry);
  assert.ok(stored.some((r) => r.msg === SETUP_WARNING), JSON.stringify(stored));
  assert.ok(stored.every((r) => ['warn', 'error', 'fatal'].includes(r.level)), JSON.stringify(stored));
  assert.ok((await logs(agent, 'level=info')).some((r) => r.msg === 'agent ready' && r.previous_run === undefined));
});

test('a torn last line in the stored log is skipped, the agent starts, and the next write cuts it off', async (t) => {
  const cfg = await writeConfig({ authMode: 'password' });
  mkdirSync(join(cfg.dataDir, 'log'), { recursive: true });
  const earlier = [
    { level: 'error', time: '2026-01-02T03:04:05.000Z', msg: 'polling round failed', err: 'SQLITE_BUSY' },
    { level: 'fatal', time: '2026-01-02T03:04:06.000Z', msg: 'uncaught exception', err: 'TypeError: x is undefined' },
  ];
  writeFileSync(logFile(cfg), earlier.map((r) => JSON.stringify(r) + '\n').join('') + '{"level":"error","time":"2026-01-02T03:0');
  const agent = await startAgent({ config: cfg });
  t.after(() => agent.stop());
  const shown = await logs(agent, 'level=error');
  assert.deepEqual(
    shown.map((r) => [r.msg, r.err, r.previous_run]),
    earlier.map((r) => [r.msg, r.err, true]),
  );
  await agent.stop({ keepDir: true }); // writes this run's setup warning after the two
  const lines = readFileSync(logFile(cfg), 'utf8').split('\n');
  assert.equal(lines.pop(), '', 'the file ends with a whole line');
  const recs = lines.map((l) => JSON.parse(l) as Entry);
  assert.deepEqual(recs.slice(0, 2).map((r) => r.msg), ['polling round failed', 'uncaught exception']);
  assert.equal(recs[2].msg, SETUP_WARNING);
});

test('the real agent holds the daily cap: a full day writes only one summary line, once, and it shows after a restart', async (t) => {
  const cfg = await writeConfig({ authMode: 'password' });
  mkdirSync(join(cfg.dataDir, 'log'), { recursive: true });
  // Today's 1000 records already stored (a flood, or a crash loop, earlier today).
  const now = Date.now();
  const flood = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ level: 'error', time: new Date(now - 1000 + i).toISOString(), msg: `flood ${i}` }) + '\n');
  writeFileSync(logFile(cfg), flood.join(''));
  const agent = await startAgent({ config: cfg });
  t.after(() => agent.stop());
  assert.equal((await logs(agent, 'level=error&tail=2000')).filter((r) => r.previous_run).length, 1000);
  const before = statSync(logFile(cfg)).size;

  await agent.restart(); // the first run's setup warning was over the cap: dropped, then summarized on exit
  const lines = readFileSync(logFile(cfg), 'utf8').trim().split('\n');
  assert.equal(lines.length, 1001);
  const summary = JSON.parse(lines[1000]) as Entry;
  assert.equal(summary.dropped, 1);
  assert.match(summary.msg, /^1 records dropped: the log store's daily cap \(1000 records, 256 KiB\) was reached$/);
  const shown = await logs(agent, 'level=warn&tail=5');
  assert.ok(shown.some((r) => r.dropped === 1 && r.previous_run === true), JSON.stringify(shown));

  // A second run of the same day finds the summary there: it writes nothing at all.
  const size = statSync(logFile(cfg)).size;
  assert.ok(size > before);
  await agent.restart();
  assert.equal(statSync(logFile(cfg)).size, size);
});

test('the log level is a setting: applied at once, kept across a restart; a bad level is a 400 that changes nothing', async (t) => {
  const agent = await startAgent();
  t.after(() => agent.stop());
  const settings = async () => expectJson(await agent.get('/settings')) as { log: { level: string } };
  assert.equal((await settings()).log.level, 'info', 'the config file’s level');
  const requests = async () => (await logs(agent, 'level=debug&tail=2000')).filter((r) => r.level === 'debug' && r.msg === 'request');
  assert.equal((await requests()).length, 0, 'no debug lines at info');

  const set = expectJson(await post(agent, '/settings', { log: { level: 'debug' } })) as { log: { level: string } };
  assert.equal(set.log.level, 'debug');
  await agent.get('/api/version');
  const debugLines = await requests();
  assert.ok(debugLines.some((r) => r.path === '/api/version'), 'a request line at debug, without a restart');
  assert.ok((await logs(agent, 'level=info&tail=2000')).some((r) => r.msg === 'log level changed' && r.from === 'info' && r.to === 'debug'));

  expectTextError(await post(agent, '/settings', { log: { level: 'verbose' } }), 400, 'log.level must be one of debug, info, warn, error');
  expectTextError(await post(agent, '/settings', { log: { level: 'warn', colour: true } }), 400, 'unknown setting log.colour');
  expectTextError(await post(agent, '/settings', { log: 'debug' }), 400, 'log must be an object');
  assert.equal((await settings()).log.level, 'debug', 'nothing changed');

  await agent.restart();
  assert.equal((await settings()).log.level, 'debug', 'stored');
  assert.ok((await requests()).some((r) => r.path === '/settings' && r.previous_run === undefined), 'debug lines from the start');

  expectJson(await post(agent, '/settings', { log: { level: 'warn' } }));
  const count = (await requests()).length;
  await agent.get('/api/version');
  await agent.get('/api/version');
  assert.equal((await requests()).length, count, 'no more debug lines at warn');
});
