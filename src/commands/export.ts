// printbox-agent export: writes the configured database as NDJSON to stdout, format version 2
// (docs/backup-format.md): the trailer at the end lets import tell a complete backup from a cut one.
import { databasePath, loadConfig } from '../config/config.js';
import { openDatabase } from '../store/db.js';
import { exportNdjson } from '../store/ndjson.js';

export async function run(args: string[], configPath: string | undefined): Promise<number> {
  if (args.length !== 0) {
    process.stderr.write('usage: printbox-agent export > backup.ndjson\n');
    return 2;
  }
  const cfg = loadConfig(configPath);
  const db = openDatabase(databasePath(cfg));
  try {
    await exportNdjson(db, process.stdout);
    return 0;
  } finally {
    db.close();
  }
}
