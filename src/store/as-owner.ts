// Root's commands on the box (provisioning at boot, `passwd` over SSH) write the agent's database.
// Files SQLite creates then (the -wal and -shm files, or the database itself on a first boot) must
// belong to the agent's user, or the agent could not open them. So while root touches the data
// directory it takes the directory owner's identity as its effective one, and gives it back after.
import { mkdirSync, statSync } from 'node:fs';

export function asDataDirOwner<T>(dataDir: string, fn: () => T): T {
  mkdirSync(dataDir, { recursive: true, mode: 0o750 });
  if (process.geteuid?.() !== 0) return fn();
  const { uid, gid } = statSync(dataDir);
  if (uid === 0) return fn();
  process.setegid!(gid);
  process.seteuid!(uid);
  try {
    return fn();
  } finally {
    process.seteuid!(0);
    process.setegid!(0);
  }
}
