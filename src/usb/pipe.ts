// A printer interface's two bulk endpoints as a byte pipe (IEEE 1284.4-less "bidirectional"
// printer class protocol 2, or one IPP-over-USB interface, protocol 4). PJL and IPP readers are
// written against this, so they run on recorded replies in unit tests and on a real device here.

/** Bytes to the printer (bulk OUT) and from it (bulk IN), each bounded by a timeout. */
export interface BulkPipe {
  /** Sends all of `data`; rejects on a stall, a detach or after `timeoutMs`. */
  write(data: Uint8Array, timeoutMs: number): Promise<void>;
  /** One bulk IN transfer of at most `maxLength` bytes; an empty array when the printer had nothing within `timeoutMs`. */
  read(maxLength: number, timeoutMs: number): Promise<Uint8Array>;
}
