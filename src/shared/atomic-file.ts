// Writes a file so that a power cut leaves either the old content or the new, never half of it:
// a temporary file beside it, flushed, renamed over the old one, and the directory flushed.
import { chmodSync, closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export function writeFileAtomic(file: string, text: string, mode: number): void {
  const tmp = join(dirname(file), `.${basename(file)}.tmp`);
  try {
    writeFileSync(tmp, text, { mode });
    chmodSync(tmp, mode); // the umask may have narrowed it, or the file pre-existed
    const fd = openSync(tmp, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    rmSync(tmp, { force: true }); // a full card leaves no half-written file behind
    throw err;
  }
  renameSync(tmp, file);
  syncDirectory(dirname(file));
}

export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems (FAT among them) cannot fsync a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
