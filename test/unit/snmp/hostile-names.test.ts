// A printer whose names are those of a prototype's properties (supplies called `constructor`,
// `prototype`, `__proto__`, `toString`, `hasOwnProperty`; a paper tray called `constructor`; IPP
// marker-types such names), read through the real parsers: an snmprec served by snmpsim over
// UDP on loopback, read by the scan's readHost and parsePrinter; an IPP reply through the codec.
// Each reading is kept, under a name the box's own import accepts (supply_constructor ...), and
// no lookup finds a prototype's property (no key "undefined").
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { readHost } from '../../../src/snmp/scan.js';
import { parsePrinter } from '../../../src/snmp/parse/index.js';
import { decodeIppResponse, printerStateOf } from '../../../src/ipp/codec.js';
import { ippMetrics, ippObservation } from '../../../src/ipp/observation.js';
import { findInheritedKey } from '../../../src/model/inherited-keys.js';
import { ensureSnmpsim, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { HOSTILE_IPP_MARKERS, HOSTILE_IPP_PAGES, HOSTILE_SNMP_SUPPLIES, hostileIppReply, writeHostileRecording } from '../../kit/hostile-names.js';

const ADDRESS = '127.0.9.61';
const SERIAL = 'HOSTILE-SNMP-1';
const skipReason = ensureSnmpsim();

/** Every object in a value has Object.prototype (or none): nothing a name set replaced it. */
function prototypesIntact(value: unknown, path = ''): void {
  if (typeof value !== 'object' || value === null) return;
  const proto = Object.getPrototypeOf(value);
  assert.ok(proto === Object.prototype || proto === Array.prototype || proto === null, `${path}: prototype replaced`);
  for (const [k, v] of Object.entries(value)) prototypesIntact(v, `${path}.${k}`);
}

describe('hostile names through the real SNMP read', { skip: skipReason ?? false }, () => {
  let sim: SnmpSim;
  let tmp: string;
  before(async () => {
    tmp = mkdtempSync(join(os.tmpdir(), 'printbox-hostile-names-'));
    sim = await startSnmpSim({ endpoints: [{ address: ADDRESS, recording: writeHostileRecording(tmp, SERIAL) }] });
  });
  after(async () => {
    await sim?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('every supply kept under a storable key, with its level; the tray renamed; nothing the import refuses', async () => {
    const host = await readHost(ADDRESS, { credentials: [{ version: 'v2c', community: 'public' }], port: sim.port, timeoutMs: 5000, allowedRanges: ['127.0.0.0/8'] });
    assert.ok(host, 'the simulated printer answered');
    const p = parsePrinter(host.values, ADDRESS, new Date());
    assert.equal(p.serial, SERIAL);
    for (const s of HOSTILE_SNMP_SUPPLIES) {
      assert.equal(p.metrics.toner_levels[s.key], s.level, `${s.name} -> ${s.key}`);
      assert.ok(Object.hasOwn(p.metrics.toner_levels, s.key), s.key);
      assert.ok(p.info.consumables?.includes(s.key), `${s.key} among the consumables`);
    }
    // The printer's own supplies are there as before.
    assert.equal(p.metrics.toner_levels.black, 98);
    assert.equal(p.info.paper_tray_status?.tray_constructor !== undefined, true, JSON.stringify(p.info.paper_tray_status));
    assert.ok(Object.hasOwn(p.info.paper_tray_status!, 'tray___proto__'), JSON.stringify(p.info.paper_tray_status));
    assert.equal(findInheritedKey(JSON.parse(JSON.stringify(p))), undefined, 'nothing the import refuses');
    assert.ok(!('undefined' in p.metrics.toner_levels));
    prototypesIntact(p);
  });
});

describe('hostile names through the IPP codec', () => {
  it('marker names and types named like a prototype\'s properties: each reading kept, no "undefined" key', () => {
    const state = printerStateOf(decodeIppResponse(hostileIppReply('HOSTILE-IPP-1')));
    assert.equal(state.pageCount, HOSTILE_IPP_PAGES, 'the collection\'s own member, beside `__proto__` and `constructor` ones');
    assert.equal(state.monoPages, HOSTILE_IPP_PAGES);
    const levels = ippMetrics(state).toner_levels;
    assert.deepEqual(Object.keys(levels).sort(), HOSTILE_IPP_MARKERS.map((m) => m.key).sort());
    for (const m of HOSTILE_IPP_MARKERS) assert.equal(levels[m.key], m.level, `${m.name} (${m.type}) -> ${m.key}`);
    const o = ippObservation({ ip: '127.0.9.62', port: 631, tls: false, state, now: Date.UTC(2026, 0, 2) });
    assert.ok(o);
    assert.equal(findInheritedKey(JSON.parse(JSON.stringify(o))), undefined, 'nothing the import refuses');
    assert.deepEqual([...(o.fields.consumables ?? [])].sort(), HOSTILE_IPP_MARKERS.map((m) => m.key).sort());
    prototypesIntact(o);
  });
});
