// The WebSocket channel to the central server (server-protocol.md, "WebSocket channel"): the box
// dials out, so the server can reach it behind NAT. Handshake 10 s; a ping every 30 s; no pong
// for 60 s and the socket is dropped; reconnection waits 5 s, doubling to 5 min, with jitter, and
// goes back to 5 s once a connection has stayed up for a minute, unless the link knows the server
// is back (an HTTP heartbeat went through) and asks for a redial at once (redialNow). Frames are
// the protocol's envelope `{type, data, timestamp}`.
// `ws` is loaded on the first connection, not at start-up: a box without a server URL (local or
// password mode) never needs it, and once loaded it stays (about 0.5-1 MiB of RSS).
import type WebSocket from 'ws';
import type { Logger } from '../log/logger.js';
import { Backoff } from '../shared/backoff.js';
import type { TrustedCas } from '../net/http-client.js';
import { inheritedKeyProblem } from '../model/inherited-keys.js';

export interface Envelope {
  type: string;
  data?: Record<string, unknown>;
  timestamp?: string;
}

export interface ChannelOptions {
  /** The wss:// URL with the agent token, or undefined while there is none. */
  url(): string | undefined;
  /** The CAs the server's certificate is checked against, asked at each dial (link.ts trust()). */
  ca?: () => TrustedCas | undefined;
  log: Logger;
  onOpen(): void;
  onClose(): void;
  onFrame(frame: Envelope): void;
  /** A frame that is not the protocol's envelope: answered with an `error` frame. */
  onBadFrame(reason: string): void;
  /** The server refused the token at the handshake (HTTP 401/403); `url` is the one refused. */
  onRejected(url: string): void;
  /** Largest frame accepted; a larger one closes the socket (1009) and the channel reconnects. */
  maxFrameBytes?: number;
}

const HANDSHAKE_MS = 10_000;
const PING_MS = 30_000;
const READ_DEADLINE_MS = 60_000;
const GOOD_CONNECTION_MS = 60_000;
/** A stop waits this long for the server's answer to its close before cutting the connection. */
const CLOSE_MS = 1_000;
/** ws's WebSocket.OPEN (the class itself is not loaded until the first connection). */
const OPEN = 1;
let wsLoaded: typeof WebSocket | undefined;
let wsLoading: Promise<typeof WebSocket> | undefined;

export class ServerChannel {
  private ws: WebSocket | undefined;
  private readonly retry = new Backoff(true);
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private lastPong = 0;
  private openedAt = 0;
  private running = false;
  /** Counts start()s, so a connection deferred while `ws` loads belongs to one run. */
  private runs = 0;
  /** Connection attempts since start (the status shows it; tests count them). */
  attempts = 0;

  constructor(private readonly o: ChannelOptions) {}

  get connected(): boolean {
    return this.ws?.readyState === OPEN;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.runs++;
    this.connect();
  }

  /**
   * Ends the connection. An open one is closed as "going away" (1001) after the frames queued on
   * it (a last heartbeat) have gone out, within CLOSE_MS; any other is cut. Resolves once closed.
   */
  stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.retryTimer);
    const ws = this.ws;
    this.ws = undefined;
    if (!ws) return Promise.resolve();
    if (ws.readyState !== OPEN) {
      ws.terminate();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const cut = setTimeout(() => ws.terminate(), CLOSE_MS);
      ws.once('close', () => {
        clearTimeout(cut);
        resolve();
      });
      ws.close(1001, 'agent stopping');
    });
  }

  /** Running with no socket, open or dialling: waiting for its next try. */
  get waiting(): boolean {
    return this.running && !this.ws && wsLoaded !== undefined;
  }

  /**
   * Dials now instead of at the end of the backoff, when the channel is waiting (not connected,
   * not dialling); returns whether it dialled. The backoff itself goes on: a redial that fails
   * waits its next, doubled, step. The caller bounds how often it asks (link.ts, OncePer).
   */
  redialNow(): boolean {
    if (!this.waiting) return false;
    clearTimeout(this.retryTimer);
    this.connect();
    return true;
  }

  /** Sends a frame if connected; returns whether it was handed to the socket. */
  send(type: string, data?: Record<string, unknown>): boolean {
    if (!this.connected) return false;
    this.ws!.send(JSON.stringify({ type, data, timestamp: new Date().toISOString() }));
    return true;
  }

  /** Bytes queued on the socket and not yet sent: a slow server shows here first. */
  get buffered(): number {
    return this.ws?.bufferedAmount ?? 0;
  }

  private connect(): void {
    const url = this.o.url();
    if (!this.running || !url) return;
    if (!wsLoaded) {
      // Once, at the first connection; a stop (or stop and start) meanwhile is honoured as before.
      const run = this.runs;
      wsLoading ??= import('ws').then((m) => (wsLoaded = m.default));
      wsLoading.then(() => run === this.runs && this.connect(), (err: Error) => this.o.log.error({ err: err.message }, 'server channel: ws not loadable'));
      return;
    }
    this.attempts++;
    const ws = new wsLoaded(url, {
      handshakeTimeout: HANDSHAKE_MS,
      ca: this.o.ca?.(),
      maxPayload: this.o.maxFrameBytes ?? 4 * 1024 * 1024,
      perMessageDeflate: false,
    });
    this.ws = ws;
    ws.on('open', () => {
      this.openedAt = Date.now();
      this.lastPong = Date.now();
      this.pingTimer = setInterval(() => this.ping(ws), PING_MS);
      this.o.log.info('server channel connected');
      this.o.onOpen();
    });
    ws.on('pong', () => (this.lastPong = Date.now()));
    ws.on('message', (raw, isBinary) => this.receive(raw.toString(), isBinary));
    ws.on('unexpected-response', (_req, res) => {
      if (res.statusCode === 401 || res.statusCode === 403) this.o.onRejected(url);
      this.o.log.warn({ status: res.statusCode }, 'server channel refused');
      ws.terminate();
    });
    ws.on('error', (err) => this.o.log.debug({ err: err.message }, 'server channel error'));
    ws.on('close', (code) => {
      clearInterval(this.pingTimer);
      const wasOpen = this.openedAt > 0;
      if (wasOpen) {
        this.o.log.info({ code }, 'server channel closed');
        this.o.onClose();
      }
      if (wasOpen && Date.now() - this.openedAt >= GOOD_CONNECTION_MS) this.retry.reset();
      this.openedAt = 0;
      if (this.ws === ws) this.ws = undefined;
      this.scheduleReconnect();
    });
  }

  private ping(ws: WebSocket): void {
    if (Date.now() - this.lastPong > READ_DEADLINE_MS) {
      this.o.log.warn('server channel: no pong within 60 s, dropping it');
      ws.terminate();
      return;
    }
    ws.ping();
  }

  private scheduleReconnect(): void {
    if (!this.running) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), this.retry.next());
    this.retryTimer.unref();
  }

  private receive(text: string, isBinary: boolean): void {
    if (isBinary) return this.o.onBadFrame('binary frames are not part of the protocol');
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return this.o.onBadFrame('frame is not JSON');
    }
    const inherited = inheritedKeyProblem(frame);
    if (inherited) return this.o.onBadFrame(`frame refused: ${inherited}`);
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame) || typeof (frame as Envelope).type !== 'string') {
      return this.o.onBadFrame('frame is not an envelope {type, data, timestamp}');
    }
    const env = frame as Envelope;
    if (env.data !== undefined && (typeof env.data !== 'object' || env.data === null || Array.isArray(env.data))) {
      return this.o.onBadFrame('frame data must be an object');
    }
    this.o.onFrame(env);
  }
}
