// What provisioning did, said: `printbox-agent provision` records its outcome in the
// data directory; the real agent shows it read-only in GET /settings, and a run while the agent
// serves (a boot partition that appeared late) reaches the running agent: the account at once,
// the settings when the record changes. Waits poll the agent's answer, never a fixed time.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { repoRoot, runCli, startAgent, writeConfig, expectJson, type Agent, type TestConfig } from '../../kit/agent.js';

interface Shown {
  collection: { interval_minutes: number };
  provisioning: { state: string; message: string; checked_at: string; applied_at: string | null } | null;
}

const FILE = `[admin]
user = "latetech"
password = "late partition secret"

[polling]
interval_minutes = 45
`;

/** Polls the agent's GET /settings until `ok` holds (20 s at most): it sees the record when it changes. */
async function untilShown(agent: Agent, ok: (s: Shown) => boolean, what: string): Promise<Shown> {
  const t0 = Date.now();
  let s = expectJson(await agent.get('/settings')) as Shown;
  while (!ok(s)) {
    if (Date.now() - t0 > 20_000) assert.fail(`${what}: still ${JSON.stringify({ collection: s.collection, provisioning: s.provisioning })}`);
    await new Promise((r) => setTimeout(r, 100));
    s = expectJson(await agent.get('/settings')) as Shown;
  }
  return s;
}

describe('provisioning state, shown by a running agent', () => {
  let cfg: TestConfig;
  let boot: string;
  let run: string;
  let agent: Agent;
  const provision = () =>
    runCli(['provision', '--boot', boot, '--etc', join(cfg.dir, 'etc'), '--run', run], { configPath: cfg.configPath });
  const settings = async () => expectJson(await agent.get('/settings')) as Shown;
  const until = (ok: (s: Shown) => boolean, what: string) => untilShown(agent, ok, what);

  before(async () => {
    // Password mode with the loopback admin: GET /settings from the test needs no account.
    cfg = await writeConfig({ authMode: 'password', allowLocalAdmin: true });
    boot = join(cfg.dir, 'boot'); // not made yet: no boot partition
    run = join(cfg.dir, 'run');
  });
  after(() => agent?.stop());

  test('no boot partition: the record says so, beside the setup code', async () => {
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(run, 'provisioning'), 'utf8'), 'no boot partition found\n', 'the console banner line');
    assert.match(readFileSync(join(run, 'code'), 'utf8'), /^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}\n$/);
    assert.equal(statSync(join(cfg.dataDir, 'provision-state.json')).mode & 0o777, 0o640);
    agent = await startAgent({ config: cfg });
    const s = await settings();
    assert.equal(s.provisioning?.state, 'no-boot-partition');
    assert.equal(s.provisioning?.message, 'no boot partition found');
    assert.equal(s.provisioning?.applied_at, null);
    assert.equal(s.collection.interval_minutes, 15);
  });

  test('the partition appears while the agent serves: applied, and the agent takes the account and settings', async () => {
    mkdirSync(boot);
    writeFileSync(join(boot, 'printbox.toml'), FILE);
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    const s = await until((s) => s.collection.interval_minutes === 45, 'the provisioned polling interval in the running agent');
    assert.equal(s.provisioning?.state, 'applied');
    assert.match(s.provisioning!.message, /^printbox\.toml applied at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(s.provisioning!.message, `printbox.toml applied at ${s.provisioning!.applied_at}`);
    assert.equal(readFileSync(join(run, 'provisioning'), 'utf8'), s.provisioning!.message + '\n');
    assert.ok(!readFileSync(join(boot, 'printbox.toml'), 'utf8').includes('late partition secret'));
    const login = await agent.request('/api/v1/auth/login', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'latetech', password: 'late partition secret' }),
    });
    assert.equal(login.status, 200, `the provisioned account signs in on the agent that was running: ${login.body}`);
  });

  test('a POST that sends the provisioning section changes nothing of it', async () => {
    const before = await settings();
    for (const provisioning of [{ state: 'refused', message: 'refused: forged', applied_at: null }, 'applied', null]) {
      const r = await agent.request('/settings', {
        method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ provisioning, collection: { interval_minutes: 50 } }),
      });
      const answered = expectJson(r) as Shown;
      assert.deepEqual(answered.provisioning, before.provisioning, 'the answer shows the record as it was');
      assert.equal(answered.collection.interval_minutes, 50, 'the rest of the body applies');
    }
    assert.deepEqual((await settings()).provisioning, before.provisioning);
    const record = JSON.parse(readFileSync(join(cfg.dataDir, 'provision-state.json'), 'utf8')) as { state: string };
    assert.equal(record.state, 'applied', 'the file is untouched');
  });

  test('the same file at the next run: unchanged since it was applied, settings changed since kept', async () => {
    const applied = (await settings()).provisioning!.applied_at!;
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    const s = await until((s) => s.provisioning?.state === 'unchanged', 'the unchanged record');
    assert.equal(s.provisioning!.message, `printbox.toml unchanged since ${applied}`);
    assert.equal(s.provisioning!.applied_at, applied);
    assert.equal(s.collection.interval_minutes, 50, 'not applied again over what was set since');
  });

  test("the boot's check without Node: an unchanged file is skipped and recorded as unchanged; anything else runs the command", () => {
    const check = () =>
      spawnSync(join(repoRoot, 'rootfs-overlay/usr/libexec/printbox/provision-unchanged'), [], {
        encoding: 'utf8',
        env: { ...process.env, PRINTBOX_BOOT: boot, PRINTBOX_DATA: cfg.dataDir, PRINTBOX_RUN: run, PRINTBOX_AS: '' },
      });
    const stateFile = join(cfg.dataDir, 'provision-state.json');
    const before = JSON.parse(readFileSync(stateFile, 'utf8')) as { applied_at: string; sha256: string; checked_at: string };
    const skipped = check();
    assert.equal(skipped.status, 1, `skip (ExecCondition exit 1): ${skipped.stdout}${skipped.stderr}`);
    const after = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, string>;
    assert.deepEqual(
      { ...after, checked_at: undefined },
      { state: 'unchanged', message: `printbox.toml unchanged since ${before.applied_at}`, applied_at: before.applied_at, sha256: before.sha256, checked_at: undefined },
    );
    assert.ok(after.checked_at > before.checked_at, `${after.checked_at} after ${before.checked_at}`);
    assert.equal(statSync(stateFile).mode & 0o777, 0o640);
    assert.equal(readFileSync(join(run, 'provisioning'), 'utf8'), `printbox.toml unchanged since ${before.applied_at}\n`);

    // A setup code waiting for its account: the command must run (it writes the code to /run).
    writeFileSync(join(cfg.dataDir, 'setup-code'), 'AAAA-BBBB-CCCC\n');
    assert.equal(check().status, 0, 'a pending setup code runs the command');
    rmSync(join(cfg.dataDir, 'setup-code'));
    // Another file: the command must run; the record is left to it.
    const text = readFileSync(join(boot, 'printbox.toml'), 'utf8');
    writeFileSync(join(boot, 'printbox.toml'), text + '\n# edited\n');
    assert.equal(check().status, 0, 'a changed file runs the command');
    writeFileSync(join(boot, 'printbox.toml'), text);
    assert.equal(check().status, 1, 'the same bytes again: skipped');
  });

  test('a broken file: refused with the reason; nothing of it applied', async () => {
    writeFileSync(join(boot, 'printbox.toml'), '[polling]\ninterval_minutes = 0\n');
    const r = await provision();
    assert.equal(r.code, 0, 'the box boots anyway');
    const s = await until((s) => s.provisioning?.state === 'refused', 'the refused record');
    assert.equal(s.provisioning!.message, 'refused: polling.interval_minutes must be an integer from 1 to 1440');
    assert.equal(s.provisioning!.applied_at, null);
    assert.equal(s.collection.interval_minutes, 50);
  });

  test('a partition without printbox.toml: said so', async () => {
    rmSync(join(boot, 'printbox.toml'));
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    const s = await until((s) => s.provisioning?.state === 'no-file', 'the no-file record');
    assert.equal(s.provisioning!.message, 'no printbox.toml on the boot partition');
  });
});

// A first boot: printbox-provision.service and the agent start at once (neither waits for the
// other), on a data directory with no database yet. Real processes, a real file.
test('a first boot: the agent and provisioning start together; the account, the settings and the time servers all arrive', async () => {
  const cfg = await writeConfig({ authMode: 'password', allowLocalAdmin: true });
  const boot = join(cfg.dir, 'boot');
  const run = join(cfg.dir, 'run');
  const etc = join(cfg.dir, 'etc');
  mkdirSync(boot);
  writeFileSync(join(boot, 'printbox.toml'), `${FILE}\n[time]\nservers = ["ntp.example.com"]\n`);
  let agent: Agent | undefined;
  try {
    const [r, started] = await Promise.all([
      runCli(['provision', '--boot', boot, '--etc', etc, '--run', run], { configPath: cfg.configPath }),
      startAgent({ config: cfg }),
    ]);
    agent = started;
    assert.equal(r.code, 0, r.stderr);
    // The settings reach the agent when the record changes (which may be after its start).
    const s = await untilShown(agent, (s) => s.collection.interval_minutes === 45, 'the provisioned polling interval');
    assert.equal(s.provisioning?.state, 'applied');
    const login = await agent.request('/api/v1/auth/login', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'latetech', password: 'late partition secret' }),
    });
    assert.equal(login.status, 200, `the provisioned account signs in: ${login.body}`);
    // The agent may have made a setup code before the account came: none is left behind.
    assert.ok(!existsSync(join(cfg.dataDir, 'setup-code')), 'no setup code once the account exists');
    assert.ok(!existsSync(join(run, 'code')), 'no setup code for the banner');
    // timesyncd does not wait for provisioning either: it is told to read its file again.
    assert.equal(readFileSync(join(run, 'system-changed'), 'utf8'), 'systemd-timesyncd.service\n');
    assert.match(readFileSync(join(etc, 'systemd/timesyncd.conf.d/60-printbox-provisioned.conf'), 'utf8'), /^NTP=ntp\.example\.com$/m);
  } finally {
    await agent?.stop();
  }
});
