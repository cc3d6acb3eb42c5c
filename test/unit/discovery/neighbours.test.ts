// The neighbour table (discovery/neighbours.ts) is read once for many lookups, as a large site's
// polling round makes them, but an address it lacks is looked up in a fresh read (a reply just
// received leaves an entry the last read did not have), and an old table is read again. The
// clock is the test's.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { neighbourMac } from '../../../src/discovery/neighbours.js';

const HEAD = 'IP address       HW type     Flags       HW address            Mask     Device';
const entry = (ip: string, mac: string, flags = '0x2') => `${ip}     0x1         ${flags}         ${mac}     *        eth0`;

test('one read serves many lookups; a missing address and an old table are read again', () => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-arp-'));
  const file = join(dir, 'arp');
  try {
    writeFileSync(file, [HEAD, entry('10.0.0.1', '00:17:C8:00:00:01'), entry('10.0.0.2', '00:17:c8:00:00:02', '0x0')].join('\n') + '\n');
    const t = 1_000_000;
    assert.equal(neighbourMac('10.0.0.1', file, t), '00:17:c8:00:00:01');
    assert.equal(neighbourMac('10.0.0.2', file, t), undefined, 'an incomplete entry is no address');
    // The printer's MAC changes in the file: within the table's age the last read answers ...
    writeFileSync(file, [HEAD, entry('10.0.0.1', '00:17:c8:00:00:99'), entry('10.0.0.3', '00:17:c8:00:00:03')].join('\n') + '\n');
    assert.equal(neighbourMac('10.0.0.1', file, t + 500), '00:17:c8:00:00:01');
    // ... an address the last read lacked is read fresh at once ...
    assert.equal(neighbourMac('10.0.0.3', file, t + 500), '00:17:c8:00:00:03');
    assert.equal(neighbourMac('10.0.0.1', file, t + 500), '00:17:c8:00:00:99', 'that fresh read serves the next lookups');
    // ... and past a second the table is read again.
    writeFileSync(file, [HEAD, entry('10.0.0.1', '00:17:c8:00:00:aa')].join('\n') + '\n');
    assert.equal(neighbourMac('10.0.0.1', file, t + 1600), '00:17:c8:00:00:aa');
    // No table any more (no /proc): once the last read is old, no address.
    rmSync(file);
    assert.equal(neighbourMac('10.0.0.1', file, t + 3000), undefined);
    assert.equal(neighbourMac('10.0.0.1', file, t + 3100), undefined, 'nothing kept from before');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
