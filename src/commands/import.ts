// printbox-agent import FILE: restores an NDJSON backup into the configured database, all or nothing.
// `-` reads stdin. A version 2 backup is refused unless its trailer is there and matches
// (docs/backup-format.md); a version 1 backup imports with a warning that it could not be checked.
import { createReadStream } from 'node:fs';
import { databasePath, loadConfig } from '../config/config.js';
import { openDatabase } from '../store/db.js';
import { importNdjson } from '../store/ndjson.js';
import { errorText } from '../shared/error-text.js';

export async function run(args: string[], configPath: string | undefined): Promise<number> {
  if (args.length !== 1) {
    process.stderr.write('usage: printbox-agent import FILE\n');
    return 2;
  }
  const cfg = loadConfig(configPath);
  const db = openDatabase(databasePath(cfg));
  try {
    const input = args[0] === '-' ? process.stdin : createReadStream(args[0]);
    const r = await importNdjson(db, input);
    if (r.warning) process.stderr.write(`printbox-agent import: ${args[0]}: warning: ${r.warning}\n`);
    const skipped = r.skipped ? `; ${r.skipped} raw rows already stored, skipped` : '';
    // Meter reads are named only when the file has some: a backup without them prints what it always did.
    const reads = r.meter_reads || r.meter_reads_skipped;
    const what = reads ? `${r.devices} devices, ${r.metrics} metric rows and ${r.meter_reads} billing meter reads` : `${r.devices} devices and ${r.metrics} metric rows`;
    const readsKept = r.meter_reads_skipped ? `; ${r.meter_reads_skipped} meter reads not imported: the box has a read for that printer and period already, which stays` : '';
    process.stdout.write(`imported ${what} from ${args[0]}${skipped}${readsKept}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`printbox-agent import: ${args[0]}: ${errorText(err)}; nothing was imported\n`);
    return 1;
  } finally {
    db.close();
  }
}
