// A large site for the Printers page: `saved` saved printers, each with two raw readings
// (a day apart) and four supplies, one printer in 97 with a status line, and `discovered`
// unsaved ones that POST /devices/save/all turns into a burst of `device_change` events. Shared by
// test/agent/ui/printers-large.test.ts and scripts/bench/printers-page.ts. Addresses are on loopback
// (127.4/16, 127.5/16) and nothing reads them: allowed_ranges is empty.
import { DAY, HOUR, device, metrics, ndjson } from './seed.js';

export const largeSerial = (i: number) => `LARGE-${String(i).padStart(5, '0')}`;
/** Sorted before LARGE-*: once saved, the first page of the list. */
export const foundSerial = (i: number) => `FOUND-${String(i).padStart(4, '0')}`;
/** The last printer (by serial, the list's order) has a model and location no other has. */
export const LAST_MODEL = 'TASKalfa 9003i';
export const lastLocation = (saved: number) => `Building 9 room ${saved - 1}`;
/** Its newest page count (the first printer's is 20,100). */
export const pageCountOf = (i: number) => 20_100 + i;
const MODELS = [['HP', 'LaserJet M507'], ['Brother', 'MFC-L8900CDW'], ['Kyocera', 'ECOSYS P2040dn'], ['Canon', 'iR-ADV C5535']];

export function largeSite(now: number, saved: number, discovered: number): string {
  const lines: object[] = [];
  for (let i = 0; i < saved; i++) {
    const s = largeSerial(i);
    const last = i === saved - 1;
    const [manufacturer, model] = last ? ['Kyocera', LAST_MODEL] : MODELS[i % MODELS.length];
    lines.push(device(s, `127.4.${i >> 8}.${i & 255}`, now, { is_saved: true, manufacturer, model, location: last ? lastLocation(saved) : `Building ${i % 9} room ${i}`,
      asset_number: `AS-${i}`, status_messages: i % 97 === 0 ? ['Paper jam in tray 2'] : [] }));
    const toner = (d: number) => ({ black: Math.max(1, 80 - (i % 70) - d), cyan: 60 - d, magenta: 50 - d, yellow: 40 - d });
    lines.push(metrics(s, 'raw', now - DAY, { page_count: pageCountOf(i) - 100, toner_levels: toner(2) }));
    lines.push(metrics(s, 'raw', now - HOUR, { page_count: pageCountOf(i), toner_levels: toner(0) }));
  }
  for (let i = 0; i < discovered; i++) lines.push(device(foundSerial(i), `127.5.${i >> 8}.${i & 255}`, now, { manufacturer: 'Epson', model: 'WF-C5790' }));
  return ndjson(lines);
}
