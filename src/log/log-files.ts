// Two append-only NDJSON files on the data partition (`current` and `previous`), each at most
// `fileBytes`: what the persistent log store (persistent-log.ts) writes through. Made for a flash
// card and power cuts: a batch is one write() and one fdatasync(); a file that would outgrow its
// size is renamed over the previous one (atomic), so at most two files ever exist; a power cut can
// only tear the last line of `current`, which reading skips and opening cuts off.
import {
  closeSync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { syncDirectory } from '../shared/atomic-file.js';

export const CURRENT = 'warnings.ndjson';
export const PREVIOUS = 'warnings.1.ndjson';

/** What the files cost the card since opening: the figures behind docs/performance.md. */
export interface FileStats {
  /** write() calls (one per batch; a rotation adds none). */
  writes: number;
  /** fdatasync/fsync calls, the directory's included (each forces the card to program pages). */
  syncs: number;
  bytes: number;
  rotations: number;
}

export class LogFiles {
  readonly stats: FileStats = { writes: 0, syncs: 0, bytes: 0, rotations: 0 };
  private fd: number | undefined;
  private size = 0;

  constructor(
    private readonly dir: string,
    private readonly fileBytes: number,
  ) {}

  /** The lines of both files, oldest first, without a torn or unreadable line. Never throws for a
   * missing file. Each file is read only up to 2 x fileBytes from its end (a file someone grew
   * by hand must not fill the memory). */
  readLines(): string[] {
    return [...readTail(join(this.dir, PREVIOUS), 2 * this.fileBytes), ...readTail(join(this.dir, CURRENT), 2 * this.fileBytes)];
  }

  /** Appends `text` (whole lines, each ending in "\n") and waits until the card has it. Throws the
   * file system's error (ENOSPC, EROFS, EIO ...); the caller decides what that costs. */
  append(text: string): void {
    const buf = Buffer.from(text, 'utf8');
    let before: number | undefined;
    try {
      if (this.fd === undefined) this.open();
      if (this.size > 0 && this.size + buf.length > this.fileBytes) this.rotate();
      const fd = this.fd!;
      before = this.size;
      let done = 0;
      this.stats.writes++;
      while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
      this.stats.bytes += buf.length;
      this.size += buf.length;
      fdatasyncSync(fd);
      this.stats.syncs++;
    } catch (err) {
      // Part of the batch may be in the file (ENOSPC mid-write): take it back, since the caller
      // tries the whole batch again; should even that fail, opening again cuts a torn line off.
      if (before !== undefined && this.fd !== undefined) {
        try {
          ftruncateSync(this.fd, before);
        } catch {
          // left to the repair on opening
        }
      }
      this.closeQuietly();
      throw err;
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    closeSync(fd);
  }

  private closeQuietly(): void {
    try {
      this.close();
    } catch {
      // already failing: the error that matters is the caller's
    }
  }

  private open(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o750 });
    const fd = openSync(join(this.dir, CURRENT), 'a+', 0o640);
    this.fd = fd;
    this.size = fstatSync(fd).size;
    if (this.size === 0) {
      // Perhaps just made: its directory entry must reach the card before its first lines count.
      syncDirectory(this.dir);
      this.stats.syncs++;
    }
    // A power cut in the middle of a batch leaves a line without its "\n": cut it off, or the
    // next batch's first line would be glued to it and lost too.
    const keep = lastNewlineEnd(fd, this.size);
    if (keep < this.size) {
      ftruncateSync(fd, keep);
      fsyncSync(fd);
      this.stats.syncs++;
      this.size = keep;
    }
  }

  private rotate(): void {
    this.close();
    renameSync(join(this.dir, CURRENT), join(this.dir, PREVIOUS));
    this.fd = openSync(join(this.dir, CURRENT), 'a+', 0o640);
    this.size = 0;
    // The rename and the new file are directory changes: flushed, or a power cut could undo them.
    syncDirectory(this.dir);
    this.stats.syncs++;
    this.stats.rotations++;
  }
}

function readTail(file: string, max: number): string[] {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - max);
    const buf = Buffer.alloc(size - start);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    const lines = buf.subarray(0, got).toString('utf8').split('\n');
    if (start > 0) lines.shift(); // begins mid-line
    lines.pop(); // "" after the last "\n", or a torn last line
    return lines.filter((l) => l !== '');
  } finally {
    closeSync(fd);
  }
}

/** The length of the file up to and including its last "\n" (0 if it has none). */
function lastNewlineEnd(fd: number, size: number): number {
  const chunk = Buffer.alloc(4096);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const i = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (i >= 0) return start + i + 1;
    end = start;
  }
  return 0;
}
