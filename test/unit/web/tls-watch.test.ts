// The agent's certificate watch (web/tls.ts watchPair): a pair renewed between the agent reading
// it and the watch starting is still picked up. On a first boot printbox-cert-address renews the
// certificate for the DHCP address while the agent starts; the boot test saw the agent
// serve the old certificate for good when the renewal fell in that window.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Logger } from '../../../src/log/logger.js';
import { loadPair, pairStamp, watchPair, type TlsPaths } from '../../../src/web/tls.js';
import { until } from '../../kit/until.js';

const dir = mkdtempSync(join(tmpdir(), 'printbox-tls-watch-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const paths = { cert: join(dir, 'agent.crt'), key: join(dir, 'agent.key') } as TlsPaths;
const quiet = { info() {}, warn() {} } as unknown as Logger;
// As the cert script does: a new file renamed into place (a new inode).
const replace = (file: string, text: string) => {
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
};

test('a pair renewed after it was read and before the watch began is loaded when the watch begins', async () => {
  replace(paths.key, 'key A');
  replace(paths.cert, 'cert A');
  const since = pairStamp(paths);
  assert.equal(loadPair(paths).cert.toString(), 'cert A', 'what the agent serves');
  replace(paths.key, 'key B, the renewal');
  replace(paths.cert, 'cert B, the renewal');
  const seen: string[] = [];
  const stop = watchPair(paths, (pair) => seen.push(`${pair.cert}|${pair.key}`), quiet, since);
  try {
    await until('the renewed pair', () => seen.length > 0, 10_000);
    assert.deepEqual(seen, ['cert B, the renewal|key B, the renewal']);
    // And a later renewal as before, through the directory watch.
    replace(paths.key, 'key C');
    replace(paths.cert, 'cert C');
    await until('the next renewal', () => seen.includes('cert C|key C'), 10_000);
  } finally {
    stop();
  }
});

test('pairStamp: missing while either file is absent', () => {
  assert.equal(pairStamp({ cert: join(dir, 'none.crt'), key: paths.key } as TlsPaths), 'missing');
});
