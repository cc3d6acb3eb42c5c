// Parser tests: every recording in test/fixtures/snmp against hand-derived expected values,
// the Brother blobs against the brother library's own expected parse (expected-parse.ambr),
// and focused unit tests on synthetic values.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { deriveSnmprec, readSnmprec, parseSnmprec } from '../../kit/snmprec.js';
import { cleanModel, cleanSerial, formatMac, parsePrinter, readPlan } from '../../../src/snmp/parse/printer.js';
import { parseDeviceId } from '../../../src/snmp/parse/device-id.js';
import { levelState, normaliseColour, supplyKey } from '../../../src/snmp/parse/supplies.js';
import { decodeErrorState, subUnitStatus } from '../../../src/snmp/parse/status.js';
import { parseBrotherBlob } from '../../../src/snmp/vendors/brother.js';
import { fromVarbind, octetsToValue, type OidValues, type SnmpValue } from '../../../src/snmp/types.js';
import { IDENTITY_GET_OIDS, WALK_ROOTS } from '../../../src/snmp/oids.js';
import { DEFAULT_ALERT_RULES, evaluateAlerts } from '../../../src/model/alert-rules.js';

// Compiled to dist/test/unit/snmp/; the fixtures stay in the source tree.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const FIX = join(ROOT, 'test/fixtures/snmp');
const NOW = new Date('2026-01-02T03:04:05Z');

interface Expected {
  manufacturer: string;
  model: string;
  serial: string | null;
  page_count: number | null;
  print_server?: { model: string; firmware?: string };
  mono_pages?: number;
  color_pages?: number;
  toner_levels: Record<string, number>;
  unknown_supplies?: string[];
}

const expected = JSON.parse(readFileSync(join(FIX, 'expected.json'), 'utf8')) as Record<string, Expected>;

function recordings(): string[] {
  const out: string[] = [];
  for (const dir of readdirSync(FIX, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const f of readdirSync(join(FIX, dir.name))) if (f.endsWith('.snmprec')) out.push(`${dir.name}/${f}`);
  }
  return out.sort();
}

describe('recordings', () => {
  it('every recording has expected values, and every expectation a recording', () => {
    const keys = Object.keys(expected).filter((k) => !k.startsWith('_')).sort();
    assert.deepEqual(keys, recordings());
  });

  for (const rel of recordings()) {
    it(`parses ${rel}`, () => {
      const exp = expected[rel];
      assert.ok(exp, `no expectation for ${rel}`);
      const p = parsePrinter(readSnmprec(join(FIX, rel)), '127.0.1.1', NOW);
      assert.equal(p.serial, exp.serial ?? undefined, 'serial');
      assert.equal(p.info.serial, exp.serial ?? undefined, 'info.serial');
      assert.deepEqual(p.info.print_server, exp.print_server, 'print_server');
      assert.equal(p.info.model, exp.model, 'model');
      assert.equal(p.info.manufacturer, exp.manufacturer, 'manufacturer');
      assert.equal(p.metrics.page_count, exp.page_count ?? undefined, 'page_count');
      assert.equal(p.info.page_count, exp.page_count ?? undefined, 'info.page_count');
      // A reading keeps the measured levels, and -3 for a supply at "some remaining" (never a figure of the box's).
      const measured = Object.fromEntries(Object.entries(p.metrics.toner_levels).filter(([, v]) => v >= 0));
      assert.deepEqual(measured, exp.toner_levels, 'toner_levels');
      for (const [key, v] of Object.entries(p.metrics.toner_levels)) {
        if (v >= 0) continue;
        assert.equal(v, -3, `${key}: the only negative level kept is some remaining`);
        assert.equal(p.supplies.find((x) => x.key === key)?.state, 'some_remaining', `${key} is at some remaining`);
      }
      if (exp.mono_pages !== undefined) assert.equal(p.metrics.mono_pages, exp.mono_pages, 'mono_pages');
      if (exp.color_pages !== undefined) assert.equal(p.metrics.color_pages, exp.color_pages, 'color_pages');
      for (const key of exp.unknown_supplies ?? []) {
        const s = p.supplies.find((x) => x.key === key);
        assert.ok(s, `supply ${key} listed`);
        assert.equal(s.percent, undefined, `${key} has no percentage`);
        assert.ok(p.info.consumables?.includes(key), `${key} in consumables`);
        assert.ok(!(key in (p.info.toner_levels ?? {})), `${key} not in toner_levels`);
      }
      // Contract shape: required fields and integer-valued maps.
      assert.equal(p.info.ip, '127.0.1.1');
      assert.equal(p.info.last_seen, '2026-01-02T03:04:05Z');
      assert.equal(typeof p.info.learned_oids, 'object');
      for (const v of Object.values(p.info.toner_levels ?? {})) assert.ok(Number.isInteger(v) && v >= 0 && v <= 100);
      for (const v of Object.values(p.info.meters ?? {})) assert.ok(Number.isInteger(v));
    });
  }
});

// --- Brother: cross-check with the brother library's expected parse (independent oracle).

interface OracleEntry {
  model: string;
  serial: string;
  firmware?: string;
  mac: string;
  sensors: Record<string, number | string | null>;
}

function readOracle(): OracleEntry[] {
  const text = readFileSync(join(FIX, 'brother/expected-parse.ambr'), 'utf8');
  const blocks = text.split(/^# ---$/m);
  const out: OracleEntry[] = [];
  let current: Partial<OracleEntry> | undefined;
  for (const b of blocks) {
    const dev = /Brother\(\s*([\s\S]*?)\n\s*\)/.exec(b);
    if (dev) {
      const f = (k: string) => new RegExp(`${k}=(None|'([^']*)')`).exec(dev[1])?.[2];
      current = { model: f('model'), serial: f('serial'), firmware: f('firmware'), mac: f('mac') };
      continue;
    }
    const sens = /BrotherSensors\(([\s\S]*)\)\s*$/.exec(b.trim());
    if (sens && current) {
      const sensors: Record<string, number | string | null> = {};
      for (const m of sens[1].matchAll(/(\w+)=(None|-?\d+|'[^']*'|FakeDatetime\([^)]*\))/g)) {
        sensors[m[1]] = m[2] === 'None' ? null : /^-?\d+$/.test(m[2]) ? Number(m[2]) : m[2];
      }
      out.push({ ...(current as OracleEntry), sensors });
      current = undefined;
    }
  }
  return out;
}

/** Oracle sensor -> where the same fact lives in our parse. */
const ORACLE_MAP: Record<string, (p: ReturnType<typeof parsePrinter>) => number | undefined> = {
  page_counter: (p) => p.metrics.page_count,
  bw_counter: (p) => p.metrics.mono_pages,
  color_counter: (p) => p.metrics.color_pages,
  drum_counter: (p) => p.info.meters?.drum_count,
  drum_remaining_pages: (p) => p.info.meters?.drum_remaining_pages,
  drum_remaining_life: (p) => p.metrics.toner_levels.drum,
  belt_unit_remaining_life: (p) => p.metrics.toner_levels.belt,
  belt_unit_remaining_pages: (p) => p.info.meters?.belt_remaining_pages,
  fuser_remaining_life: (p) => p.metrics.toner_levels.fuser,
  fuser_unit_remaining_pages: (p) => p.info.meters?.fuser_remaining_pages,
  laser_unit_remaining_pages: (p) => p.info.meters?.laser_unit_remaining_pages,
  pf_kit_1_remaining_life: (p) => p.metrics.toner_levels.paper_feed_kit_1,
  pf_kit_1_remaining_pages: (p) => p.info.meters?.paper_feed_kit_1_remaining_pages,
  pf_kit_mp_remaining_pages: (p) => p.info.meters?.paper_feed_kit_mp_remaining_pages,
  duplex_unit_pages_counter: (p) => p.info.meters?.duplex_pages,
  image_counter: (p) => p.info.meters?.image_count,
  black_counter: (p) => p.info.black_impressions,
  cyan_counter: (p) => p.info.cyan_impressions,
  magenta_counter: (p) => p.info.magenta_impressions,
  yellow_counter: (p) => p.info.yellow_impressions,
};
for (const c of ['black', 'cyan', 'magenta', 'yellow']) {
  ORACLE_MAP[`${c}_toner_remaining`] = (p) => p.metrics.toner_levels[c];
  ORACLE_MAP[`${c}_ink_remaining`] = (p) => p.metrics.toner_levels[c];
  ORACLE_MAP[`${c}_drum_remaining_life`] = (p) => p.metrics.toner_levels[`drum_${c}`];
  ORACLE_MAP[`${c}_drum_remaining_pages`] = (p) => p.info.meters?.[`drum_${c}_remaining_pages`];
  ORACLE_MAP[`${c}_drum_counter`] = (p) => p.info.meters?.[`drum_${c}_count`];
}

/**
 * Where we knowingly differ from the oracle:
 * - HL-L2340DW page_counter: the oracle prefers the Brother counters blob (986); we prefer
 *   Printer-MIB prtMarkerLifeCount (1279) and keep 986 as meters.vendor_total_pages.
 * - MFC-J680DW page_counter: the printer reports no total, only b/w and colour counters; the
 *   oracle then has none, we report their sum (the meter a dealer bills from).
 */
const ORACLE_EXCEPTIONS = new Set(['HL-L2340DW:page_counter', 'MFC-J680DW:page_counter']);

describe('Brother blobs against expected-parse.ambr', () => {
  const oracle = readOracle();
  it('reads all twelve oracle entries', () => assert.equal(oracle.length, 12));
  for (const o of oracle) {
    it(`${o.model} matches the oracle`, () => {
      const file = `brother/${o.model.toLowerCase()}.snmprec`;
      const p = parsePrinter(readSnmprec(join(FIX, file)), '127.0.1.1', NOW);
      assert.equal(p.info.model, o.model);
      assert.equal(p.serial, o.serial);
      assert.equal(p.info.firmware, o.firmware ?? undefined);
      assert.equal(p.info.mac_address, o.mac);
      let checked = 0;
      for (const [name, value] of Object.entries(o.sensors)) {
        const ours = ORACLE_MAP[name];
        if (!ours || typeof value === 'string') continue;
        // The oracle reads a printer either as "ink" or as "laser"; the other kind's fields are
        // None there, while both land on the same colour key here.
        if (value === null && /_(ink|toner)_remaining$/.test(name)) continue;
        if (ORACLE_EXCEPTIONS.has(`${o.model}:${name}`)) {
          if (o.model === 'HL-L2340DW') assert.equal(p.info.meters?.vendor_total_pages, value);
          else assert.equal(p.metrics.page_count, Number(o.sensors.bw_counter) + Number(o.sensors.color_counter));
          continue;
        }
        assert.equal(ours(p), value ?? undefined, `${name}`);
        checked++;
      }
      assert.ok(checked > 10, 'compared the sensors');
    });
  }
});

// --- Synthetic values

const int = (n: number): SnmpValue => ({ type: 'int', value: n });
const str = (s: string): SnmpValue => ({ type: 'str', value: s });
const hex = (h: string): SnmpValue => ({ type: 'hex', value: Buffer.from(h, 'hex') });
const S = '1.3.6.1.2.1.43.11.1.1';

function supplyRow(values: OidValues, i: number, type: number, descr: string, max: number, level: number, unit = 7): void {
  values.set(`${S}.5.1.${i}`, int(type));
  values.set(`${S}.6.1.${i}`, str(descr));
  values.set(`${S}.7.1.${i}`, int(unit));
  values.set(`${S}.8.1.${i}`, int(max));
  values.set(`${S}.9.1.${i}`, int(level));
}

describe('supply levels (RFC 3805 special values)', () => {
  it('percentages only for real levels; -1, -2, -3 and unknown capacity are not 0%', () => {
    const v: OidValues = new Map();
    supplyRow(v, 1, 3, 'Black Toner', 1000, 250);
    supplyRow(v, 2, 3, 'Cyan Toner', -2, -3); // some remaining, capacity unknown
    supplyRow(v, 3, 3, 'Magenta Toner', 1000, -2); // unknown
    supplyRow(v, 4, 3, 'Yellow Toner', 1000, -1); // other
    supplyRow(v, 5, 4, 'Waste Toner Box', -2, 40); // level without capacity
    supplyRow(v, 6, 9, 'Drum Unit', 20000, 0); // really empty: 0%
    supplyRow(v, 7, 15, 'Fuser', -2, 80, 19); // unit percent: level is the percentage
    supplyRow(v, 8, 3, 'Black Toner Cartridge', 100, 150); // over max: capped
    const p = parsePrinter(v, '127.0.0.9', NOW);
    // -3 (some remaining) is kept as the printer said it; -2, -1 and an unknown capacity are not levels.
    assert.deepEqual(p.metrics.toner_levels, { black: 25, cyan: -3, drum: 0, fuser: 80, black_2: 100 });
    assert.deepEqual(p.info.toner_levels, { black: 25, drum: 0, fuser: 80, black_2: 100 }, 'PrinterInfo: measurements only');
    const state = Object.fromEntries(p.supplies.map((s) => [s.key, s.state]));
    assert.deepEqual(state, {
      black: 'measured',
      cyan: 'some_remaining',
      magenta: 'unknown',
      yellow: 'other',
      waste_toner: 'unknown_capacity',
      drum: 'measured',
      fuser: 'measured',
      black_2: 'measured',
    });
    assert.equal(p.info.toner_level_black, 25);
    assert.equal(p.info.toner_level_cyan, undefined);
    assert.equal(p.info.toner_desc_cyan, 'Cyan Toner');
    assert.deepEqual(p.info.consumables, ['black', 'cyan', 'magenta', 'yellow', 'waste_toner', 'drum', 'fuser', 'black_2']);
    assert.ok(p.info.toner_alerts?.includes('drum empty'));
  });

  it('levelState rule', () => {
    assert.deepEqual(levelState(50, 200, 7), { percent: 25, state: 'measured' });
    assert.deepEqual(levelState(1, 3, 7), { percent: 33, state: 'measured' });
    assert.deepEqual(levelState(2, 3, 7), { percent: 67, state: 'measured' });
    assert.deepEqual(levelState(-3, 100, 7), { state: 'some_remaining' });
    assert.deepEqual(levelState(-2, 100, 7), { state: 'unknown' });
    assert.deepEqual(levelState(-1, 100, 7), { state: 'other' });
    assert.deepEqual(levelState(10, -1, 7), { state: 'unknown_capacity' });
    assert.deepEqual(levelState(10, 0, 7), { state: 'unknown_capacity' });
  });
});

describe('serials', () => {
  it('trims NUL and space padding, rejects placeholders', () => {
    assert.equal(cleanSerial('ABC123\u0000\u0000\u0000'), 'ABC123');
    assert.equal(cleanSerial('  XYZ 9  \r\n'), 'XYZ 9');
    assert.equal(cleanSerial('\u0000\u0000'), undefined);
    assert.equal(cleanSerial('0000'), undefined);
    assert.equal(cleanSerial('Unknown'), undefined);
  });

  it('prtGeneralSerialNumber (hex, NUL padded) > vendor > 1284 SN', () => {
    const v: OidValues = new Map();
    v.set('1.3.6.1.2.1.43.5.1.1.17.1', octetsToValue(Buffer.from('CNB1234567\0\0\0\0', 'latin1')));
    v.set('1.3.6.1.4.1.11.2.3.9.4.2.1.1.3.3.0', str('VENDORSN'));
    v.set('1.3.6.1.2.1.1.2.0', { type: 'oid', value: '1.3.6.1.4.1.11.2.3.9.1' });
    assert.equal(parsePrinter(v, '127.0.0.9', NOW).serial, 'CNB1234567');
    v.set('1.3.6.1.2.1.43.5.1.1.17.1', hex('00000000'));
    assert.equal(parsePrinter(v, '127.0.0.9', NOW).serial, 'VENDORSN');
    v.delete('1.3.6.1.4.1.11.2.3.9.4.2.1.1.3.3.0');
    v.set('1.3.6.1.4.1.2699.1.2.1.2.1.1.3.1', str('MFG:HP;MDL:LaserJet M404n;SN:PHB123;'));
    const p = parsePrinter(v, '127.0.0.9', NOW);
    assert.equal(p.serial, 'PHB123');
    assert.equal(p.info.model, 'LaserJet M404n');
    assert.equal(p.info.manufacturer, 'HP');
    v.delete('1.3.6.1.4.1.2699.1.2.1.2.1.1.3.1');
    assert.equal(parsePrinter(v, '127.0.0.9', NOW).serial, undefined, 'none: the caller falls back to the MAC');
  });
});

describe('colour and kind normalisation', () => {
  it('colour words, colorant names and part-number suffixes', () => {
    const cases: Array<[string, string | undefined]> = [
      ['Black Toner Cartridge', 'black'],
      ['Cyan Cartridge HP 207A', 'cyan'],
      ['TK-8527M', 'magenta'],
      ['TK-8527K', 'black'],
      ['SJIC35P-BK', 'black'],
      ['SJIC35P-Y', 'yellow'],
      ['CLT-C404S', 'cyan'],
      ['Photo Black Ink', 'photo_black'],
      ['Matte Black', 'matte_black'],
      ['Light Cyan', 'light_cyan'],
      ['Toner Schwarz', 'black'],
      ['Waste Toner Box', undefined],
      ['TK-1162', undefined],
    ];
    for (const [text, colour] of cases) assert.equal(normaliseColour(text), colour, text);
  });

  it('kinds from type codes and descriptions', () => {
    assert.equal(supplyKey('toner', 'Toner', 'cyan', false), 'cyan');
    assert.equal(supplyKey('toner', 'TK-1162', 'black', true), 'black');
    assert.equal(supplyKey('toner', 'TK-1162', undefined, true), 'black');
    assert.equal(supplyKey('opc', 'Drum Unit Black', undefined, false), 'drum_black');
    assert.equal(supplyKey('opc', 'Imaging Drum', undefined, false), 'drum');
    assert.equal(supplyKey('wasteToner', 'Waste Toner Box', undefined, false), 'waste_toner');
    assert.equal(supplyKey('wasteInk', 'Maintenance Box', undefined, false), 'waste_ink');
    assert.equal(supplyKey('other', 'Belt Unit', undefined, false), 'belt');
    assert.equal(supplyKey('other', 'Fuser Unit', undefined, false), 'fuser');
    assert.equal(supplyKey('other', 'Document Feeder Kit', undefined, false), 'maintenance_kit');
    assert.equal(supplyKey(undefined, 'Yellow Toner', undefined, false), 'yellow');
  });

  it('colours come from the colorant table when the description has none', () => {
    const v: OidValues = new Map();
    supplyRow(v, 1, 3, 'Cartridge 1', 100, 40);
    supplyRow(v, 2, 3, 'Cartridge 2', 100, 60);
    v.set(`${S}.3.1.1`, int(2));
    v.set(`${S}.3.1.2`, int(1));
    v.set('1.3.6.1.2.1.43.12.1.1.4.1.1', str('black'));
    v.set('1.3.6.1.2.1.43.12.1.1.4.1.2', str('magenta'));
    const p = parsePrinter(v, '127.0.0.9', NOW);
    assert.deepEqual(p.metrics.toner_levels, { magenta: 40, black: 60 });
    assert.equal(p.info.is_color, true);
  });
});

describe('status', () => {
  it('hrPrinterDetectedErrorState bits, MSB first, over two octets', () => {
    assert.deepEqual(decodeErrorState(Buffer.from([0x00])), []);
    assert.deepEqual(decodeErrorState(Buffer.from([0x20])), ['Low toner']);
    assert.deepEqual(decodeErrorState(Buffer.from([0x84])), ['Low paper', 'Paper jam']);
    assert.deepEqual(decodeErrorState(Buffer.from([0x01, 0x80])), ['Service requested', 'Input tray missing']);
    assert.deepEqual(decodeErrorState(Buffer.from([0x00, 0x02])), ['Overdue preventive maintenance']);
  });

  it('status_messages from error bits and alerts; informational alerts without text are skipped', () => {
    const v: OidValues = new Map();
    v.set('1.3.6.1.2.1.25.3.5.1.2.1', hex('0800'));
    v.set('1.3.6.1.2.1.43.18.1.1.2.1.5', int(3));
    v.set('1.3.6.1.2.1.43.18.1.1.7.1.5', int(8));
    v.set('1.3.6.1.2.1.43.18.1.1.8.1.5', str('Paper jam in tray 2'));
    v.set('1.3.6.1.2.1.43.18.1.1.2.1.6', int(4));
    v.set('1.3.6.1.2.1.43.18.1.1.7.1.6', int(503)); // powered up: an event, not a state
    v.set('1.3.6.1.2.1.43.18.1.1.8.1.6', str(''));
    v.set('1.3.6.1.2.1.43.18.1.1.2.1.7', int(4));
    v.set('1.3.6.1.2.1.43.18.1.1.4.1.7', int(11));
    v.set('1.3.6.1.2.1.43.18.1.1.7.1.7', int(1104));
    const p = parsePrinter(v, '127.0.0.9', NOW);
    assert.deepEqual(p.info.status_messages, ['Door open', 'Paper jam in tray 2', 'Toner almost empty']);
    assert.deepEqual(p.info.toner_alerts, ['Toner almost empty']);
  });

  it("a door, jam or empty tray said in the printer's own words keeps the alert code's name, so the alert rules see it", () => {
    const A = '1.3.6.1.2.1.43.18.1.1';
    const v: OidValues = new Map();
    const row = (i: number, group: number, code: number, text: string) => {
      v.set(`${A}.2.1.${i}`, int(3));
      v.set(`${A}.4.1.${i}`, int(group));
      v.set(`${A}.7.1.${i}`, int(code));
      v.set(`${A}.8.1.${i}`, str(text));
    };
    row(1, 6, 3, 'Cover is Open'); // coverOpen, in a Brother's panel words
    row(2, 13, 8, 'Jam Tray 1'); // jam
    row(3, 8, 808, 'Load paper in Tray 2'); // input media supply empty
    row(4, 6, 501, 'Door open'); // already says it: unchanged
    row(5, 5, 1, 'Sleep'); // not a condition code: unchanged
    const status = parsePrinter(v, '127.0.0.9', NOW).info.status_messages as string[];
    assert.deepEqual(status, ['Cover open: Cover is Open', 'Paper jam: Jam Tray 1', 'Input media supply empty: Load paper in Tray 2', 'Door open', 'Sleep']);
    const kinds = evaluateAlerts(DEFAULT_ALERT_RULES, { status_messages: status }, [], NOW.getTime()).open.map((c) => c.kind);
    assert.deepEqual(kinds.sort(), ['door_open', 'jam', 'paper_out']);
  });

  it('a cover open only in prtCoverTable (a real Kyocera P2040 recording, its Front Cover set to coverOpen) opens door_open', () => {
    const rec = readFileSync(join(FIX, 'printmaster/kyocera_p2040.snmprec'), 'utf8');
    const closed = parsePrinter(parseSnmprec(rec), '127.0.1.1', NOW).info.status_messages as string[];
    assert.ok(!closed.some((m) => /cover|door/i.test(m)), `closed: ${closed.join(', ')}`);
    const open = parsePrinter(parseSnmprec(deriveSnmprec(rec, { '1.3.6.1.2.1.43.6.1.1.3.1.1': '2|3' })), '127.0.1.1', NOW).info.status_messages as string[];
    assert.ok(open.includes('Cover open: Front Cover'), `open: ${open.join(', ')}`);
    const interlock = parsePrinter(parseSnmprec(deriveSnmprec(rec, { '1.3.6.1.2.1.43.6.1.1.3.1.1': '2|5' })), '127.0.1.1', NOW).info.status_messages as string[];
    assert.ok(interlock.includes('Interlock open: Front Cover'), `interlock: ${interlock.join(', ')}`);
    for (const status of [open, interlock]) {
      const kinds = evaluateAlerts(DEFAULT_ALERT_RULES, { status_messages: status }, [], NOW.getTime()).open.map((c) => c.kind);
      assert.deepEqual(kinds, ['door_open']);
    }
  });

  it('sub-unit status text', () => {
    assert.equal(subUnitStatus(0), 'available_idle');
    assert.equal(subUnitStatus(19), 'unavailable_broken,critical_alerts');
    assert.equal(subUnitStatus(4 + 8 + 32), 'available_active,non_critical_alerts,offline');
  });
});

describe('paper trays', () => {
  it('levels, percentages and sentinels passed through', () => {
    const I = '1.3.6.1.2.1.43.8.2.1';
    const v: OidValues = new Map();
    const tray = (i: number, max: number, cur: number, name: string, media: string, status: number) => {
      v.set(`${I}.9.1.${i}`, int(max));
      v.set(`${I}.10.1.${i}`, int(cur));
      v.set(`${I}.11.1.${i}`, int(status));
      v.set(`${I}.12.1.${i}`, str(media));
      v.set(`${I}.13.1.${i}`, str(name));
    };
    tray(1, 500, 250, 'Tray 1', 'Plain', 0);
    tray(2, 100, -3, 'MP Tray', 'Any', 8);
    tray(3, -2, -2, 'Roll', '', 5);
    const p = parsePrinter(v, '127.0.0.9', NOW);
    assert.deepEqual(p.info.paper_trays, [
      { index: 1, current_level: 250, max_capacity: 500, name: 'Tray 1', media_type: 'Plain', level_percent: 50, status: 'available_idle' },
      { index: 2, current_level: -3, max_capacity: 100, name: 'MP Tray', media_type: 'Any', status: 'available_idle,non_critical_alerts' },
      { index: 3, current_level: -2, max_capacity: -2, name: 'Roll', status: 'unknown' },
    ]);
    assert.deepEqual(p.info.paper_tray_status, { 'Tray 1': 'available_idle', 'MP Tray': 'available_idle,non_critical_alerts', Roll: 'unknown' });
  });
});

describe('identity pieces', () => {
  it('IEEE 1284 device ID, long and short keys', () => {
    const id = parseDeviceId('MANUFACTURER:Lexmark;COMMAND SET:PCL,PS;MODEL:Lexmark MS610dn;CLASS:Printer;SERN:451234;');
    assert.equal(id?.manufacturer, 'Lexmark');
    assert.equal(id?.model, 'Lexmark MS610dn');
    assert.deepEqual(id?.commandSet, ['PCL', 'PS']);
    assert.equal(id?.serial, '451234');
    assert.equal(parseDeviceId('no pairs here'), undefined);
  });

  it('models lose the manufacturer prefix and "series"', () => {
    assert.equal(cleanModel('Brother HL-L8260CDW series'), 'HL-L8260CDW');
    assert.equal(cleanModel('EPSON SC-T3405 Series'), 'SC-T3405');
    assert.equal(cleanModel('HP LaserJet Pro M404n'), 'LaserJet Pro M404n');
    assert.equal(cleanModel('KONICA MINOLTA bizhub C308'), 'bizhub C308');
  });

  it('MAC formatting', () => {
    assert.equal(formatMac(Buffer.from('0017c865e2b9', 'hex')), '00:17:c8:65:e2:b9');
    assert.equal(formatMac(Buffer.from('000000000000', 'hex')), undefined);
    assert.equal(formatMac(Buffer.alloc(0)), undefined);
  });

  it('manufacturer from the sysObjectID enterprise number', () => {
    const cases: Array<[number, string]> = [
      [11, 'HP'], [2435, 'Brother'], [1602, 'Canon'], [1248, 'Epson'], [1347, 'Kyocera'], [641, 'Lexmark'],
      [367, 'Ricoh'], [253, 'Xerox'], [18334, 'Konica Minolta'], [2385, 'Sharp'], [236, 'Samsung'], [2001, 'OKI'],
    ];
    for (const [ent, name] of cases) {
      const v: OidValues = new Map([['1.3.6.1.2.1.1.2.0', { type: 'oid', value: `1.3.6.1.4.1.${ent}.1.2` }]]);
      assert.equal(parsePrinter(v, '127.0.0.9', NOW).info.manufacturer, name, String(ent));
    }
  });

  it('netmask, MAC and gateway for the address that was read', () => {
    const v = parseSnmprec(
      [
        '1.3.6.1.2.1.2.2.1.6.1|4x|f8da0c2de3aa',
        '1.3.6.1.2.1.2.2.1.6.2|4x|3c2af410d278',
        '1.3.6.1.2.1.4.20.1.2.10.0.0.5|2|2',
        '1.3.6.1.2.1.4.20.1.3.10.0.0.5|64|255.255.255.0',
        '1.3.6.1.2.1.4.21.1.7.0.0.0.0|64|10.0.0.1',
      ].join('\n'),
    );
    const p = parsePrinter(v, '10.0.0.5', NOW);
    assert.equal(p.info.mac_address, '3c:2a:f4:10:d2:78');
    assert.equal(p.info.subnet_mask, '255.255.255.0');
    assert.equal(p.info.gateway, '10.0.0.1');
  });
});

describe('Brother blob records', () => {
  it('splits code/0x01/length/value records and stops at the terminator', () => {
    const r = parseBrotherBlob(Buffer.from('6f0104000023f0a1010204140801010aff', 'hex'));
    assert.deepEqual(
      r.map((x) => [x.code, x.value.toString('hex')]),
      [
        [0x6f, '000023f0'],
        [0xa1, '0414'],
        [0x08, '0a'],
      ],
    );
    assert.deepEqual(parseBrotherBlob(Buffer.from('6f0104', 'hex')), []);
  });
});

describe('values from net-snmp and recordings', () => {
  it('fromVarbind maps net-snmp ObjectType codes', () => {
    assert.deepEqual(fromVarbind({ oid: '.1.3.6.1.2.1.1.3.0', type: 67, value: 1234 }), { type: 'ticks', value: 1234 });
    assert.deepEqual(fromVarbind({ oid: '1.3', type: 2, value: -3 }), { type: 'int', value: -3 });
    assert.deepEqual(fromVarbind({ oid: '1.3', type: 4, value: Buffer.from('Black Toner') }), { type: 'str', value: 'Black Toner' });
    assert.equal(fromVarbind({ oid: '1.3', type: 4, value: Buffer.from('630104', 'hex') })?.type, 'hex');
    assert.deepEqual(fromVarbind({ oid: '1.3', type: 6, value: '1.3.6.1.4.1.2435' }), { type: 'oid', value: '1.3.6.1.4.1.2435' });
    assert.deepEqual(fromVarbind({ oid: '1.3', type: 64, value: '10.0.0.1' }), { type: 'ip', value: '10.0.0.1' });
    assert.deepEqual(fromVarbind({ oid: '1.3', type: 65, value: 42 }), { type: 'counter', value: 42 });
    assert.deepEqual(fromVarbind({ oid: '1.3', type: 70, value: Buffer.from('0100000000', 'hex') }), { type: 'counter64', value: 4294967296n });
    assert.equal(fromVarbind({ oid: '1.3', type: 129, value: null }), undefined); // noSuchInstance
  });

  it('snmprec tags: 4x hex, 6 OIDs, 64, 65, 67', () => {
    const v = parseSnmprec('1.3.6.1.2.1.1.2.0|6|1.3.6.1.4.1.1347.41\n1.3.6.1.2.1.2.2.1.6.1|4x|0017c865e2b9\n1.3.6.1.2.1.4.20.1.3.1.2.3.4|64|255.0.0.0\n1.3.6.1.2.1.43.10.2.1.4.1.1|65|7\n1.3.6.1.2.1.1.3.0|67|100\n1.3.6.1.2.1.1.5.0|4|name');
    assert.deepEqual(v.get('1.3.6.1.2.1.1.2.0'), { type: 'oid', value: '1.3.6.1.4.1.1347.41' });
    assert.equal(v.get('1.3.6.1.2.1.2.2.1.6.1')?.type, 'hex');
    assert.deepEqual(v.get('1.3.6.1.2.1.4.20.1.3.1.2.3.4'), { type: 'ip', value: '255.0.0.0' });
    assert.deepEqual(v.get('1.3.6.1.2.1.43.10.2.1.4.1.1'), { type: 'counter', value: 7 });
    assert.deepEqual(v.get('1.3.6.1.2.1.1.3.0'), { type: 'ticks', value: 100 });
    assert.deepEqual(v.get('1.3.6.1.2.1.1.5.0'), { type: 'str', value: 'name' });
  });
});

describe('read plan', () => {
  it('identity GETs stay small; walks never cover all of MIB-2', () => {
    assert.ok(IDENTITY_GET_OIDS.length <= 20);
    for (const root of WALK_ROOTS) assert.ok(root.split('.').length >= 9, root);
  });

  it('adds the vendor module for the sysObjectID', () => {
    const plan = readPlan(new Map([['1.3.6.1.2.1.1.2.0', { type: 'oid', value: '1.3.6.1.4.1.1347.41' }]]));
    assert.equal(plan.vendor, 'Kyocera');
    assert.ok(plan.walks.includes('1.3.6.1.4.1.1347.42.3.1.2'));
    assert.ok(plan.gets.includes('1.3.6.1.4.1.1347.43.5.1.1.28.1'));
    const none = readPlan(new Map());
    assert.equal(none.vendor, undefined);
    assert.deepEqual(none.walks, [...WALK_ROOTS]);
  });
});

describe('what the scanner fetches is what the parser needs', () => {
  /** The part of a recording a scanner would get: identity GETs, plan GETs and plan walks. */
  function asRead(all: OidValues): { identity: OidValues; full: OidValues } {
    const identity: OidValues = new Map();
    for (const oid of IDENTITY_GET_OIDS) {
      const v = all.get(oid);
      if (v) identity.set(oid, v);
    }
    const plan = readPlan(identity, '127.0.1.1');
    const full: OidValues = new Map(identity);
    for (const oid of plan.gets) {
      const v = all.get(oid);
      if (v) full.set(oid, v);
    }
    for (const [oid, v] of all) if (plan.walks.some((root) => oid.startsWith(root + '.'))) full.set(oid, v);
    return { identity, full };
  }

  for (const rel of recordings()) {
    it(`${rel}: a planned read parses like the whole recording`, () => {
      const all = readSnmprec(join(FIX, rel));
      const { identity, full } = asRead(all);
      const whole = parsePrinter(all, '127.0.1.1', NOW);
      const read = parsePrinter(full, '127.0.1.1', NOW);
      assert.ok(full.size < all.size || all.size < 40, 'the read is a subset');
      assert.equal(read.serial, whole.serial);
      assert.equal(read.info.model, whole.info.model);
      assert.equal(read.info.manufacturer, whole.info.manufacturer);
      assert.equal(read.metrics.page_count, whole.metrics.page_count);
      assert.equal(read.metrics.mono_pages, whole.metrics.mono_pages);
      assert.equal(read.metrics.color_pages, whole.metrics.color_pages);
      assert.deepEqual(read.metrics.toner_levels, whole.metrics.toner_levels);
      assert.equal(read.info.mac_address, whole.info.mac_address);
      assert.equal(read.info.firmware, whole.info.firmware);
      // The quick identify alone already names the maker and the model.
      const quick = parsePrinter(identity, '127.0.1.1', NOW);
      assert.equal(quick.info.manufacturer, whole.info.manufacturer);
      assert.equal(quick.info.model, whole.info.model);
    });
  }
});

describe('vendor modules on synthetic values', () => {
  const sysOid = (ent: string): [string, SnmpValue] => ['1.3.6.1.2.1.1.2.0', { type: 'oid', value: `1.3.6.1.4.1.${ent}` }];

  it('HP: serial/model/firmware OIDs, mono = engine total - colour', () => {
    const D = '1.3.6.1.4.1.11.2.3.9.4.2.1';
    const v: OidValues = new Map([
      sysOid('11.2.3.9.1'),
      [`${D}.1.3.2.0`, str('HP Color LaserJet M454dn')],
      [`${D}.1.3.3.0`, str('VNB3K12345')],
      [`${D}.1.3.6.0`, str('20230412')],
      [`${D}.4.1.2.5.0`, int(12000)],
      [`${D}.4.1.2.7.0`, int(5000)],
      [`${D}.4.1.2.22.0`, int(3000)],
    ]);
    const p = parsePrinter(v, '127.0.0.9', NOW);
    assert.equal(p.serial, 'VNB3K12345');
    assert.equal(p.info.model, 'Color LaserJet M454dn');
    assert.equal(p.info.firmware, '20230412');
    assert.equal(p.metrics.page_count, 12000);
    assert.equal(p.metrics.color_pages, 5000);
    assert.equal(p.metrics.mono_pages, 7000);
    assert.equal(p.info.has_duplex, true);
    assert.equal(p.info.learned_oids.page_count_oid, `${D}.4.1.2.5.0`);
  });

  it('Printer-MIB life count wins over a vendor total', () => {
    const v: OidValues = new Map([
      sysOid('11.2.3.9.1'),
      ['1.3.6.1.2.1.43.10.2.1.4.1.1', { type: 'counter', value: 12345 }],
      ['1.3.6.1.4.1.11.2.3.9.4.2.1.4.1.2.5.0', int(12000)],
    ]);
    const p = parsePrinter(v, '127.0.0.9', NOW);
    assert.equal(p.metrics.page_count, 12345);
    assert.equal(p.info.meters?.vendor_total_pages, 12000);
  });

  it('life counts in length units are not pages', () => {
    const v: OidValues = new Map([
      ['1.3.6.1.2.1.43.10.2.1.3.1.1', int(17)], // meters
      ['1.3.6.1.2.1.43.10.2.1.4.1.1', { type: 'counter', value: 900 }],
    ]);
    const p = parsePrinter(v, '127.0.0.9', NOW);
    assert.equal(p.metrics.page_count, undefined);
    assert.equal(p.info.meters?.marker_life_count_1_1, 900);
  });

  it('Ricoh: engine counters by type', () => {
    const E = '1.3.6.1.4.1.367.3.2.1.2.19.5.1';
    const v: OidValues = new Map([sysOid('367.1.1')]);
    const rows: Array<[number, number]> = [[10, 5000], [201, 1000], [202, 300], [401, 2000], [402, 500], [403, 100], [870, 40], [871, 2], [300, 7]];
    rows.forEach(([type, n], i) => {
      v.set(`${E}.2.${i + 1}`, int(type));
      v.set(`${E}.9.${i + 1}`, int(n));
    });
    v.set('1.3.6.1.4.1.367.3.2.1.2.1.4.0', str('E123M456789'));
    const p = parsePrinter(v, '127.0.0.9', NOW);
    assert.equal(p.info.manufacturer, 'Ricoh');
    assert.equal(p.serial, 'E123M456789');
    assert.equal(p.metrics.page_count, 5000);
    assert.equal(p.metrics.mono_pages, 3000);
    assert.equal(p.metrics.color_pages, 900);
    assert.equal(p.metrics.scan_count, 42);
    assert.equal(p.info.is_fax, true);
  });

  it('Xerox, Konica Minolta and Canon counters', () => {
    const X = '1.3.6.1.4.1.253.8.53.13.2.1.6';
    const x = parsePrinter(new Map([sysOid('253.8.62.1.1'), [`${X}.1.20.1`, int(900)], [`${X}.1.20.33`, int(400)], [`${X}.1.20.34`, int(450)], [`${X}.11.20.3`, int(50)]]), '127.0.0.9', NOW);
    assert.deepEqual([x.info.manufacturer, x.metrics.page_count, x.metrics.mono_pages, x.metrics.color_pages], ['Xerox', 900, 500, 400]);
    const C = '1.3.6.1.4.1.18334.1.1.1.5.7.2';
    const k = parsePrinter(
      new Map([sysOid('18334.1.1.1.2.1.54.1'), ['1.3.6.1.4.1.18334.1.1.1.1.6.2.1.0', str('KONICA MINOLTA bizhub C300i')], [`${C}.1.1.0`, int(700)], [`${C}.2.1.5.1.1`, int(100)], [`${C}.2.1.5.1.2`, int(200)], [`${C}.2.1.5.2.2`, int(400)], [`${C}.3.1.5.1`, int(33)]]),
      '127.0.0.9',
      NOW,
    );
    assert.deepEqual([k.info.manufacturer, k.info.model, k.metrics.page_count, k.metrics.mono_pages, k.metrics.color_pages, k.metrics.scan_count], ['Konica Minolta', 'bizhub C300i', 700, 300, 400, 33]);
    const N = '1.3.6.1.4.1.1602.1.11.1.3.1.4';
    const c = parsePrinter(new Map([sysOid('1602.4.7'), [`${N}.101`, int(800)], [`${N}.108`, int(650)], ['1.3.6.1.4.1.1602.1.2.1.4.0', str('XYZ01234')]]), '127.0.0.9', NOW);
    assert.deepEqual([c.info.manufacturer, c.serial, c.metrics.page_count, c.metrics.mono_pages], ['Canon', 'XYZ01234', 800, 650]);
  });
});

// --- Identity from what printers write about themselves. Each row is a real device's
// sysObjectID, sysDescr and (where it had one) hrDeviceDescr, as recorded in LibreNMS's
// tests/snmpsim (see librenms/NOTICE): texts only, so they are quoted here rather than copied as files.
describe('identity from real sysDescr texts', () => {
  const rows: Array<[string, string, string | undefined, string, string | undefined]> = [
    // sysObjectID, sysDescr, hrDeviceDescr, manufacturer, model
    ['1.3.6.1.4.1.297.1.11.93.1.35.34.7.1', 'FUJI XEROX ApeosPort-VI C4471;ESS1.0.217,IOT 52.54.1,FIN C5.', undefined, 'Fuji Xerox', 'ApeosPort-VI C4471'],
    ['1.3.6.1.4.1.297.1.11.93.1.32.4.1.1', 'FUJI XEROX DocuPrint CM305 df; Net 16.41,ESS 201210101131,IOT 02.00.02', undefined, 'Fuji Xerox', 'DocuPrint CM305 df'],
    ['1.3.6.1.4.1.674.10898.10.52.1094473223', 'Dell MFP Laser 3115cn; Net 9.26, Controller 200709110910, Engine 05.09.00', undefined, 'Dell', 'MFP Laser 3115cn'],
    ['', 'Dell B3460dn Laser Printer version NH5.CY.N543 kernel 3.0.0 All-N-1', undefined, 'Dell', 'B3460dn Laser Printer'],
    ['1.3.6.1.4.1.10642.1.1', 'Zebra Wired', undefined, 'Zebra', undefined],
    ['1.3.6.1.4.1.367.1.1', 'Gestetner MPC2500/DSc525 1.71 / Gestetner Network Printer C model / Gestetner Network Scanner C model', undefined, 'Gestetner', 'MPC2500/DSc525'],
    ['1.3.6.1.4.1.367.1.1', 'LANIER MP C3501/LD635C 2.01 / LANIER Network Printer C model / LANIER Network Scanner C model', undefined, 'Lanier', 'MP C3501/LD635C'],
    ['1.3.6.1.4.1.367.1.1', 'NRG SP 4210N 1.05 / NRG Network Printer C model', undefined, 'NRG', 'SP 4210N'],
    ['1.3.6.1.4.1.367.1.1', 'SAVIN MP C4503 1.18 / SAVIN Network Printer C model / SAVIN Network Scanner C model', undefined, 'Savin', 'MP C4503'],
    ['1.3.6.1.4.1.367.1.1', 'RICOH MP 3053 1.09 / RICOH Network Printer C model / RICOH Network Scanner C model', undefined, 'Ricoh', 'MP 3053'],
    ['1.3.6.1.4.1.18334.1.2.1.2.1.50.2.2', 'Develop ineo  280', undefined, 'Develop', 'ineo 280'],
    ['1.3.6.1.4.1.1129.2.3.58.2', 'TOSHIBA e-STUDIO2505AC', undefined, 'Toshiba', 'e-STUDIO2505AC'],
    ['1.3.6.1.4.1.641.2.71107164', 'TOSHIBA e-STUDIO305CS version NH63.GM.N639 kernel 3.0.0 All-N-1', undefined, 'Toshiba', 'e-STUDIO305CS'],
    ['1.3.6.1.4.1.1129.1.2.1', 'TOSHIBA TEC B-EV4', undefined, 'Toshiba', 'B-EV4'],
    ['1.3.6.1.4.1.253.8.62.1.19.1.24.2.1', 'Xerox Phaser 4600; System 35.004.32.000, MCB 2.50.04.32, Network 35.004.32.000', undefined, 'Xerox', 'Phaser 4600'],
    ['1.3.6.1.4.1.641.1.71106749', 'Lexmark T640 version NS.NP.N219 kernel 2.6.6 All-N-1', undefined, 'Lexmark', 'T640'],
    ['1.3.6.1.4.1.1347.41', 'TA_UTAX Printing System', 'P-4532DN', 'UTAX', 'P-4532DN'],
    ['1.3.6.1.4.1.1347.41', 'KYOCERA Document Solutions Printing System', undefined, 'Kyocera', undefined],
    ['1.3.6.1.4.1.674.10898.2.100.100.51.1094474004', 'Dell S5830dn version NH62.YS.N636 kernel 3.0.0 All-N-1', 'Dell S5830dn 7XQ1R92 LW62.DN4.P636', 'Dell', 'S5830dn'],
  ];
  for (const [oid, descr, hr, manufacturer, model] of rows) {
    it(`${descr.slice(0, 48)} -> ${manufacturer} ${model ?? '(no model)'}`, () => {
      const values: OidValues = new Map();
      values.set('1.3.6.1.2.1.1.1.0', str(descr));
      if (oid) values.set('1.3.6.1.2.1.1.2.0', { type: 'oid', value: oid });
      if (hr) values.set('1.3.6.1.2.1.25.3.2.1.3.1', str(hr));
      const p = parsePrinter(values, '127.0.1.1', NOW);
      assert.equal(p.info.manufacturer, manufacturer);
      assert.equal(p.info.model, model);
    });
  }
  it('model cleaning keeps real model words: only trailing firmware, service tags (Dell) and the serial go', () => {
    assert.equal(cleanModel('Lexmark MS810DN'), 'MS810DN', 'a lone model that looks like a tag stays');
    assert.equal(cleanModel('Lexmark MS810DN 7XQ1R92'), 'MS810DN 7XQ1R92', 'service tags are Dell-only');
    assert.equal(cleanModel('Dell S5830dn 7XQ1R92 LW62.DN4.P636', { brand: 'Dell' }), 'S5830dn');
    assert.equal(cleanModel('Canon LBP6670 MKRA012345', { serial: 'MKRA012345' }), 'LBP6670');
    assert.equal(cleanModel('ZTC TLP 2824 Plus'), 'TLP 2824 Plus');
    assert.equal(cleanModel('HP Color LaserJet MFP M477fdw'), 'Color LaserJet MFP M477fdw');
    assert.equal(cleanModel('Generic 28C-1'), undefined);
  });
});

describe('supply names and counters a technician bills from', () => {
  it('two-letter colour codes are words, not part-number prefixes', () => {
    assert.equal(normaliseColour('PK-3010S'), undefined);
    assert.equal(normaliseColour('MK-1150'), undefined);
    assert.equal(normaliseColour('LC-3219XL'), undefined);
    assert.equal(normaliseColour('PK'), 'photo_black');
    assert.equal(normaliseColour('Photo Black'), 'photo_black');
    assert.equal(normaliseColour('MK'), 'matte_black');
  });
  it('page_count is mono + colour only when the printer reports those two and no total', () => {
    const base = (): OidValues => new Map<string, SnmpValue>([
      ['1.3.6.1.2.1.1.2.0', { type: 'oid', value: '1.3.6.1.4.1.253.8.62.1' }],
      ['1.3.6.1.4.1.253.8.53.13.2.1.6.1.20.34', int(700)],
      ['1.3.6.1.4.1.253.8.53.13.2.1.6.1.20.33', int(300)],
    ]);
    assert.equal(parsePrinter(base(), '127.0.1.1', NOW).metrics.page_count, 1000);
    const onlyMono = base();
    onlyMono.delete('1.3.6.1.4.1.253.8.53.13.2.1.6.1.20.33');
    assert.equal(parsePrinter(onlyMono, '127.0.1.1', NOW).metrics.page_count, undefined, 'never a guess');
    const withTotal = base();
    withTotal.set('1.3.6.1.2.1.43.10.2.1.4.1.1', int(1234));
    assert.equal(parsePrinter(withTotal, '127.0.1.1', NOW).metrics.page_count, 1234, 'the printer\'s own total wins');
  });
});
