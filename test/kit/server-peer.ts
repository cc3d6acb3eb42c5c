// Test peer: a small, real central server speaking docs/server-protocol.md over real HTTPS and a
// real WebSocket (the `ws` package), on 127.0.0.1 only, with its own self-signed certificate.
// Integration tests point an agent at it; peer.test.ts checks the peer alone first.
//
// API:
//   startServerPeer(opts?) -> ServerPeer. opts: enrollmentTokens (default one random token),
//       openRegistration (POST /agents/register accepted; default false), tenantId, users
//       ({username: password} for POST /api/v1/auth/login), slowMs (default 3000).
//   peer.url / caFile / port / enrollmentToken; peer.wsUrl(token); peer.stop().
//   HTTP (JSON; request bodies may be Content-Encoding: gzip):
//     POST /api/v1/agents/register-with-token  {token, agent_id, ...} -> {success, tenant_id, agent_token} | 401
//     POST /api/v1/agents/register             {agent_id, ...}        -> {success, agent_id, token} | 401
//     POST /api/v1/agents/heartbeat    (Bearer) -> {success, settings_version, settings_snapshot?}: as the
//       reference server, the version is a string (set by setManagedSettings), sent with the snapshot
//       whenever the agent's settings_version differs from it
//     POST /api/v1/devices/batch       (Bearer) {agent_id, timestamp, devices:[...]} -> {success, received}
//     POST /api/v1/metrics/batch       (Bearer) {agent_id, timestamp, metrics:[...]} -> {success, received}
//     POST /api/v1/auth/login          {username, password} -> {token, expires_at} | 401
//   State: registrations(), httpHeartbeats(), batches(kind?), devices(), metrics(),
//     distinctSnapshots() (Map keyed "serial|timestamp|tier"), requests(), requestCount(path?),
//     issueToken(agentId), revokeTokens(), setManagedSettings(version, snapshot).
//   Faults: setMode('ok'|'down'|'error500'|'slow'|'drop', {delayMs?, only?: paths}) (async).
//     down: listener closed and every connection destroyed (ECONNREFUSED); 'ok' listens again on
//           the same port. error500: 500 before the request is processed (nothing recorded).
//     slow: processed, answered after delayMs. drop: processed and recorded, then the socket is
//           destroyed unanswered (the "stored but the answer was lost" case, for dedupe tests).
//     Faults apply to every HTTP path and the WebSocket upgrade unless `only` lists paths.
//   WebSocket: wss://127.0.0.1:PORT/api/v1/agents/ws?token=<agent token> (query parameter only;
//     unknown token: HTTP 401 before the upgrade; a new socket of the same agent replaces the old
//     one, as the reference server does). wsAttempts() (with times, for backoff checks),
//     agentSockets(), waitForAgentSocket(ms), dropAgentSocket() (terminate, no close frame),
//     setWsPongs(on) (off: WS pings go unanswered), frames(type?), heartbeats(), sent(),
//     nextFrame(pred, ms, {since?: frame index; default: frames from now on}), send(type, data?),
//     sendRaw(text).
//     proxy({url, method, headers?, body?, streaming?}, ms?) sends proxy_request {request_id, url,
//       method, headers, body: base64, streaming} and resolves a ProxyResponse (proxy_response
//       {request_id, status_code, headers, body: standard padded base64}, decoded to a Buffer), or
//       for streaming a ProxyStream once the first proxy_stream_chunk {is_start: true, status_code,
//       headers} arrives; later chunks carry base64 in `chunk`; proxy_stream_end closes it.
//       waitForBytes(n) / waitForText(s) / waitForEnd(); a one-piece proxy_response is accepted
//       (buffered: true). A socket closing rejects what is still waiting.
//     command(name, params?) sends command {...params, command_id, command}: fire and forget, as the
//       reference server does (it knows no command_result; tests watch for the command's effect).
//     Every frame the peer sends is {type, data, timestamp}. Replies are read from `data`, or from
//     the top level when the agent sent no `data` object. A WS heartbeat is answered with `pong`.
//   waitFor(probe, ms, what?) -> resolves probe()'s first value other than undefined/false
//     (re-checked on every request, frame and connection), e.g. waitFor(() => peer.metrics().length >= 5).
import { randomBytes, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { ensureCertificate } from '../../src/web/tls.js';
import { createLogger, LogRing } from '../../src/log/logger.js';

export const WS_PATH = '/api/v1/agents/ws';
const MAX_BODY = 32 * 1024 * 1024; // compressed, as received
const MAX_INFLATED = 256 * 1024 * 1024;

export type PeerMode = 'ok' | 'down' | 'error500' | 'slow' | 'drop';
type Json = Record<string, unknown>;

export interface PeerOptions {
  enrollmentTokens?: string[];
  openRegistration?: boolean;
  tenantId?: string;
  users?: Record<string, string>;
  /** Delay of mode 'slow' when setMode gives none; default 3000 ms. */
  slowMs?: number;
}

export interface ModeOptions {
  delayMs?: number;
  /** Paths (e.g. '/api/v1/metrics/batch', WS_PATH) the fault applies to; default all. */
  only?: string[];
}

export interface RequestRecord {
  seq: number;
  at: number;
  method: string;
  path: string;
  /** The mode that applied to this request ('ok' when `only` excluded it). */
  mode: PeerMode;
  /** Answered status; 'dropped' for mode drop; 0 while pending. */
  status: number | 'dropped';
  agentId?: string;
  /** Content-Encoding as sent ('' when none). */
  encoding: string;
  wireBytes: number;
  bytes: number;
}

export interface Batch {
  kind: 'devices' | 'metrics';
  at: number;
  agentId: string;
  body: Json;
  items: Json[];
  encoding: string;
  wireBytes: number;
  bytes: number;
  /** False when mode drop destroyed the socket instead of answering. */
  answered: boolean;
}

export interface Registration {
  at: number;
  path: string;
  body: Json;
  agentId: string;
  token: string;
}

export interface HttpHeartbeat {
  at: number;
  agentId: string;
  body: Json;
  snapshotSent: boolean;
}

export interface WsAttempt {
  at: number;
  token: string | null;
  accepted: boolean;
  /** 101 accepted, 401 bad token, 500 error500, 0 dropped. */
  status: number;
}

export interface AgentConn {
  id: number;
  agentId: string;
  token: string;
  ws: WebSocket;
  connectedAt: number;
  closedAt?: number;
  closeCode?: number;
  /** WebSocket pings received from the agent. */
  pings: number;
}

export interface Frame {
  seq: number;
  at: number;
  conn: number;
  raw: string;
  binary: boolean;
  /** Parsed JSON, undefined when the frame is not JSON. */
  json: unknown;
  type?: string;
  /** The payload: `data` when it is an object, else the top-level fields minus type/timestamp. */
  data: Json;
}

export interface SentFrame {
  at: number;
  conn: number;
  raw: string;
}

export interface ProxyRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  streaming?: boolean;
}

export interface ProxyResponse {
  requestId: string;
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  text(): string;
  json(): unknown;
  frame: Frame;
}

export interface ProxyStream {
  requestId: string;
  status: number;
  headers: Record<string, string | string[]>;
  /** True when the agent answered the streaming request with one plain proxy_response. */
  buffered: boolean;
  chunks: Buffer[];
  startFrame: Frame;
  endFrame?: Frame;
  /** Protocol deviations seen on this stream (second is_start, chunk without data, data not in `chunk`, bad base64). */
  violations: string[];
  body(): Buffer;
  text(): string;
  isEnded(): boolean;
  waitForBytes(n: number, timeoutMs?: number): Promise<Buffer>;
  waitForText(s: string, timeoutMs?: number): Promise<string>;
  waitForEnd(timeoutMs?: number): Promise<Buffer>;
}

export interface Snapshot {
  serial: unknown;
  timestamp: unknown;
  tier?: unknown;
  count: number;
  first: Json;
}

export interface ServerPeer {
  url: string;
  port: number;
  caFile: string;
  /** The first enrollment token. */
  enrollmentToken: string;
  wsUrl(token: string): string;
  stop(): Promise<void>;
  mode(): PeerMode;
  setMode(mode: PeerMode, opts?: ModeOptions): Promise<void>;
  issueToken(agentId: string): string;
  revokeTokens(): void;
  setManagedSettings(version: string, snapshot: Json): void;
  registrations(): Registration[];
  httpHeartbeats(): HttpHeartbeat[];
  batches(kind?: 'devices' | 'metrics'): Batch[];
  metrics(): Json[];
  devices(): Json[];
  distinctSnapshots(): Map<string, Snapshot>;
  requests(): RequestRecord[];
  requestCount(path?: string): number;
  wsAttempts(): WsAttempt[];
  agentSockets(): AgentConn[];
  waitForAgentSocket(timeoutMs?: number): Promise<AgentConn>;
  dropAgentSocket(): Promise<void>;
  setWsPongs(on: boolean): void;
  frames(type?: string): Frame[];
  heartbeats(): Frame[];
  sent(): SentFrame[];
  nextFrame(pred: (f: Frame) => boolean, timeoutMs?: number, opts?: { since?: number }): Promise<Frame>;
  send(type: string, data?: Json): void;
  sendRaw(text: string | Buffer): void;
  proxy(req: ProxyRequest & { streaming: true }, timeoutMs?: number): Promise<ProxyStream>;
  proxy(req: ProxyRequest, timeoutMs?: number): Promise<ProxyResponse>;
  command(name: string, params?: Json): Promise<void>;
  waitFor<T>(probe: () => T | undefined | false, timeoutMs?: number, what?: string): Promise<T>;
}

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const token = () => randomBytes(24).toString('base64url');
// Standard, padded base64 (what Go's StdEncoding and Buffer#toString('base64') write).
const isBase64 = (s: string) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);

function payloadOf(json: unknown): Json {
  if (!isObj(json)) return {};
  if (isObj(json.data)) return json.data;
  const { type: _t, timestamp: _ts, data: _d, ...rest } = json;
  return rest;
}

function decodeB64(v: unknown, what: string): Buffer {
  if (v === undefined || v === null || v === '') return Buffer.alloc(0);
  if (typeof v !== 'string' || !isBase64(v)) throw new Error(`server peer: ${what} is not standard base64: ${JSON.stringify(v).slice(0, 80)}`);
  return Buffer.from(v, 'base64');
}

function headersOf(v: unknown): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!isObj(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string' || Array.isArray(x)) out[k] = x as string | string[];
  return out;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startServerPeer(opts: PeerOptions = {}): Promise<ServerPeer> {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-server-peer-'));
  // The agent's own self-signed generator (SANs localhost, 127.0.0.1, ::1): the peer's identity,
  // which an agent under test is told to trust with `ca_file`.
  const tls = { cert: join(dir, 'peer.crt'), key: join(dir, 'peer.key'), managed: true };
  await ensureCertificate(tls, createLogger('error', new LogRing()));
  const cert = { certFile: tls.cert, cert: readFileSync(tls.cert), key: readFileSync(tls.key) };
  const enrollment = new Set(opts.enrollmentTokens ?? [token()]);
  const tenantId = opts.tenantId ?? 'tenant-test';

  // Everything a test may wait on changes through emit(): waitFor re-checks on each change.
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  const emit = () => changes.emit('change');

  let mode: PeerMode = 'ok';
  let modeOpts: ModeOptions = {};
  let stopped = false;
  let wsPongs = true;
  let managed: { version: string; snapshot: Json } = { version: '', snapshot: {} };
  const agentTokens = new Map<string, string>(); // agent token -> agent_id
  const userTokens = new Set<string>();
  const registrations: Registration[] = [];
  const heartbeatsHttp: HttpHeartbeat[] = [];
  const batches: Batch[] = [];
  const requests: RequestRecord[] = [];
  const counts = new Map<string, number>();
  const attempts: WsAttempt[] = [];
  const conns: AgentConn[] = [];
  const frames: Frame[] = [];
  const sentFrames: SentFrame[] = [];
  const sockets = new Set<Socket | Duplex>();
  let seq = 0;
  let connSeq = 0;

  type Pending = { conn: number; onFrame(f: Frame): void; onClose(): void };
  const pendingProxies = new Map<string, Pending>();

  function waitFor<T>(probe: () => T | undefined | false, timeoutMs = 10_000, what = 'a condition'): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        let v: T | undefined | false;
        try {
          v = probe();
        } catch (e) {
          done();
          reject(e);
          return;
        }
        if (v !== undefined && v !== false) {
          done();
          resolve(v);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`server peer: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        changes.off('change', check);
      };
      changes.on('change', check);
      check();
    });
  }

  const faultFor = (path: string): PeerMode => (!modeOpts.only || modeOpts.only.includes(path) ? mode : 'ok');
  const delay = () => modeOpts.delayMs ?? opts.slowMs ?? 3000;
  const count = (path: string) => counts.set(path, (counts.get(path) ?? 0) + 1);

  function issueToken(agentId: string): string {
    const t = token();
    agentTokens.set(t, agentId);
    return t;
  }

  // ---- HTTP ----
  type Answer = { status: number; body: unknown; record?: () => void };
  const fail = (status: number, error: string): Answer => ({ status, body: { success: false, error } });

  function route(method: string, path: string, auth: string | undefined, body: Json, rec: RequestRecord, drop: boolean): Answer {
    if (method !== 'POST') return fail(404, 'not found');
    const bearer = /^Bearer\s+(\S+)$/i.exec(auth ?? '')?.[1];
    const agentId = bearer ? agentTokens.get(bearer) : undefined;
    const needAgent = () => {
      rec.agentId = agentId;
      return agentId === undefined ? fail(401, 'invalid or missing agent token') : undefined;
    };
    const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
    switch (path) {
      case '/api/v1/agents/register-with-token': {
        if (typeof body.token !== 'string' || !enrollment.has(body.token)) return fail(401, 'invalid enrollment token');
        const id = str(body.agent_id);
        if (!id) return fail(400, 'agent_id required');
        const t = issueToken(id);
        registrations.push({ at: Date.now(), path, body, agentId: id, token: t });
        return { status: 200, body: { success: true, tenant_id: tenantId, agent_token: t } };
      }
      case '/api/v1/agents/register': {
        if (!opts.openRegistration) return fail(401, 'registration requires an enrollment token');
        const id = str(body.agent_id);
        if (!id) return fail(400, 'agent_id required');
        const t = issueToken(id);
        registrations.push({ at: Date.now(), path, body, agentId: id, token: t });
        return { status: 200, body: { success: true, agent_id: id, token: t } };
      }
      case '/api/v1/auth/login': {
        const users = opts.users ?? {};
        const u = str(body.username);
        if (!u || !Object.hasOwn(users, u) || users[u] !== body.password) return fail(401, 'invalid credentials');
        const t = token();
        userTokens.add(t);
        return { status: 200, body: { token: t, expires_at: new Date(Date.now() + 3600_000).toISOString() } };
      }
      case '/api/v1/agents/heartbeat': {
        const denied = needAgent();
        if (denied) return denied;
        const behind = managed.version !== '' && body.settings_version !== managed.version;
        heartbeatsHttp.push({ at: Date.now(), agentId: agentId!, body, snapshotSent: behind });
        return {
          status: 200,
          body: { success: true, settings_version: managed.version, ...(behind ? { settings_snapshot: managed.snapshot } : {}) },
        };
      }
      case '/api/v1/devices/batch':
      case '/api/v1/metrics/batch': {
        const denied = needAgent();
        if (denied) return denied;
        const kind = path === '/api/v1/devices/batch' ? 'devices' : 'metrics';
        const items = body[kind];
        if (!Array.isArray(items)) return fail(400, `${kind} must be an array`);
        batches.push({
          kind,
          at: Date.now(),
          agentId: agentId!,
          body,
          items: items as Json[],
          encoding: rec.encoding,
          wireBytes: rec.wireBytes,
          bytes: rec.bytes,
          answered: !drop,
        });
        return { status: 200, body: { success: true, received: items.length } };
      }
      default:
        return fail(404, 'not found');
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'https://peer.invalid').pathname;
    count(path);
    const encoding = String(req.headers['content-encoding'] ?? '').trim().toLowerCase();
    const rec: RequestRecord = { seq: ++seq, at: Date.now(), method: req.method ?? '', path, mode: faultFor(path), status: 0, encoding, wireBytes: 0, bytes: 0 };
    requests.push(rec);
    emit();
    const answer = async (a: Answer) => {
      if (rec.mode === 'drop') {
        rec.status = 'dropped';
        req.socket.destroy();
      } else {
        if (rec.mode === 'slow') {
          // What the request stored is visible to waitFor now, not when the late answer goes out.
          emit();
          await sleep(delay());
        }
        const text = JSON.stringify(a.body) + '\n';
        rec.status = a.status;
        res.writeHead(a.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
      }
      emit();
    };
    let raw: Buffer;
    try {
      raw = await readBody(req);
    } catch {
      return answer(fail(413, 'body too large'));
    }
    rec.wireBytes = raw.length;
    if (rec.mode === 'error500') return answer(fail(500, 'injected server error'));
    let decoded = raw;
    if (encoding === 'gzip') {
      try {
        decoded = gunzipSync(raw, { maxOutputLength: MAX_INFLATED });
      } catch {
        return answer(fail(400, 'bad gzip body'));
      }
    } else if (encoding !== '' && encoding !== 'identity') return answer(fail(415, `unsupported content-encoding ${encoding}`));
    rec.bytes = decoded.length;
    let body: unknown = {};
    if (decoded.length > 0) {
      try {
        body = JSON.parse(decoded.toString('utf8'));
      } catch {
        return answer(fail(400, 'body is not JSON'));
      }
    }
    if (!isObj(body)) return answer(fail(400, 'body must be a JSON object'));
    return answer(route(rec.method, path, req.headers.authorization, body, rec, rec.mode === 'drop'));
  }

  // ---- WebSocket ----
  // autoPong off: pongs are sent by hand so a test can make the peer go silent (setWsPongs(false)).
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024, autoPong: false } as ConstructorParameters<typeof WebSocketServer>[0]);

  function rejectUpgrade(socket: Duplex, status: number, msg: string) {
    const text = msg + '\n';
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    const url = new URL(req.url ?? '/', 'https://peer.invalid');
    count(url.pathname);
    socket.on('error', () => {});
    if (url.pathname !== WS_PATH) return rejectUpgrade(socket, 404, 'not found');
    const t = url.searchParams.get('token');
    const attempt: WsAttempt = { at: Date.now(), token: t, accepted: false, status: 0 };
    attempts.push(attempt);
    emit();
    const m = faultFor(WS_PATH);
    if (m === 'drop') return void socket.destroy();
    if (m === 'error500') {
      attempt.status = 500;
      return rejectUpgrade(socket, 500, 'injected server error');
    }
    const go = () => {
      if (socket.destroyed || stopped) return;
      const agentId = t ? agentTokens.get(t) : undefined;
      if (agentId === undefined) {
        attempt.status = 401;
        emit();
        return rejectUpgrade(socket, 401, 'Invalid authentication token');
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        attempt.accepted = true;
        attempt.status = 101;
        adopt(ws, agentId, t!);
      });
    };
    if (m === 'slow') setTimeout(go, delay());
    else go();
  }

  function adopt(ws: WebSocket, agentId: string, t: string) {
    const conn: AgentConn = { id: ++connSeq, agentId, token: t, ws, connectedAt: Date.now(), pings: 0 };
    // As the reference server does: a new connection from the same agent replaces the old one.
    for (const c of conns) if (c.agentId === agentId && c.closedAt === undefined) c.ws.terminate();
    conns.push(conn);
    ws.on('message', (data, isBinary) => onFrame(conn, data, isBinary));
    ws.on('ping', (d: Buffer) => {
      conn.pings++;
      if (wsPongs) ws.pong(d);
      emit();
    });
    ws.on('error', () => {});
    ws.on('close', (code) => {
      conn.closedAt = Date.now();
      conn.closeCode = code;
      for (const [id, p] of pendingProxies) if (p.conn === conn.id) (pendingProxies.delete(id), p.onClose());
      emit();
    });
    emit();
  }

  function onFrame(conn: AgentConn, data: RawData, binary: boolean) {
    const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    const raw = buf.toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const type = isObj(json) && typeof json.type === 'string' ? json.type : undefined;
    const f: Frame = { seq: frames.length, at: Date.now(), conn: conn.id, raw, binary, json, type, data: payloadOf(json) };
    frames.push(f);
    if (type === 'heartbeat') sendTo(conn, 'pong');
    else if (type === 'proxy_response' || type === 'proxy_stream_chunk' || type === 'proxy_stream_end') {
      const id = f.data.request_id;
      if (typeof id === 'string') pendingProxies.get(id)?.onFrame(f);
    }
    emit();
  }

  function openConn(): AgentConn | undefined {
    for (let i = conns.length - 1; i >= 0; i--) {
      const c = conns[i];
      if (c.closedAt === undefined && c.ws.readyState === WebSocket.OPEN) return c;
    }
    return undefined;
  }

  function sendRawTo(conn: AgentConn, raw: string | Buffer) {
    sentFrames.push({ at: Date.now(), conn: conn.id, raw: raw.toString() });
    conn.ws.send(raw);
  }

  function sendTo(conn: AgentConn, type: string, data?: Json) {
    sendRawTo(conn, JSON.stringify({ type, ...(data ? { data } : {}), timestamp: new Date().toISOString() }));
  }

  function mustConn(): AgentConn {
    const c = openConn();
    if (!c) throw new Error('server peer: no agent WebSocket connected');
    return c;
  }

  function decodeResponse(requestId: string, f: Frame): ProxyResponse {
    const status = f.data.status_code;
    if (typeof status !== 'number' || !Number.isInteger(status)) throw new Error(`server peer: proxy_response without an integer status_code: ${f.raw.slice(0, 200)}`);
    const body = decodeB64(f.data.body, 'proxy_response body');
    return {
      requestId,
      status,
      headers: headersOf(f.data.headers),
      body,
      text: () => body.toString('utf8'),
      json: () => JSON.parse(body.toString('utf8')),
      frame: f,
    };
  }

  function makeStream(requestId: string, start: Frame, status: number, headers: Record<string, string | string[]>): ProxyStream & { onFrame(f: Frame): void; end(f: Frame): void; abort(why: string): void } {
    let ended = false;
    let aborted: string | undefined;
    const s = {
      requestId,
      status,
      headers,
      buffered: false,
      chunks: [] as Buffer[],
      startFrame: start,
      endFrame: undefined as Frame | undefined,
      violations: [] as string[],
      body: () => Buffer.concat(s.chunks),
      text: () => s.body().toString('utf8'),
      isEnded: () => ended,
      end(f: Frame) {
        ended = true;
        s.endFrame = f;
        pendingProxies.delete(requestId);
      },
      onFrame(f: Frame) {
        if (f.type === 'proxy_stream_end') return s.end(f);
        if (f.type !== 'proxy_stream_chunk' || (f !== start && f.data.is_start === true)) {
          s.violations.push(`unexpected ${f.type}${f.data.is_start ? ' (second is_start)' : ''}`);
          return;
        }
        // The reference server reads only `chunk`; `data` is accepted here but noted, so a test
        // asserting no violations also checks compatibility with it.
        const b64 = typeof f.data.chunk === 'string' ? f.data.chunk : f.data.data;
        if (f.data.chunk === undefined && b64 !== undefined) s.violations.push('chunk data in `data`, not `chunk` (the reference server reads `chunk`)');
        if (b64 === undefined) {
          if (f !== start) s.violations.push('chunk frame without chunk data');
          return;
        }
        try {
          s.chunks.push(decodeB64(b64, 'proxy_stream_chunk chunk'));
        } catch (e) {
          s.violations.push((e as Error).message);
        }
      },
      abort(why: string) {
        aborted = why;
      },
      waitForBytes: (n: number, ms = 10_000) =>
        waitFor(() => {
          const b = s.body();
          if (b.length >= n) return b;
          if (ended || aborted) throw new Error(`server peer: stream ${aborted ?? 'ended'} after ${b.length} of ${n} bytes`);
          return undefined;
        }, ms, `${n} bytes of stream ${requestId}`),
      waitForText: (text: string, ms = 10_000) =>
        waitFor(() => {
          const t = s.text();
          if (t.includes(text)) return t;
          if (ended || aborted) throw new Error(`server peer: stream ${aborted ?? 'ended'} without ${JSON.stringify(text)}; got ${JSON.stringify(t.slice(-300))}`);
          return undefined;
        }, ms, `${JSON.stringify(text)} on stream ${requestId}`),
      waitForEnd: (ms = 10_000) =>
        waitFor(() => {
          if (ended) return s.body();
          if (aborted) throw new Error(`server peer: stream ${requestId}: ${aborted}`);
          return undefined;
        }, ms, `proxy_stream_end of ${requestId}`),
    };
    return s;
  }

  function proxy(req: ProxyRequest, timeoutMs = 15_000): Promise<ProxyResponse | ProxyStream> {
    let conn: AgentConn;
    try {
      conn = mustConn();
    } catch (e) {
      return Promise.reject(e);
    }
    const requestId = randomUUID();
    const method = req.method ?? 'GET';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pendingProxies.delete(requestId);
        reject(new Error(`server peer: no answer to proxy_request ${method} ${req.url} within ${timeoutMs} ms`));
      }, timeoutMs);
      const failWith = (e: Error) => {
        clearTimeout(timer);
        pendingProxies.delete(requestId);
        reject(e);
      };
      let stream: ReturnType<typeof makeStream> | undefined;
      pendingProxies.set(requestId, {
        conn: conn.id,
        onFrame(f) {
          if (stream) return stream.onFrame(f);
          try {
            if (f.type === 'proxy_response') {
              const r = decodeResponse(requestId, f);
              clearTimeout(timer);
              pendingProxies.delete(requestId);
              if (!req.streaming) return resolve(r);
              // A streaming request may still be answered in one piece (e.g. a 502 for a bad target).
              stream = makeStream(requestId, f, r.status, r.headers);
              stream.buffered = true;
              stream.chunks.push(r.body);
              stream.end(f);
              return resolve(stream);
            }
            if (!req.streaming) return failWith(new Error(`server peer: non-streaming proxy_request answered with ${f.type}`));
            if (f.type !== 'proxy_stream_chunk' || f.data.is_start !== true) {
              return failWith(new Error(`server peer: the first frame of stream ${requestId} was ${f.type} without is_start`));
            }
            const status = f.data.status_code;
            if (typeof status !== 'number' || !Number.isInteger(status)) return failWith(new Error(`server peer: is_start without an integer status_code`));
            clearTimeout(timer);
            stream = makeStream(requestId, f, status, headersOf(f.data.headers));
            stream.onFrame(f); // the start frame may carry data too
            resolve(stream);
          } catch (e) {
            failWith(e as Error);
          }
        },
        onClose() {
          if (stream) stream.abort('agent socket closed');
          else failWith(new Error(`server peer: agent socket closed before answering proxy_request ${requestId}`));
        },
      });
      const body = req.body === undefined ? '' : Buffer.from(req.body).toString('base64');
      sendTo(conn, 'proxy_request', { request_id: requestId, url: req.url, method, headers: req.headers ?? {}, body, streaming: req.streaming === true });
    });
  }

  async function command(name: string, params: Json = {}): Promise<void> {
    sendTo(mustConn(), 'command', { ...params, command_id: randomUUID(), command: name });
  }

  // ---- listener ----
  const server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('upgrade', onUpgrade);
  server.on('clientError', (_e, s) => s.destroy());
  server.on('tlsClientError', () => {});

  const listen = (p: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        const a = server.address();
        resolve(typeof a === 'object' && a ? a.port : 0);
      });
    });

  async function goDown() {
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const c of conns) if (c.closedAt === undefined) c.ws.terminate();
    for (const s of sockets) s.destroy();
    // Every socket is destroyed, so close completes at once; the cap only guards against a leak.
    await Promise.race([closed, sleep(2000)]);
  }

  const port = await listen(0);
  const peer: ServerPeer = {
    url: `https://127.0.0.1:${port}`,
    port,
    caFile: cert.certFile,
    enrollmentToken: [...enrollment][0],
    wsUrl: (t) => `wss://127.0.0.1:${port}${WS_PATH}?token=${encodeURIComponent(t)}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (mode !== 'down') await goDown();
      wss.close();
      // Normally done by each socket's close event; this covers anything still waiting.
      for (const p of pendingProxies.values()) p.onClose();
      pendingProxies.clear();
      if (process.env.KEEP_TEST_DIRS !== '1') rmSync(dir, { recursive: true, force: true });
    },
    mode: () => mode,
    async setMode(next, o = {}) {
      if (stopped) throw new Error('server peer: stopped');
      modeOpts = o;
      const prev = mode;
      mode = next;
      if (next === 'down' && prev !== 'down') await goDown();
      else if (next !== 'down' && prev === 'down') await listen(port); // same port: clients reconnect to the same URL
      emit();
    },
    issueToken,
    revokeTokens: () => agentTokens.clear(),
    setManagedSettings(version, snapshot) {
      managed = { version, snapshot };
    },
    registrations: () => registrations,
    httpHeartbeats: () => heartbeatsHttp,
    batches: (kind) => (kind ? batches.filter((b) => b.kind === kind) : batches),
    metrics: () => batches.filter((b) => b.kind === 'metrics').flatMap((b) => b.items),
    devices: () => batches.filter((b) => b.kind === 'devices').flatMap((b) => b.items),
    distinctSnapshots() {
      const out = new Map<string, Snapshot>();
      for (const m of peer.metrics()) {
        const key = `${String(m.serial)}|${String(m.timestamp)}|${m.tier === undefined ? '' : String(m.tier)}`;
        const s = out.get(key);
        if (s) s.count++;
        else out.set(key, { serial: m.serial, timestamp: m.timestamp, ...(m.tier === undefined ? {} : { tier: m.tier }), count: 1, first: m });
      }
      return out;
    },
    requests: () => requests,
    requestCount: (path) => (path === undefined ? [...counts.values()].reduce((a, b) => a + b, 0) : counts.get(path) ?? 0),
    wsAttempts: () => attempts,
    agentSockets: () => conns,
    waitForAgentSocket: (ms = 15_000) => waitFor(openConn, ms, 'an agent WebSocket'),
    async dropAgentSocket() {
      const open = conns.filter((c) => c.closedAt === undefined);
      for (const c of open) c.ws.terminate();
      await waitFor(() => open.every((c) => c.closedAt !== undefined), 5000, 'the agent socket to close');
    },
    setWsPongs(on) {
      wsPongs = on;
    },
    frames: (type) => (type === undefined ? frames : frames.filter((f) => f.type === type)),
    heartbeats: () => frames.filter((f) => f.type === 'heartbeat'),
    sent: () => sentFrames,
    nextFrame(pred, ms = 10_000, o = {}) {
      const since = o.since ?? frames.length;
      return waitFor(() => frames.slice(since).find(pred), ms, 'a matching frame');
    },
    send: (type, data) => sendTo(mustConn(), type, data),
    sendRaw: (text) => sendRawTo(mustConn(), text),
    proxy: proxy as ServerPeer['proxy'],
    command,
    waitFor,
  };
  return peer;
}
