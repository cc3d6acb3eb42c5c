// One HTTP request written byte for byte on a fresh TCP or TLS connection, so that a fuzzer can
// send what node:http refuses to (bad Content-Length, duplicated Transfer-Encoding, raw targets,
// control characters). Reads the answer's status line and headers, then only as much of the body
// as it needs to know the answer is complete; an event stream is complete once its head arrived.
import net from 'node:net';
import tls from 'node:tls';

export interface RawTarget {
  host: string;
  port: number;
  tls: boolean;
}

export interface RawAnswer {
  /** The status code, or 0 when no status line came (connection closed or reset, timeout). */
  status: number;
  /** The answer's head (status line and headers), as text. */
  head: string;
  /** The first 512 bytes of the body. */
  bodyStart: string;
  /** Why there was no (complete) answer. */
  error?: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export interface RawOptions {
  timeoutMs: number;
  /** End the sending side once the request is written (what a client cut off mid-body does). */
  halfClose?: boolean;
  /** The answer has no body whatever its headers say (a HEAD request). */
  headOnly?: boolean;
}

export function sendRaw(target: RawTarget, request: Buffer, opts: RawOptions): Promise<RawAnswer> {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const socket: net.Socket = target.tls
      ? tls.connect({ host: target.host, port: target.port, rejectUnauthorized: false, servername: undefined })
      : net.connect({ host: target.host, port: target.port });
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const end = buf.indexOf(HEAD_END);
      const head = (end >= 0 ? buf.subarray(0, end) : buf).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      resolve({
        status: status ? Number(status[1]) : 0,
        head,
        bodyStart: end >= 0 ? buf.subarray(end + 4, end + 4 + 512).toString('utf8') : '',
        ...(error && !status ? { error } : {}),
      });
    };
    const timer = setTimeout(() => finish('timeout'), opts.timeoutMs);
    socket.once(target.tls ? 'secureConnect' : 'connect', () => {
      socket.write(request);
      if (opts.halfClose) socket.end();
    });
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length < 1 << 20 ? Buffer.concat([buf, chunk]) : buf;
      if (answerComplete(buf, opts.headOnly)) finish();
    });
    socket.on('end', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.on('error', (e) => finish(e.message));
  });
}

/** Whether `buf` holds a whole answer: head plus Content-Length bytes, a last chunk, or a stream's head. */
function answerComplete(buf: Buffer, headOnly = false): boolean {
  const end = buf.indexOf(HEAD_END);
  if (end < 0) return false;
  if (headOnly) return true;
  const head = buf.subarray(0, end).toString('latin1').toLowerCase();
  const body = buf.length - end - 4;
  if (/^content-type: *text\/event-stream/m.test(head)) return true;
  if (/^http\/1\.[01] (1\d\d|204|304)/.test(head)) return true;
  const length = /^content-length: *(\d+)/m.exec(head);
  if (length) return body >= Number(length[1]);
  if (/^transfer-encoding: *chunked/m.test(head)) return buf.subarray(end + 4).includes('0\r\n\r\n');
  return false; // read until the server closes
}
