// Identity as discovery finds it: every recording read over real UDP from snmpsim with the vendor
// read plan, so an identity that needs a vendor OID (a UTAX serial in Kyocera's MIB, a Zebra
// printer's serial behind its print server) is shown to be fetched, not only parsed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ensureSnmpsim } from '../../kit/snmpsim.js';
import { identityOverUdp } from '../../kit/identity.js';

const skip = ensureSnmpsim();
if (skip) console.log(`# identity over UDP skipped: ${skip}`);

test('manufacturer, model and serial of every recording, read as discovery reads it', { skip: skip ?? false }, async () => {
  const rows = await identityOverUdp();
  assert.ok(rows.length >= 24, `${rows.length} recordings`);
  for (const r of rows) {
    assert.deepEqual(
      { manufacturer: r.found.manufacturer, model: r.found.model, serial: r.found.serial ?? null },
      r.expected,
      r.recording,
    );
  }
});
