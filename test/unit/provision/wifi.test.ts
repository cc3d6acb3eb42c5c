// Wi-Fi from printbox.toml ([network] wifi_ssid, wifi_psk, wifi_country; the Zero 2 W
// has no Ethernet): `printbox-agent provision` against a directory standing in for the boot
// partition and another for /etc (with the wpa_supplicant directory the Pi image's wpasupplicant
// package makes). What a Zero 2 W then does with the files (wpa_supplicant joining, DHCP) cannot be
// shown here: the files, their modes, the key's removal from printbox.toml, the services listed
// for printbox-system-reload, and that bad input writes nothing are.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { runCli, writeConfig, type TestConfig } from '../../kit/agent.js';
import { wpaKey } from '../../../src/provision/wifi.js';

const WPA = 'wpa_supplicant/wpa_supplicant-wlan0.conf';
const NET = 'systemd/network/30-printbox-wifi.network';
const PASSPHRASE = 'correct horse "battery" #staple';
const SSID = 'Büro Wi-Fi';
const FILE = `# printbox.toml
[admin]
user = "tech"
password = "provisioned secret"

[network]
wifi_ssid = "${SSID}"
wifi_psk = ${JSON.stringify(PASSPHRASE)}
wifi_country = "de"

[polling]
interval_minutes = 30
`;

test('the WPA key: IEEE 802.11i test vector (passphrase "password", SSID "IEEE")', () => {
  assert.equal(wpaKey('password', 'IEEE'), 'f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e');
});

describe('Wi-Fi from printbox.toml', () => {
  let cfg: TestConfig;
  let boot: string;
  let etc: string;
  let run: string;
  const provision = () => runCli(['provision', '--boot', boot, '--etc', etc, '--run', run], { configPath: cfg.configPath });
  const toml = () => join(boot, 'printbox.toml');
  /** Every file under /etc with its mode and content: what "nothing written" is compared on. */
  const etcTree = () => {
    const out: Record<string, string> = {};
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else out[p.slice(etc.length)] = `${(statSync(p).mode & 0o777).toString(8)} ${readFileSync(p, 'utf8')}`;
      }
    };
    walk(etc);
    return out;
  };
  /** The services listed for printbox-system-reload.service, taken as it takes them. */
  const takeChanged = () => {
    const f = join(run, 'system-changed');
    const list = existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean).sort() : [];
    rmSync(f, { force: true });
    return list;
  };

  before(async () => {
    cfg = await writeConfig({ authMode: 'password', allowLocalAdmin: false });
    boot = join(cfg.dir, 'boot');
    etc = join(cfg.dir, 'etc');
    run = join(cfg.dir, 'run');
    mkdirSync(boot);
    mkdirSync(join(etc, 'wpa_supplicant'), { recursive: true });
  });

  test('bad Wi-Fi settings: refused with the reason, nothing written (not the account either)', async () => {
    const tooLong = 'é'.repeat(17); // 17 characters, 34 bytes
    for (const [text, reason] of [
      [FILE.replace(`wifi_ssid = "${SSID}"`, `wifi_ssid = "${tooLong}"`), /network\.wifi_ssid must be 1 to 32 bytes \(it is 34 in UTF-8\)/],
      [FILE.replace(`wifi_ssid = "${SSID}"`, 'wifi_ssid = ""'), /network\.wifi_ssid must be a non-empty string/],
      [FILE.replace(`wifi_ssid = "${SSID}"\n`, ''), /network\.wifi_ssid is required/],
      [FILE.replace(/^wifi_psk = .*$/m, 'wifi_psk = "seven77"'), /network\.wifi_psk must be the passphrase \(8 to 63 printable ASCII characters\) or the key \(64 hex digits\)/],
      [FILE.replace(/^wifi_psk = .*$/m, `wifi_psk = "${'x'.repeat(64)}"`), /network\.wifi_psk must be the passphrase/],
      [FILE.replace(/^wifi_psk = .*$/m, 'wifi_psk = "pässwort1234"'), /network\.wifi_psk must be the passphrase/],
      [FILE.replace(/^wifi_psk = .*$/m, 'wifi_psk = "tab\\there12"'), /network\.wifi_psk must be the passphrase/],
      [FILE.replace(/^wifi_psk = .*$/m, 'wifi_psk = """\nmultiline-passphrase"""'), /network\.wifi_psk must be written on one line of its own in the \[network\] table/],
      [FILE.replace('wifi_country = "de"', 'wifi_country = "DEU"'), /network\.wifi_country must be a two-letter country code/],
      [FILE.replace('wifi_country = "de"', 'wifi_country = "00"'), /network\.wifi_country must be a two-letter country code/],
      [FILE.replace('wifi_country = "de"\n', ''), /network\.wifi_country is required with wifi_ssid/],
      [FILE.replace(/^wifi_psk = .*$/m, ''), /network\.wifi_psk is required: no key is stored for this network yet/],
      [FILE.replace('[network]', '[network]\nwifi_channel = 6'), /unknown key network\.wifi_channel/],
    ] as const) {
      const etcBefore = etcTree();
      writeFileSync(toml(), text);
      const r = await provision();
      assert.equal(r.code, 0, 'the box boots anyway');
      assert.match(readFileSync(join(boot, 'printbox-toml.error'), 'utf8'), reason);
      assert.match(r.stderr, reason, 'and the journal says so');
      assert.equal(readFileSync(toml(), 'utf8'), text, 'the file is left as it was');
      assert.deepEqual(etcTree(), etcBefore, 'nothing written under /etc');
      assert.deepEqual(takeChanged(), [], 'no service to restart');
      assert.ok(existsSync(join(run, 'code')), 'no account made: the setup code stays');
    }
  });

  test('an image without Wi-Fi (no wpa_supplicant directory) refuses the keys', async () => {
    rmSync(join(etc, 'wpa_supplicant'), { recursive: true });
    try {
      writeFileSync(toml(), FILE);
      const r = await provision();
      assert.equal(r.code, 0);
      assert.match(readFileSync(join(boot, 'printbox-toml.error'), 'utf8'), /network\.wifi_ssid: this image has no Wi-Fi/);
      assert.ok(!existsSync(join(etc, 'wpa_supplicant')) && !existsSync(join(etc, NET)));
      assert.ok(existsSync(join(run, 'code')), 'no account made');
    } finally {
      mkdirSync(join(etc, 'wpa_supplicant'));
    }
  });

  test('a good file: wpa_supplicant (0600, the derived key, the country) and networkd files; the key line removed', async () => {
    writeFileSync(toml(), FILE);
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /printbox\.toml applied \(account tech; password line removed; Wi-Fi key stored; wifi_psk line removed\)/);
    assert.match(r.stdout, /Wi-Fi: network "Büro Wi-Fi", country DE/);

    const kept = readFileSync(toml(), 'utf8');
    assert.equal(kept, FILE.replace(/^password = .*\n/m, '').replace(/^wifi_psk = .*\n/m, ''), 'every other line kept as written');
    assert.ok(!kept.includes('battery'), 'the passphrase is off the card');
    assert.ok(!existsSync(join(boot, 'printbox-toml.error')));
    assert.ok(!readdirSync(boot).some((f) => f.endsWith('.tmp')), 'no temporary file left on the boot partition');

    const conf = readFileSync(join(etc, WPA), 'utf8');
    assert.equal(statSync(join(etc, WPA)).mode & 0o777, 0o600, 'the key file is root-only');
    assert.match(conf, /^country=DE$/m);
    assert.match(conf, new RegExp(`^\\tssid=${Buffer.from(SSID).toString('hex')}$`, 'm'), 'the SSID as hex bytes');
    assert.match(conf, new RegExp(`^\\tpsk=${wpaKey(PASSPHRASE, SSID)}$`, 'm'), 'the key derived as wpa_passphrase does');
    assert.match(conf, /^\tkey_mgmt=WPA-PSK WPA-PSK-SHA256$/m);
    assert.ok(!conf.includes('battery'), 'the passphrase itself is stored nowhere');
    assert.ok(!readdirSync(join(etc, 'wpa_supplicant')).some((f) => f.startsWith('.')), 'no temporary file left');

    const net = readFileSync(join(etc, NET), 'utf8');
    assert.equal(statSync(join(etc, NET)).mode & 0o777, 0o644);
    assert.match(net, /^\[Match\]\nType=wlan$/m);
    assert.match(net, /^DHCP=yes$/m);
    assert.deepEqual(takeChanged(), ['systemd-networkd.service', 'wpa_supplicant@wlan0.service']);
  });

  test('again at the next boot: unchanged; edited without the key line: the stored key is kept', async () => {
    const before = etcTree();
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /printbox\.toml unchanged since it was applied/);
    assert.deepEqual(etcTree(), before);

    // The technician changes another setting: the file has no key line any more.
    writeFileSync(toml(), readFileSync(toml(), 'utf8').replace('interval_minutes = 30', 'interval_minutes = 20'));
    const r2 = await provision();
    assert.equal(r2.code, 0, r2.stderr);
    assert.match(r2.stdout, /printbox\.toml applied$/m);
    assert.deepEqual(etcTree(), before, 'the same files: the key stored at the first boot stays');
    assert.deepEqual(takeChanged(), [], 'nothing for wpa_supplicant or networkd to read again');

    // Another country for the same network, still without the key line: rewritten with the same key.
    writeFileSync(toml(), readFileSync(toml(), 'utf8').replace('wifi_country = "de"', 'wifi_country = "AT"'));
    assert.equal((await provision()).code, 0);
    const conf = readFileSync(join(etc, WPA), 'utf8');
    assert.match(conf, /^country=AT$/m);
    assert.match(conf, new RegExp(`^\\tpsk=${wpaKey(PASSPHRASE, SSID)}$`, 'm'));
    assert.deepEqual(takeChanged(), ['wpa_supplicant@wlan0.service']);
  });

  test('the same file with its key written again: the same files, nothing to restart (idempotent)', async () => {
    const before = etcTree();
    writeFileSync(toml(), FILE.replace(/^\[admin\]\n.*\n.*\n\n/m, '').replace('wifi_country = "de"', 'wifi_country = "AT"'));
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Wi-Fi key stored; wifi_psk line removed/);
    assert.deepEqual(etcTree(), before);
    assert.deepEqual(takeChanged(), []);
    assert.doesNotMatch(readFileSync(toml(), 'utf8'), /wifi_psk/);
  });

  test('another network: needs its key; the key as 64 hex digits is used as it is', async () => {
    const hexKey = 'A'.repeat(32) + '0123456789abcdef'.repeat(2);
    writeFileSync(toml(), `[network]\nwifi_ssid = "Lager"\nwifi_psk = "${hexKey}"\nwifi_country = "AT"\n`);
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    const conf = readFileSync(join(etc, WPA), 'utf8');
    assert.match(conf, new RegExp(`^\\tssid=${Buffer.from('Lager').toString('hex')}$`, 'm'));
    assert.match(conf, new RegExp(`^\\tpsk=${hexKey.toLowerCase()}$`, 'm'));
    assert.equal(readFileSync(toml(), 'utf8'), '[network]\nwifi_ssid = "Lager"\nwifi_country = "AT"\n');
    assert.deepEqual(takeChanged(), ['wpa_supplicant@wlan0.service']);
  });

  test('the Wi-Fi keys removed from the file: both files removed, wpa_supplicant told', async () => {
    writeFileSync(toml(), '[network]\naddress = "198.51.100.20/24"\n');
    const r = await provision();
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(join(etc, WPA)) && !existsSync(join(etc, NET)));
    assert.ok(existsSync(join(etc, 'systemd/network/10-printbox-provisioned.network')), 'a static address alone is still the wired one');
    assert.deepEqual(takeChanged(), ['systemd-networkd.service', 'wpa_supplicant@wlan0.service']);
  });
});
