// Test helper: small real file systems standing in for the box's data card. A tmpfs of a chosen
// size is mounted (needs root, as CI has) and filled with a real file until the kernel says ENOSPC.
//   const dir = mountCard(24); fill(dir); ...; unfill(dir); unmountCards() in after().
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why tests that mount cannot run here, or false when they can. */
export const cannotMount: string | false = process.getuid?.() === 0 ? false : 'mounting a small tmpfs needs root (CI runs as root)';

const mounts: string[] = [];

export function mountCard(sizeMiB: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-card-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0755`, 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

export function unmountCards(): void {
  for (const dir of mounts.splice(0)) {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `<dir>/filler` until the file system is full (1 MiB, then 4 KiB, then 512 B writes). */
export function fill(dir: string): void {
  const fd = openSync(join(dir, 'filler'), 'a');
  try {
    for (const size of [1024 * 1024, 4096, 512]) {
      const chunk = Buffer.alloc(size);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    closeSync(fd);
  }
}

export const unfill = (dir: string): void => rmSync(join(dir, 'filler'), { force: true });
