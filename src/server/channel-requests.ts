// `proxy_request` frames: the server's HTTP requests to this agent, answered with
// `proxy_response`, or for a stream (SSE) with `proxy_stream_chunk` frames and `proxy_stream_end`.
// Bounded: how many run at once, the request body, the time and size of a plain answer, and what a
// stream may queue on a server that does not read (it is dropped, never buffered without bound).
import type { Logger } from '../log/logger.js';
import type { Handler } from '../api/app.js';
import { InProcessDispatcher, proxyTargetProblem, responseHeaders } from './proxy.js';
import { inheritedKeyProblem } from '../model/inherited-keys.js';

export const PROXY_LIMITS = {
  concurrent: 8,
  requestBytes: 1024 * 1024,
  responseBytes: 8 * 1024 * 1024,
  timeoutMs: 30_000,
  /** A stream is dropped when this much is queued on the socket. */
  streamBufferedBytes: 1024 * 1024,
};

export interface ChannelRequestsOptions {
  handler: Handler;
  log: Logger;
  send(type: string, data: Record<string, unknown>): boolean;
  buffered(): number;
}

export class ChannelRequests {
  private readonly dispatcher: InProcessDispatcher;
  private readonly inFlight = new Map<string, AbortController>();
  private readonly serverDeletes = new Set<string>();

  constructor(private readonly o: ChannelRequestsOptions) {
    this.dispatcher = new InProcessDispatcher(o.handler);
  }

  /** Ends every request in flight (the channel closed). */
  abortAll(): void {
    for (const c of this.inFlight.values()) c.abort();
    this.inFlight.clear();
  }

  cancel(id: string): void {
    this.inFlight.get(id)?.abort();
  }

  /** Whether `serial` was deleted by a request from the server (consumed once). */
  deletedByServer(serial: string): boolean {
    return this.serverDeletes.delete(serial);
  }

  handle(data: Record<string, unknown>): void {
    const id = data.request_id;
    if (typeof id !== 'string' || !id || id.length > 200) {
      // Nothing to answer to; the reference server knows no `error` frame from an agent.
      this.o.log.warn('proxy_request needs a request_id (a non-empty string)');
      return;
    }
    const answer = (status: number, message: string) =>
      this.o.send('proxy_response', {
        request_id: id,
        status_code: status,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: Buffer.from(message + '\n').toString('base64'),
      });
    const url = typeof data.url === 'string' ? data.url : '';
    const problem = proxyTargetProblem(url);
    if (problem) return void answer(502, problem);
    if (this.inFlight.has(id)) return void answer(409, `request_id ${id} is already in flight`);
    if (this.inFlight.size >= PROXY_LIMITS.concurrent) return void answer(503, `at most ${PROXY_LIMITS.concurrent} proxied requests at once`);
    const method = typeof data.method === 'string' && /^[A-Z]{1,16}$/.test(data.method) ? data.method : '';
    if (!method) return void answer(400, 'method must be an HTTP method in capitals');
    const body = typeof data.body === 'string' ? Buffer.from(data.body, 'base64') : Buffer.alloc(0);
    if (body.length > PROXY_LIMITS.requestBytes) return void answer(413, `request body over ${PROXY_LIMITS.requestBytes} bytes`);
    const headers: Record<string, string> = {};
    if (typeof data.headers === 'object' && data.headers !== null && !Array.isArray(data.headers)) {
      for (const [k, v] of Object.entries(data.headers)) if (typeof v === 'string' || typeof v === 'number') headers[k] = String(v);
    }
    if (method === 'POST' && new URL(url).pathname === '/devices/delete') this.noteServerDelete(body);

    const abort = new AbortController();
    this.inFlight.set(id, abort);
    const streaming = data.streaming === true;
    const done = () => this.inFlight.delete(id);
    this.dispatcher.dispatch({ url, method, headers, body }, abort.signal).then(
      (res) => (streaming ? this.stream(id, res, abort, done) : this.collect(id, res, abort, done, answer)),
      (err: Error) => {
        done();
        if (!abort.signal.aborted) answer(502, `proxied request failed: ${err.message}`);
      },
    );
  }

  private collect(
    id: string,
    res: import('node:http').IncomingMessage,
    abort: AbortController,
    done: () => void,
    answer: (status: number, message: string) => void,
  ): void {
    if (/^text\/event-stream/i.test(String(res.headers['content-type'] ?? ''))) return this.refuseStream(id, res, abort, done);
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      abort.abort();
      answer(504, `no complete answer within ${PROXY_LIMITS.timeoutMs} ms (a stream needs streaming: true)`);
    }, PROXY_LIMITS.timeoutMs);
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > PROXY_LIMITS.responseBytes) {
        clearTimeout(timer);
        abort.abort();
        answer(502, `answer over ${PROXY_LIMITS.responseBytes} bytes`);
        return;
      }
      chunks.push(c);
    });
    res.on('end', () => {
      clearTimeout(timer);
      done();
      this.o.send('proxy_response', {
        request_id: id,
        status_code: res.statusCode,
        headers: responseHeaders(res.headers),
        body: Buffer.concat(chunks).toString('base64'),
      });
    });
    res.on('error', () => {
      clearTimeout(timer);
      done();
    });
  }

  // An event stream asked for without `streaming: true` (the reference server's generic proxy,
  // which serves the box's UI) could only be answered whole when it ends: after the 30 s timeout,
  // as a 504. It is answered at once instead, as a complete stream whose one event says it is not
  // available here, so that the UI switches to refreshing (src/ui/assets/js/live.js) without waiting
  // and without a failed request in the browser; no slot is held.
  private refuseStream(id: string, res: import('node:http').IncomingMessage, abort: AbortController, done: () => void): void {
    abort.abort();
    res.resume();
    done();
    const reason = 'this request came through the central server without streaming: live events cannot pass';
    this.o.send('proxy_response', {
      request_id: id,
      status_code: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
      body: Buffer.from(`retry: 30000\nevent: unavailable\ndata: ${JSON.stringify({ reason })}\n\n`).toString('base64'),
    });
  }

  private stream(id: string, res: import('node:http').IncomingMessage, abort: AbortController, done: () => void): void {
    this.o.send('proxy_stream_chunk', { request_id: id, is_start: true, status_code: res.statusCode, headers: responseHeaders(res.headers) });
    let ended = false;
    const end = (error?: string) => {
      if (ended) return;
      ended = true;
      done();
      this.o.send('proxy_stream_end', { request_id: id, ...(error ? { error } : {}) });
    };
    res.on('data', (c: Buffer) => {
      if (this.o.buffered() > PROXY_LIMITS.streamBufferedBytes) {
        this.o.log.warn({ request_id: id }, 'dropping a proxied stream the server does not read');
        abort.abort();
        end('stream dropped: the server is not reading it');
        return;
      }
      this.o.send('proxy_stream_chunk', { request_id: id, chunk: c.toString('base64') });
    });
    res.on('end', () => end());
    res.on('error', () => end(abort.signal.aborted ? 'stream ended by the agent' : 'stream failed'));
    res.on('close', () => end());
  }

  private noteServerDelete(body: Buffer): void {
    try {
      const parsed = JSON.parse(body.toString('utf8')) as { serial?: unknown };
      // A body the route refuses (api/body.ts) deletes nothing, so nothing is noted.
      if (inheritedKeyProblem(parsed)) return;
      const serial = parsed.serial;
      if (typeof serial === 'string') this.serverDeletes.add(serial);
    } catch {
      // Not JSON: the route answers 400 and deletes nothing.
    }
  }
}
