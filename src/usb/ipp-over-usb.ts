// One HTTP/1.1 exchange over an IPP-over-USB interface (PWG 5100.14: HTTP on the bulk endpoints):
// POST the Get-Printer-Attributes request, read the reply (Content-Length or chunked), bounded in
// size and time. One request per poll, so no tunnel daemon: the interface is released afterwards.
import type { BulkPipe } from './pipe.js';
import { decodeIppResponse, getPrinterAttributesRequest, printerStateOf, type IppPrinterState } from '../ipp/codec.js';

/** A Get-Printer-Attributes reply is a few KiB; more than this is not one. */
export const MAX_REPLY = 1024 * 1024;

export async function readIppPrinter(pipe: BulkPipe, opts: { timeoutMs: number }): Promise<IppPrinterState> {
  const body = getPrinterAttributesRequest('ipp://localhost/ipp/print');
  const head = `POST /ipp/print HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/ipp\r\nContent-Length: ${body.length}\r\n\r\n`;
  const deadline = Date.now() + opts.timeoutMs;
  await pipe.write(Buffer.concat([Buffer.from(head, 'latin1'), body]), opts.timeoutMs);
  const reply = await readHttpResponse(pipe, deadline);
  if (reply.status !== 200) throw new Error(`IPP over USB: HTTP ${reply.status} from the printer`);
  return printerStateOf(decodeIppResponse(reply.body));
}

export interface HttpReply {
  status: number;
  body: Buffer;
}

/** Reads one HTTP/1.1 response from the pipe until its body is complete or the deadline passes. */
export async function readHttpResponse(pipe: BulkPipe, deadline: number): Promise<HttpReply> {
  let buf = Buffer.alloc(0);
  const more = async (what: string) => {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`IPP over USB: no complete reply in time (${what}, ${buf.length} bytes so far)`);
    const chunk = await pipe.read(16384, left);
    if (chunk.length) buf = Buffer.concat([buf, chunk]);
    if (buf.length > MAX_REPLY + 16384) throw new Error(`IPP over USB: reply larger than ${MAX_REPLY} bytes`);
  };
  let end: number;
  while ((end = buf.indexOf('\r\n\r\n')) < 0) {
    if (buf.length > 16384) throw new Error('IPP over USB: HTTP headers larger than 16 KiB');
    await more('headers');
  }
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) throw new Error(`IPP over USB: not an HTTP reply (${JSON.stringify((lines[0] ?? '').slice(0, 40))})`);
  const header = (name: string) => lines.slice(1).find((l) => l.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
  buf = buf.subarray(end + 4);
  if (/chunked/i.test(header('transfer-encoding') ?? '')) {
    const parts: Buffer[] = [];
    let size = 0;
    for (;;) {
      let eol: number;
      while ((eol = buf.indexOf('\r\n')) < 0) await more('a chunk size');
      const n = parseInt(buf.subarray(0, eol).toString('latin1'), 16);
      if (!Number.isFinite(n) || n < 0) throw new Error('IPP over USB: bad chunk size');
      if (n === 0) break;
      if ((size += n) > MAX_REPLY) throw new Error(`IPP over USB: reply larger than ${MAX_REPLY} bytes`);
      while (buf.length < eol + 2 + n + 2) await more('a chunk');
      parts.push(buf.subarray(eol + 2, eol + 2 + n));
      buf = buf.subarray(eol + 2 + n + 2);
    }
    return { status: Number(m[1]), body: Buffer.concat(parts) };
  }
  const length = Number(header('content-length') ?? NaN);
  if (!Number.isInteger(length) || length < 0) throw new Error('IPP over USB: reply without Content-Length or chunked body');
  if (length > MAX_REPLY) throw new Error(`IPP over USB: reply of ${length} bytes, larger than ${MAX_REPLY}`);
  while (buf.length < length) await more('the body');
  return { status: Number(m[1]), body: buf.subarray(0, length) };
}
