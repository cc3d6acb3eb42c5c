// A large response body made piece by piece straight into byte chunks: text is encoded into the
// current chunk and bytes are copied in, so no string of the whole body is ever made. One string
// of a 6 MiB list was copied by V8's young-generation collections as it grew (1 MiB under the
// unit's flags) and flattened again to be written (docs/performance.md, a large site).

export class BodyChunks {
  private readonly chunks: Buffer[] = [];
  private chunk: Buffer;
  private used = 0;

  constructor(private readonly chunkBytes = 64 * 1024) {
    this.chunk = Buffer.allocUnsafe(chunkBytes);
  }

  /** Appends `s` as UTF-8. */
  text(s: string): void {
    // At most 3 bytes a UTF-16 unit (a surrogate pair is 4 bytes for 2 units).
    this.room(s.length * 3);
    this.used += this.chunk.write(s, this.used);
  }

  /** Appends `b`'s bytes from `start` to `end` (all of them by default). */
  bytes(b: Buffer, start = 0, end = b.length): void {
    this.room(end - start);
    this.used += b.copy(this.chunk, this.used, start, end);
  }

  /** The chunks made, in order; the builder is not used after. */
  done(): Buffer[] {
    if (this.used > 0) this.chunks.push(this.chunk.subarray(0, this.used));
    return this.chunks;
  }

  /** Starts a new chunk, at least `bytes` long, when the current one has less room. */
  private room(bytes: number): void {
    if (this.chunk.length - this.used >= bytes) return;
    if (this.used > 0) this.chunks.push(this.chunk.subarray(0, this.used));
    this.chunk = Buffer.allocUnsafe(Math.max(this.chunkBytes, bytes));
    this.used = 0;
  }
}
