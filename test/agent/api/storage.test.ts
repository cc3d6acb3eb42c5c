// The storage guard: on a full or read-only data file system the agent
// starts, serves reads, answers writes with 507 naming SQLite's error and changing nothing, shows
// the state (GET /settings `storage`, event `storage_status`), and takes writes again by itself
// when there is room. Below storage.reserve_mb it prunes raw rows already rolled up.
//
// Real file systems: each test mounts a small tmpfs (needs root, as CI has; without it the file is
// skipped, saying why) and fills it with a real file until the kernel says ENOSPC.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { startAgent, type Agent } from '../../kit/agent.js';
import { openEventStream } from '../../kit/events.js';
import { cannotMount, fill, mountCard, unfill, unmountCards } from '../../kit/card.js';
import { DAY, HOUR, dayStart, device, metrics, ndjson } from '../../kit/seed.js';
import { RESERVE_BYTES } from '../../../src/store/reserve-file.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';

const skip = cannotMount;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
after(unmountCards);

async function storageOf(agent: Agent): Promise<{ state: string; error: string | null; pending_readings: number; free_bytes: number | null }> {
  const r = await agent.get('/settings');
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body).storage;
}
const postInterval = (agent: Agent, minutes: number) =>
  agent.request('/settings', { method: 'POST', body: JSON.stringify({ collection: { interval_minutes: minutes } }), headers: { 'Content-Type': 'application/json' } });
const intervalOf = async (agent: Agent) => JSON.parse((await agent.get('/settings')).body).collection.interval_minutes as number;

/** Waits until the guard's state is one of `states` (it retries from 5 s, doubling). */
async function waitForState(agent: Agent, states: string[], ms = 40_000): Promise<string> {
  const deadline = Date.now() + ms;
  let last = '';
  while (Date.now() < deadline) {
    last = (await storageOf(agent)).state;
    if (states.includes(last)) return last;
    await sleep(250);
  }
  assert.fail(`storage state still ${last} after ${ms} ms, expected ${states.join(' or ')}`);
}

describe('a full data file system', { skip }, () => {
  let mount = '';
  let agent: Agent;
  after(() => agent?.stop());

  test('fills up while the agent runs: reads go on, writes get 507 and change nothing, the state is shown and sent, writes resume by themselves', async () => {
    mount = mountCard(24);
    agent = await startAgent({ dataDir: join(mount, 'data'), extraTopLevelToml: 'storage.reserve_mb = 4', seed: ndjson([device('FULL-1')]) });
    const reserve = join(mount, 'data/reserve.bin');
    assert.equal(statSync(reserve).size, RESERVE_BYTES, 'the reserve file is made while there is room');
    assert.equal(statSync(reserve).mode & 0o777, 0o600);
    assert.equal((await storageOf(agent)).state, 'ok');

    const events: { state: string }[] = [];
    const stream = openEventStream(agent.httpsPort, (name, data) => name === 'storage_status' && events.push(data));
    try {
      fill(mount);
      // SQLite may still have room in its WAL for a write or two: write until the card refuses.
      let stored = await intervalOf(agent);
      let refused: { status: number; body: string } | undefined;
      for (let minutes = 20; minutes < 200 && !refused; minutes++) {
        const r = await postInterval(agent, minutes);
        if (r.status === 200) stored = minutes;
        else refused = r;
      }
      assert.ok(refused, 'a write on a full card is refused');
      assert.equal(refused.status, 507, refused.body);
      assert.match(refused.body, /^not stored: the data file system does not take writes \(full\): database or disk is full/);
      assert.equal(await intervalOf(agent), stored, 'the refused write changed nothing');
      assert.ok(!existsSync(reserve), 'the reserve file is given back at the first refused write');

      const list = await agent.get('/devices/discovered');
      assert.equal(list.status, 200, 'reads are served');
      assert.match(list.body, /FULL-1/);
      // With the reserve given back the card takes writes again: the guard sees it by itself.
      assert.ok(['full', 'ok', 'low'].includes((await storageOf(agent)).state));
      await waitForState(agent, ['ok', 'low']);
      assert.equal((await postInterval(agent, 300)).status, 200);
      assert.ok(events.some((e) => e.state === 'full'), `storage_status events: ${JSON.stringify(events)}`);
      assert.ok(events.some((e) => e.state === 'ok' || e.state === 'low'), `storage_status events: ${JSON.stringify(events)}`);

      // Full again, now without a reserve: refused until the space comes back, then by itself.
      fill(mount);
      let again: { status: number; body: string } | undefined;
      for (let minutes = 301; minutes < 500 && !again; minutes++) {
        const r = await postInterval(agent, minutes);
        if (r.status !== 200) again = r;
      }
      assert.equal(again?.status, 507, again?.body);
      const st = await storageOf(agent);
      assert.equal(st.state, 'full');
      assert.match(st.error ?? '', /POST \/settings: database or disk is full \(SQLITE_FULL\)/);
      assert.match((await agent.get('/devices/discovered')).body, /FULL-1/, 'reads are served while writes are refused');
      unfill(mount);
      await waitForState(agent, ['ok', 'low']);
      assert.equal((await postInterval(agent, 600)).status, 200);
      assert.equal(await intervalOf(agent), 600);
      assert.ok(agent.alive());
    } finally {
      stream.destroy();
    }
  });

  test('the agent starts on a full card without a reserve or a certificate: HTTPS and reads at once, writes 507, then resumes when space returns', async (t) => {
    await agent.stop({ keepDir: true });
    assert.ok(!existsSync(join(mount, 'data/reserve.bin')));
    rmSync(join(mount, 'data/tls'), { recursive: true }); // and no certificate yet either
    fill(mount);
    const t0 = Date.now();
    await agent.restart();
    const ms = Date.now() - t0;
    assert.ok(agent.alive());
    const st = await storageOf(agent);
    assert.equal(st.state, 'full', JSON.stringify(st));
    assert.match(agent.stdout(), /database opened for this process alone/);
    assert.match(agent.stdout(), /generated TLS certificate not stored \(the card takes no writes\): served from memory until the next start/);
    assert.equal((await agent.get('/devices/discovered')).status, 200);
    const r = await postInterval(agent, 700);
    assert.equal(r.status, 507, r.body);
    unfill(mount);
    await waitForState(agent, ['ok', 'low']);
    assert.equal((await postInterval(agent, 700)).status, 200);
    // Spawn to first 200 on a full card (docs/reliability.md); not a threshold here.
    t.diagnostic(`start on a full card: ${ms} ms`);
  });

  test('the agent starts on a full card holding its reserve: gives it back and runs normally', async () => {
    await agent.restart(); // room again: the reserve is made
    assert.ok(existsSync(join(mount, 'data/reserve.bin')));
    await agent.stop({ keepDir: true });
    fill(mount);
    await agent.restart();
    assert.match(agent.stdout(), /data file system full at start: the reserve file was given back/);
    assert.equal((await postInterval(agent, 800)).status, 200, 'writes go into the reserve given back');
    assert.notEqual((await storageOf(agent)).state, 'full');
    unfill(mount);
  });

  test('a card mounted read-only after a crash: reads served, writes 507 naming read_only, nothing crashes', async () => {
    await agent.stop({ keepDir: true, signal: 'SIGKILL' }); // as a power cut: the -wal and -shm stay
    execFileSync('mount', ['-o', 'remount,ro', mount]);
    try {
      await agent.restart();
      const st = await storageOf(agent);
      assert.equal(st.state, 'read_only', JSON.stringify(st));
      assert.match(st.error ?? '', /SQLITE_READONLY/);
      assert.equal((await agent.get('/devices/discovered')).status, 200);
      const r = await postInterval(agent, 900);
      assert.equal(r.status, 507, r.body);
      assert.match(r.body, /\(read_only\): attempt to write a readonly database/);
      assert.ok(agent.alive());
    } finally {
      await agent.stop({ keepDir: true });
      execFileSync('mount', ['-o', 'remount,rw', mount]);
    }
  });
});

describe('a nearly full data file system', { skip }, () => {
  test('below storage.reserve_mb: state low, an alert, and raw rows already rolled up are pruned to a day (their hours stay)', async () => {
    const mount = mountCard(24);
    const now = Date.now();
    const hourStart = now - (now % HOUR);
    // Three days of hourly raw readings of one printer, older than the current hour.
    const raw = Array.from({ length: 72 }, (_, i) => metrics('LOW-1', 'raw', hourStart - (i + 1) * HOUR + 60_000, { page_count: 10_000 - i }));
    const agent = await startAgent({
      dataDir: join(mount, 'data'),
      extraTopLevelToml: 'storage.reserve_mb = 64', // more than the whole card: low at once
      seed: ndjson([device('LOW-1', { is_saved: true }), ...raw]),
    });
    try {
      await waitForState(agent, ['low']);
      const deadline = Date.now() + 20_000;
      while (!/room made on a nearly full data file system/.test(agent.stdout()) && Date.now() < deadline) await sleep(200);
      assert.match(agent.stdout(), /data file system nearly full: pruning raw readings already rolled up/);
      assert.match(agent.stdout(), /room made on a nearly full data file system/);
      assert.ok(!existsSync(join(mount, 'data/reserve.bin')), 'no reserve file is made on a card already below the threshold');
    } finally {
      await agent.stop({ keepDir: true });
    }
    // Whole UTC days go (rollup/retention.ts): raw rows before the start of yesterday.
    const cutoff = dayStart(now - DAY);
    const pruned = raw.filter((m) => Date.parse(m.timestamp) < cutoff).length;
    assert.ok(pruned > 0 && pruned < raw.length);
    const db = new Database(join(mount, 'data/printbox.db'), { readonly: true });
    try {
      const count = (sql: string, ...p: number[]) => db.prepare(sql).pluck().get(...p) as number;
      assert.equal(count('SELECT count(*) FROM metrics_raw WHERE ts < ?', cutoff), 0, 'raw rows before yesterday are pruned');
      assert.equal(count('SELECT count(*) FROM metrics_raw'), raw.length - pruned, 'the rest stays');
      assert.equal(count('SELECT count(*) FROM metrics_hourly WHERE ts < ?', cutoff), pruned, "each pruned row's hour is in the hourly tier");
    } finally {
      db.close();
    }
  });
});

test('a write while another process holds the database (the CLI import) gets 503 with Retry-After, and changes nothing', async () => {
  const agent = await startAgent();
  const other = new Database(join(agent.dataDir, 'printbox.db'));
  try {
    const before = await intervalOf(agent);
    other.exec('BEGIN IMMEDIATE');
    const r = await postInterval(agent, before + 1);
    assert.equal(r.status, 503, r.body);
    assert.equal(r.headers['retry-after'], '5');
    assert.match(r.body, /^database busy \(another process is writing to it, such as an import\): try again: database is locked/);
    other.exec('COMMIT');
    assert.equal(await intervalOf(agent), before);
    assert.equal((await storageOf(agent)).state, 'ok', 'a busy database is not a storage failure');
    assert.equal((await postInterval(agent, before + 1)).status, 200);
  } finally {
    other.close();
    await agent.stop();
  }
});

const noBrowser = chromiumMissing;

test('the UI shows a banner while the card does not take writes, and takes it down when it does (real Chromium)', { skip: cannotMount || noBrowser }, async () => {
  const mount = mountCard(24);
  const agent = await startAgent({ dataDir: join(mount, 'data'), extraTopLevelToml: 'storage.reserve_mb = 4' });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ ignoreHTTPSErrors: true });
    await page.goto(`https://127.0.0.1:${agent.httpsPort}/`);
    await page.waitForSelector('#version:not(:empty)'); // the page has loaded its settings and opened /events
    assert.equal(await page.isHidden('#storage'), true, 'no banner while all is well');
    rmSync(join(mount, 'data/reserve.bin')); // so the card stays full until the filler goes
    fill(mount);
    let refused = false;
    for (let minutes = 20; minutes < 200 && !refused; minutes++) refused = (await postInterval(agent, minutes)).status === 507;
    assert.ok(refused);
    await page.waitForSelector('#storage:visible', { timeout: 10_000 });
    assert.match((await page.textContent('#storage')) ?? '', /The data card is full: changes cannot be saved.*SQLITE_FULL/);
    unfill(mount);
    await page.waitForSelector('#storage', { state: 'hidden', timeout: 40_000 });
  } finally {
    await browser.close();
    await agent.stop();
  }
});
