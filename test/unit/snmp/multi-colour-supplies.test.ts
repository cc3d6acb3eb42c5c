// Multi-colour cartridges: an inkjet whose Printer MIB lists a "tri-color ink
// cartridge" beside a "black ink cartridge" was stored as `black` and `black_2`. A cartridge that
// holds several colourants gets a name of its own (`tri_color`, `photo`), by SNMP and by IPP alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePrinter } from '../../../src/snmp/parse/printer.js';
import { normaliseColour, supplyKey } from '../../../src/snmp/parse/supplies.js';
import { ippSupplies } from '../../../src/ipp/supplies.js';
import type { OidValues, SnmpValue } from '../../../src/snmp/types.js';

const int = (n: number): SnmpValue => ({ type: 'int', value: n });
const str = (s: string): SnmpValue => ({ type: 'str', value: s });
const S = '1.3.6.1.2.1.43.11.1.1'; // prtMarkerSuppliesEntry
const C = '1.3.6.1.2.1.43.12.1.1'; // prtMarkerColorantEntry

function supply(v: OidValues, i: number, type: number, descr: string, level: number, colorant?: number): void {
  v.set(`${S}.5.1.${i}`, int(type));
  v.set(`${S}.6.1.${i}`, str(descr));
  v.set(`${S}.7.1.${i}`, int(19)); // percent
  v.set(`${S}.8.1.${i}`, int(100));
  v.set(`${S}.9.1.${i}`, int(level));
  if (colorant !== undefined) v.set(`${S}.3.1.${i}`, int(colorant));
}

test('an inkjet with a tri-color and a black cartridge (HP-style Printer MIB): tri_color and black, a colour printer', () => {
  const v: OidValues = new Map();
  // The colorant table names black and "tri-color": no single colour for the second cartridge.
  supply(v, 1, 6, 'black ink cartridge', 40, 1);
  supply(v, 2, 6, 'tri-color ink cartridge', 70, 2);
  v.set(`${C}.4.1.1`, str('black'));
  v.set(`${C}.4.1.2`, str('tri-color'));
  const p = parsePrinter(v, '127.0.0.9', new Date(0));
  assert.deepEqual(p.metrics.toner_levels, { black: 40, tri_color: 70 });
  assert.deepEqual(p.info.consumables, ['black', 'tri_color']);
  assert.equal(p.info.is_color, true);
});

test('the same printer without a colorant table, and one whose colorant column is empty', () => {
  const v: OidValues = new Map();
  supply(v, 1, 6, 'Black Cartridge', 10);
  supply(v, 2, 6, 'Tri-color Cartridge', 20);
  assert.deepEqual(parsePrinter(v, '127.0.0.9', new Date(0)).metrics.toner_levels, { black: 10, tri_color: 20 });
});

test('multi-colour names: tri-colour, three-colour, CMY, C/M/Y, "cyan, magenta and yellow", photo cartridges', () => {
  const cases: Array<[string, string | undefined]> = [
    ['tri-color ink cartridge', 'tri_color'],
    ['Tricolour Cartridge', 'tri_color'],
    ['Three-Colour Ink', 'tri_color'],
    ['CMY Cartridge', 'tri_color'],
    ['C/M/Y ink', 'tri_color'],
    ['Cyan, Magenta and Yellow Cartridge', 'tri_color'],
    ['Photo Cartridge', 'photo'],
    ['Photo ink', 'photo'],
    // Unchanged: single colours, photo black, light (photo) cyan, and a photoconductor (a drum).
    ['Photo Black Ink', 'photo_black'],
    ['Photo Cyan', 'light_cyan'],
    ['Cyan Ink', 'cyan'],
    ['Photo Conductor Unit', undefined],
  ];
  for (const [text, colour] of cases) assert.equal(normaliseColour(text), colour, text);
  assert.equal(supplyKey('opc', 'Photo Conductor Unit', undefined, false), 'drum');
  // On a "mono" device (one process colorant) a tri-colour cartridge is still not black.
  assert.equal(supplyKey('inkCartridge', 'tri-color ink cartridge', undefined, true), 'tri_color');
});

test('IPP: a marker of three colours (#00FFFF#FF00FF#FFFF00) or named tri-color is tri_color', () => {
  assert.deepEqual(
    ippSupplies({
      markers: [
        { name: 'Black Cartridge', color: '#000000', type: 'ink-cartridge', level: 55 },
        { name: 'Color Cartridge', color: '#00FFFF#FF00FF#FFFF00', type: 'ink-cartridge', level: 35 },
      ],
      supplies: [],
    }),
    { consumables: ['black', 'tri_color'], levels: { black: 55, tri_color: 35 }, partNumbers: {}, types: { black: 'inkCartridge', tri_color: 'inkCartridge' } },
  );
  assert.deepEqual(ippSupplies({ markers: [{ name: 'Tri-color', type: 'ink-cartridge', level: 5 }, { name: 'Black', type: 'ink-cartridge' }], supplies: [] })?.levels, { tri_color: 5 });
});
