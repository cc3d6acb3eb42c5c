import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig, defaultConfig, ConfigError } from '../../../src/config/config.js';

test('an empty file gives the documented defaults, paths resolved against the file', () => {
  const cfg = parseConfig('', '/etc/printbox');
  const d = defaultConfig();
  assert.equal(cfg.data_dir, '/etc/printbox/data');
  assert.deepEqual(cfg.web, d.web);
  assert.deepEqual(cfg.discovery, { subnet_scan: false, auto_discover: false, allowed_ranges: [], mdns_enabled: false, wsd_enabled: false, ssdp_enabled: false });
  assert.deepEqual(cfg.web.auth.trusted_proxies, ['127.0.0.0/8', '::1/128']);
});

test('values override defaults', () => {
  const cfg = parseConfig(
    'data_dir = "/var/lib/printbox"\n[web]\nhttps_port = 9443\nhttp_port = 0\n[web.auth]\nmode = "server"\ntrusted_proxies = ["198.51.100.3/32", "::/0"]\n[server]\nurl = "https://central.invalid"\n[discovery]\nallowed_ranges = ["127.0.0.0/8"]\n',
    '/x',
  );
  assert.equal(cfg.data_dir, '/var/lib/printbox');
  assert.equal(cfg.web.https_port, 9443);
  assert.equal(cfg.web.http_port, 0);
  assert.equal(cfg.web.auth.mode, 'server');
  assert.deepEqual(cfg.web.auth.trusted_proxies, ['198.51.100.3/32', '::/0']);
  assert.deepEqual(cfg.discovery.allowed_ranges, ['127.0.0.0/8']);
});

test('unknown keys and wrong types name the key', () => {
  const cases: [string, RegExp][] = [
    ['colour = 1', /unknown config key colour/],
    ['[web]\nhttps_prot = 1', /unknown config key web\.https_prot/],
    ['[web]\nhttps_port = "8443"', /web\.https_port/],
    ['[web]\nhttp_port = 70000', /web\.http_port/],
    ['[web.auth]\nmode = "open"', /web\.auth\.mode/],
    ['[web.auth]\nallow_local_admin = "yes"', /web\.auth\.allow_local_admin/],
    ['web = 3', /web: expected a table/],
    ['[server]\nurl = "ftp://x"', /server\.url/],
    ['[web.tls]\ncert_file = "a.crt"', /cert_file and web\.tls\.key_file/],
    ['[discovery]\nallowed_ranges = ["nope"]', /discovery\.allowed_ranges/],
    ['data_dir = ', /not valid TOML/],
    ['[web.auth]\nmode = "server"', /server\.url: required when web\.auth\.mode is "server"/],
    ['[web.auth]\ntrusted_proxies = ["127.0.0.1/33"]', /web\.auth\.trusted_proxies: 127\.0\.0\.1\/33/],
    ['[web.auth]\ntrusted_proxies = ["lan"]', /web\.auth\.trusted_proxies: lan/],
    ['[web.auth]\ntrusted_proxies = "127.0.0.1"', /web\.auth\.trusted_proxies: expected a list/],
  ];
  for (const [text, re] of cases) {
    assert.throws(() => parseConfig(text, '/x'), (err: unknown) => err instanceof ConfigError && re.test((err as Error).message), text);
  }
});
