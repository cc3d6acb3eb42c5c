// A hostile printer's names (supplies, paper trays, IPP markers and collection members called
// `constructor`, `prototype`, `__proto__`, `toString`, `hasOwnProperty`), for the tests that read
// them through the real parsers and then back the box up and restore it.
//
//   writeHostileRecording(dir, serial) -> an snmprec: a real printer's recording (printmaster's
//                                         Kyocera P2040dw) with such supplies and a tray added
//   hostileIppReply(serial)            -> a Get-Printer-Attributes reply (RFC 8010) with such
//                                         marker-names and marker-types
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturePath } from './snmpsim.js';

export const HOSTILE_NAMES = ['constructor', 'prototype', '__proto__', 'toString', 'hasOwnProperty'] as const;

/** The SNMP supplies added (type other, unit percent, capacity 100) and the key the box stores each as. */
export const HOSTILE_SNMP_SUPPLIES = [
  { name: 'constructor', level: 5, key: 'supply_constructor' },
  { name: 'prototype', level: 40, key: 'supply_prototype' },
  // slug(): the underscores go, and `proto` is no key anyone refuses.
  { name: '__proto__', level: 60, key: 'proto' },
  { name: 'toString', level: 70, key: 'tostring' },
  { name: 'hasOwnProperty', level: 80, key: 'hasownproperty' },
] as const;

const BASE = 'printmaster/kyocera_p2040.snmprec';
const BASE_SERIAL = 'VD21457943';
const SUPPLIES = '1.3.6.1.2.1.43.11.1.1';
const INPUT = '1.3.6.1.2.1.43.8.2.1';

const cmpOid = (a: string, b: string) => {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return pa.length - pb.length;
};

/** Writes `<dir>/hostile-names.snmprec` and returns its path: supplies 3-7 and tray 1's name are hostile. */
export function writeHostileRecording(dir: string, serial: string): string {
  const lines = readFileSync(fixturePath(BASE), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.split(BASE_SERIAL).join(serial));
  HOSTILE_SNMP_SUPPLIES.forEach((s, i) => {
    const row = `1.${i + 3}`;
    lines.push(
      `${SUPPLIES}.2.${row}|2|1`, // marker index
      `${SUPPLIES}.3.${row}|2|0`, // no colorant
      `${SUPPLIES}.4.${row}|2|3`, // supplyThatIsConsumed
      `${SUPPLIES}.5.${row}|2|1`, // type other
      `${SUPPLIES}.6.${row}|4|${s.name}`,
      `${SUPPLIES}.7.${row}|2|19`, // percent
      `${SUPPLIES}.8.${row}|2|100`,
      `${SUPPLIES}.9.${row}|2|${s.level}`,
    );
  });
  lines.push(`${INPUT}.13.1.1|4|constructor`, `${INPUT}.13.1.2|4|__proto__`);
  const path = join(dir, 'hostile-names.snmprec');
  writeFileSync(path, lines.sort((a, b) => cmpOid(a.split('|')[0], b.split('|')[0])).join('\n') + '\n');
  return path;
}

/** One attribute (or, with name '', an additional value) in IPP's binary encoding (RFC 8010). */
function attr(tag: number, name: string, value: Buffer | string | number): Buffer {
  const v = typeof value === 'number' ? Buffer.from([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]) : Buffer.from(value);
  const n = Buffer.from(name);
  return Buffer.concat([Buffer.from([tag, n.length >> 8, n.length & 255]), n, Buffer.from([v.length >> 8, v.length & 255]), v]);
}
const set = (tag: number, name: string, values: (string | number)[]) => Buffer.concat(values.map((v, i) => attr(tag, i === 0 ? name : '', v)));
const col = (name: string, members: [string, number][]) =>
  Buffer.concat([attr(0x34, name, ''), ...members.flatMap(([m, v]) => [attr(0x4a, '', m), attr(0x21, '', v)]), attr(0x37, '', '')]);

/** The IPP markers (name, type, level) and the key the box stores each as. */
export const HOSTILE_IPP_MARKERS = [
  // A name of no known kind is the key: renamed.
  { name: 'constructor', type: 'other', level: 5, key: 'supply_constructor' },
  { name: 'prototype', type: 'other', level: 40, key: 'supply_prototype' },
  // A type that is a prototype's property name: no kind (before, Object's: a key "undefined").
  { name: 'Drum Unit', type: 'constructor', level: 70, key: 'drum' },
  { name: 'Fuser', type: 'to-string', level: 75, key: 'fuser' },
  { name: 'hasOwnProperty', type: '__proto__', level: 80, key: 'hasownproperty' },
  { name: 'Black Toner', type: 'toner', level: 90, key: 'black' },
] as const;

export const HOSTILE_IPP_PAGES = 4321;

/** A Get-Printer-Attributes reply of a printer with serial `serial` and the markers above. */
export function hostileIppReply(serial: string): Buffer {
  const printer = [
    attr(0x41, 'printer-make-and-model', 'Acme Hostile 1'),
    attr(0x41, 'printer-device-id', `MFG:Acme;MDL:Hostile 1;CMD:PWGRaster;SN:${serial};`),
    attr(0x23, 'printer-state', 3),
    set(0x42, 'marker-names', HOSTILE_IPP_MARKERS.map((m) => m.name)),
    set(0x44, 'marker-types', HOSTILE_IPP_MARKERS.map((m) => m.type)),
    set(0x42, 'marker-colors', HOSTILE_IPP_MARKERS.map((m) => (m.type === 'toner' ? '#000000' : 'none'))),
    set(0x21, 'marker-levels', HOSTILE_IPP_MARKERS.map((m) => m.level)),
    // Collection members named like a prototype's properties, beside the real ones.
    col('printer-impressions-completed-col', [['__proto__', 1], ['constructor', 2], ['total', HOSTILE_IPP_PAGES], ['monochrome', HOSTILE_IPP_PAGES]]),
    set(0x44, 'sides-supported', ['one-sided']),
  ];
  return Buffer.concat([
    Buffer.from([0x02, 0x00, 0, 0, 0, 0, 0, 1]),
    Buffer.from([0x01]), attr(0x47, 'attributes-charset', 'utf-8'), attr(0x48, 'attributes-natural-language', 'en'),
    Buffer.from([0x04]), ...printer, Buffer.from([0x03]),
  ]);
}
