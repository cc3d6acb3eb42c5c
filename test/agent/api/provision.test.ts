// First-boot provisioning (docs/decisions/0019-provisioning.md): `printbox-agent provision` against
// a directory standing in for the FAT boot partition and another for /etc, then the real agent
// started on the provisioned database. The boot test does the same on the appliance VM.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, startAgent, writeConfig, expectJson, type Agent, type TestConfig } from '../../kit/agent.js';

const GOOD = `# printbox.toml
[admin]
user = "tech"
password = "provisioned secret"

[server]
url = "https://127.0.0.1:9/"
enrollment_token = "join-123"

[discovery]
ranges = ["198.51.100.0/28", "203.0.113.5"]

[snmp]
communities = ["public", "site-ro"]

[polling]
interval_minutes = 30

[network]
address = "198.51.100.20/24"
gateway = "198.51.100.1"
dns = ["198.51.100.1"]

[time]
servers = ["ntp.example.com", "198.51.100.1"]
`;

describe('provision from the boot partition', () => {
  let cfg: TestConfig;
  let boot: string;
  let etc: string;
  let run: string;
  let agent: Agent | undefined;
  const provision = () => runCli(['provision', '--boot', boot, '--etc', etc, '--run', run], { configPath: cfg.configPath });

  before(async () => {
    cfg = await writeConfig({ authMode: 'password', allowLocalAdmin: false });
    boot = join(cfg.dir, 'boot');
    etc = join(cfg.dir, 'etc');
    run = join(cfg.dir, 'run');
    mkdirSync(boot);
  });
  after(() => agent?.stop());

  test('without a file and without an account: the setup code goes to the boot partition and the banner', async () => {
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    const code = readFileSync(join(run, 'code'), 'utf8').trim();
    assert.equal(statSync(join(run, 'code')).mode & 0o777, 0o600);
    assert.match(readFileSync(join(boot, 'printbox-setup.txt'), 'utf8'), new RegExp(`PrintBox setup code: ${code}`));
    assert.equal(readFileSync(join(cfg.dataDir, 'setup-code'), 'utf8').trim(), code);
    const again = await provision();
    assert.equal(again.code, 0);
    assert.equal(readFileSync(join(run, 'code'), 'utf8').trim(), code, 'the same code on every boot until used');
  });

  test('a bad file is applied not at all; the reason is written beside it', async () => {
    for (const [text, reason] of [
      [GOOD.replace('interval_minutes = 30', 'interval_minutes = 0'), /polling\.interval_minutes must be an integer from 1 to 1440/],
      [GOOD.replace('"203.0.113.5"', '"300.1.1.1"'), /discovery\.ranges/],
      [GOOD.replace('password = "provisioned secret"', 'password = "short"'), /admin\.password: password must have at least 8 characters/],
      [GOOD.replace('[time]', '[time]\ncolour = 1'), /unknown key time\.colour/],
      [GOOD.replace('198.51.100.20/24', '198.51.100.20'), /network\.address/],
      [GOOD + '\n[[', /not valid TOML/],
    ] as const) {
      writeFileSync(join(boot, 'printbox.toml'), text);
      const r = await provision();
      assert.equal(r.code, 0, 'the box boots anyway');
      const error = readFileSync(join(boot, 'printbox-toml.error'), 'utf8');
      assert.match(error, reason);
      assert.match(r.stderr, reason, 'and the journal says so');
      assert.equal(readFileSync(join(boot, 'printbox.toml'), 'utf8'), text, 'the file is left as it was');
      assert.ok(!existsSync(join(etc, 'systemd/network/10-printbox-provisioned.network')));
    }
    const exported = await runCli(['export'], { configPath: cfg.configPath });
    assert.equal(exported.code, 0);
    assert.ok(existsSync(join(run, 'code')), 'still no account: the setup code stays');
  });

  test('a good file: account, settings and system files applied; the password line removed', async () => {
    writeFileSync(join(boot, 'printbox.toml'), GOOD);
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /printbox\.toml applied \(account tech; password line removed\)/);
    const kept = readFileSync(join(boot, 'printbox.toml'), 'utf8');
    assert.doesNotMatch(kept, /provisioned secret/);
    assert.equal(kept, GOOD.replace('password = "provisioned secret"\n', ''), 'every other line kept as written');
    assert.ok(!existsSync(join(boot, 'printbox-toml.error')), 'the old error file is gone');
    assert.ok(!existsSync(join(boot, 'printbox-setup.txt')) && !existsSync(join(run, 'code')), 'no setup code once an account exists');
    assert.equal(
      readFileSync(join(etc, 'systemd/network/10-printbox-provisioned.network'), 'utf8').split('\n').filter((l) => /^(Address|Gateway|DNS)=/.test(l)).join(' '),
      'Address=198.51.100.20/24 Gateway=198.51.100.1 DNS=198.51.100.1',
    );
    assert.match(readFileSync(join(etc, 'systemd/timesyncd.conf.d/60-printbox-provisioned.conf'), 'utf8'), /^NTP=ntp\.example\.com 198\.51\.100\.1$/m);

    agent = await startAgent({ config: cfg });
    const login = await agent.request('/api/v1/auth/login', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'tech', password: 'provisioned secret' }),
    });
    assert.equal(login.status, 200, login.body);
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    const s = expectJson(await agent.request('/settings', { headers: { Cookie: cookie, Accept: 'application/json' } })) as {
      discovery: { subnet_scan: boolean; manual_ranges: boolean; ranges_text: string };
      snmp: { communities: string[] };
      collection: { interval_minutes: number };
      server: { url: string; enrollment_token: string; link: { state: string } };
    };
    assert.deepEqual(s.discovery.subnet_scan, false, 'provisioned ranges replace the subnet scan');
    assert.equal(s.discovery.manual_ranges, true);
    assert.equal(s.discovery.ranges_text, '198.51.100.0/28\n203.0.113.5');
    assert.deepEqual(s.snmp.communities, ['public', 'site-ro']);
    assert.equal(s.collection.interval_minutes, 30);
    // A loopback port nobody listens on: the link tries to enroll and says it cannot.
    assert.equal(s.server.url, 'https://127.0.0.1:9/');
    assert.equal(s.server.enrollment_token, '', 'the token is stored, never shown');
    assert.ok(['registering', 'rejected'].includes(s.server.link.state), s.server.link.state);
    await agent.stop({ keepDir: true });
    agent = undefined;
  });

  test('an unchanged file is not applied again (settings changed since then are kept)', async () => {
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /printbox\.toml unchanged since it was applied/);
  });

  test('sections removed from the file remove what they wrote', async () => {
    writeFileSync(join(boot, 'printbox.toml'), '[polling]\ninterval_minutes = 20\n');
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(join(etc, 'systemd/network/10-printbox-provisioned.network')), 'back to DHCP');
    assert.ok(!existsSync(join(etc, 'systemd/timesyncd.conf.d/60-printbox-provisioned.conf')));
  });
});

test('the image ships an example whose every commented line, uncommented, is a valid file', async () => {
  const { readFileSync } = await import('node:fs');
  const { parseProvision } = await import('../../../src/provision/file.js');
  const { defaultSettings } = await import('../../../src/settings/settings.js');
  const { repoRoot } = await import('../../kit/agent.js');
  const example = readFileSync(join(repoRoot, 'rootfs-overlay/boot/firmware/printbox.toml.example'), 'utf8');
  const uncommented = example.split('\n').map((l) => (/^#(\[|[a-z_]+ = )/.test(l) ? l.slice(1) : l)).join('\n');
  const p = parseProvision(uncommented, defaultSettings({ subnet_scan: true, auto_discover: true, allowed_ranges: [] }));
  assert.equal(p.admin?.user, 'admin');
  assert.deepEqual(p.timeServers, ['ntp.example.com']);
  assert.equal(p.network?.address, '192.0.2.50/24');
  assert.deepEqual(p.wifi, { ssid: 'Site Wi-Fi', psk: 'at least 8 characters', country: 'DE' });
});
