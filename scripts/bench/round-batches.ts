// What writing a polling round in batches costs the card: the same rounds of real
// recordings (test/fixtures/snmp, each printer a copy with its own serial) written through the
// agent's own store (DeviceStore.recordReadings, as DiscoveryService's round does) in one
// transaction a round, then in batches of each size, each on a fresh database on the disk
// (synchronous = FULL, WAL: what the agent runs). Per reading: bytes the process sent to the block
// layer (/proc/self/io write_bytes), WAL frames appended, CPU; per round: commits. No SNMP: the
// round's reads are large-site.ts's; this is only its write.
//   npm run build && node --max-semi-space-size=1 --max-old-space-size=96 dist/scripts/bench/round-batches.js
//     [--printers 2000] [--rounds 4] [--batches 2000,500,250,100] [--dir /var/tmp] [--checkpoints]
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/store/db.js';
import { DeviceStore, type Reading } from '../../src/store/devices.js';
import { mergeObservation } from '../../src/discovery/merge.js';
import { toObservation } from '../../src/discovery/snmp-observation.js';
import { parsePrinter } from '../../src/snmp/parse/printer.js';
import { readSnmprec } from '../../test/kit/snmprec.js';

const here = dirname(fileURLToPath(import.meta.url));
const option = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const PRINTERS = Number(option('printers', '2000'));
const ROUNDS = Number(option('rounds', '4'));
const BATCHES = option('batches', `${PRINTERS},500,250,100`).split(',').map(Number);
const DIR = option('dir', '/var/tmp');
const MINUTE = 60_000;
// --checkpoints: leave the WAL to SQLite's own checkpoints (every 1,000 pages), as the agent does,
// so their writes into the database file count too; WAL frames are then not counted.
const OWN_CHECKPOINTS = process.argv.includes('--checkpoints');

const root = join(here, '../../../test/fixtures/snmp');
const recordings = readdirSync(root, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => readdirSync(join(root, d.name)).filter((f) => f.endsWith('.snmprec')).map((f) => readSnmprec(join(root, d.name, f))));

function writeBytes(): number {
  return Number(/^write_bytes:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
}

/** One round's readings: every printer read at `now`, its page counter up by `round`. */
function roundOf(devices: DeviceStore, now: number, round: number): Reading[] {
  const out: Reading[] = [];
  for (let i = 0; i < PRINTERS; i++) {
    const ip = `127.61.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    const parsed = parsePrinter(recordings[i % recordings.length], ip, new Date(now));
    const o = toObservation(parsed, ip, now);
    if (!o) continue;
    const serial = `RB${String(i).padStart(6, '0')}`;
    o.serial = serial;
    o.printerInfo.serial = serial;
    const existing = devices.get(serial);
    out.push({
      device: { ...mergeObservation(existing, o), ...(existing ? {} : { is_saved: true }) },
      snapshot: { serial, ts: now, ...parsed.metrics, page_count: (parsed.metrics.page_count ?? 0) + round },
      existed: Boolean(existing),
    });
  }
  return out;
}

console.log(`# round writes in batches: ${PRINTERS} printers from ${recordings.length} recordings, ${ROUNDS} rounds after a first one, node ${process.version} ${process.execArgv.join(' ')}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('| readings a transaction | commits a round | write_bytes KiB / reading | WAL frames / reading | CPU ms / reading (write only) | load |');
console.log('|---|---|---|---|---|---|');
for (const batch of BATCHES) {
  const dir = mkdtempSync(join(DIR, 'printbox-round-batches-'));
  try {
    const db = openDatabase(join(dir, 'printbox.db'));
    const devices = new DeviceStore(db);
    const t0 = Date.now() - (ROUNDS + 2) * 15 * MINUTE;
    devices.recordReadings(roundOf(devices, t0, 0)); // the first round makes every record
    let bytes = 0;
    let frames = 0;
    let cpu = 0;
    let readings = 0;
    for (let r = 1; r <= ROUNDS; r++) {
      const round = roundOf(devices, t0 + r * 15 * MINUTE, r);
      if (!OWN_CHECKPOINTS) db.pragma('wal_checkpoint(TRUNCATE)');
      const b0 = writeBytes();
      const c0 = process.cpuUsage();
      for (let k = 0; k < round.length; k += batch) devices.recordReadings(round.slice(k, k + batch));
      const c = process.cpuUsage(c0);
      cpu += (c.user + c.system) / 1000;
      bytes += writeBytes() - b0;
      // The WAL's frames are what this round appended (checkpointed away before it): 24-byte header each plus a page.
      if (!OWN_CHECKPOINTS) frames += (db.pragma('wal_checkpoint(PASSIVE)', { simple: false }) as { log: number }[])[0].log;
      readings += round.length;
    }
    db.close();
    console.log(`| ${batch} | ${Math.ceil(PRINTERS / batch)} | ${(bytes / 1024 / readings).toFixed(2)} | ${(frames / readings).toFixed(3)} | ${(cpu / readings).toFixed(3)} | ${loadavg()[0].toFixed(2)} |`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
