// A reserve file on the data file system: space set aside while there is plenty, given back the
// moment the file system is full, so the agent can still open its database (SQLite needs room for
// its -wal and -shm files), keep writing readings and prune old rows while whoever filled the
// card is found. Made once in a box's life; its blocks are allocated with zeros so that a
// file system cannot hand them out twice (a sparse file would free nothing when deleted).
import { closeSync, fsyncSync, openSync, rmSync, statfsSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const RESERVE_FILE = 'reserve.bin';
export const RESERVE_BYTES = 8 * 1024 * 1024;

/** Bytes free for an unprivileged writer on the file system holding `dir`, or undefined. */
export function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

export function reservePath(dataDir: string): string {
  return join(dataDir, RESERVE_FILE);
}

export function hasReserve(dataDir: string): boolean {
  try {
    return statSync(reservePath(dataDir)).size >= RESERVE_BYTES;
  } catch {
    return false;
  }
}

/**
 * Makes the reserve file when it is missing and at least `minFreeAfter` bytes would stay free, so
 * that making it never brings the card near full. Returns whether the reserve exists afterwards.
 * A file left short by a power cut is made again.
 */
export function ensureReserve(dataDir: string, minFreeAfter: number): boolean {
  if (hasReserve(dataDir)) return true;
  const path = reservePath(dataDir);
  rmSync(path, { force: true });
  const free = freeBytes(dataDir);
  if (free === undefined || free - RESERVE_BYTES < minFreeAfter) return false;
  const fd = openSync(path, 'w', 0o600);
  try {
    const chunk = Buffer.alloc(1024 * 1024);
    for (let done = 0; done < RESERVE_BYTES; done += chunk.length) writeSync(fd, chunk);
    fsyncSync(fd);
  } catch {
    closeSync(fd);
    rmSync(path, { force: true });
    return false;
  }
  closeSync(fd);
  return true;
}

/** Gives the reserve back to the file system; true when there was one and it is gone. */
export function releaseReserve(dataDir: string): boolean {
  const had = hasReserve(dataDir);
  try {
    rmSync(reservePath(dataDir), { force: true });
  } catch {
    return false; // a read-only file system: nothing to give back there
  }
  return had;
}
