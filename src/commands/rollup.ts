// printbox-agent rollup: one roll-up + retention pass at once against the configured database
// (operators and tests). `--now RFC3339` runs the pass as of another time (tests, recovery).
import { databasePath, loadConfig } from '../config/config.js';
import { openDatabase } from '../store/db.js';
import { rollupPass } from '../rollup/schedule.js';

export async function run(args: string[], configPath: string | undefined): Promise<number> {
  let now = new Date();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const v = a === '--now' ? args[++i] : a.startsWith('--now=') ? a.slice(6) : undefined;
    if (v === undefined || Number.isNaN(Date.parse(v))) {
      process.stderr.write('usage: printbox-agent rollup [--now RFC3339]\n');
      return 2;
    }
    now = new Date(v);
  }
  const cfg = loadConfig(configPath);
  const db = openDatabase(databasePath(cfg));
  try {
    const t0 = Date.now();
    const r = await rollupPass(db, now);
    process.stdout.write(JSON.stringify({ ms: Date.now() - t0, ...r }) + '\n');
    return 0;
  } finally {
    db.close();
  }
}
