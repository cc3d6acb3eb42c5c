// JSON calls (POST, and GET for what the server hands out) to the central server: a bounded time per call, TLS verified against the system's CAs
// or, with `server.ca_file`, the operator's private CA only, and `server.ca_pem` beside either. A
// certificate not trusted is said in plain words (net/tls-words.ts). There is no switch that turns
// verification off. Bodies are plain JSON (the reference server reads no Content-Encoding); the agent token goes as a bearer token and
// never into a log line.
import http from 'node:http';
import https from 'node:https';
import { tlsInWords } from '../net/tls-words.js';

/** CA certificates a TLS client trusts (the `ca` option of node:tls). */
export type TrustedCas = string | Buffer | (string | Buffer)[];

/** What the link's TLS errors tell a person to do. */
export const SERVER_CA_FIX = 'upload its CA certificate in Settings → Central server';

export class ServerHttpError extends Error {
  constructor(readonly status: number, readonly body: string) {
    super(`server answered ${status}${body ? `: ${body.slice(0, 200)}` : ''}`);
  }
}

export interface CallOptions {
  token?: string;
  /** Aborts the call (shutdown). */
  signal?: AbortSignal;
}

export interface ServerReply {
  status: number;
  json: Record<string, unknown>;
}

const TIMEOUT_MS = 15_000;
const MAX_REPLY_BYTES = 4 * 1024 * 1024;

export class ServerClient {
  constructor(private readonly baseUrl: string, private readonly ca?: TrustedCas, private readonly timeoutMs = TIMEOUT_MS) {}

  /** POSTs JSON; resolves a 2xx reply, rejects with ServerHttpError for any other status. */
  post(path: string, body: unknown, opts: CallOptions = {}): Promise<ServerReply> {
    return this.call('POST', path, Buffer.from(JSON.stringify(body)), opts);
  }

  /** GETs JSON (`path` with its query); as post(). */
  get(path: string, opts: CallOptions = {}): Promise<ServerReply> {
    return this.call('GET', path, undefined, opts);
  }

  private call(method: 'GET' | 'POST', path: string, payload: Buffer | undefined, opts: CallOptions): Promise<ServerReply> {
    const url = new URL(path.replace(/^\//, ''), this.baseUrl.endsWith('/') ? this.baseUrl : this.baseUrl + '/');
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (payload) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(url, { method, headers, ca: this.ca, timeout: this.timeoutMs, agent: false, signal: opts.signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_REPLY_BYTES) return req.destroy(new Error('server reply too large'));
          chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) return reject(new ServerHttpError(status, text));
          let parsed: unknown = {};
          try {
            parsed = text ? JSON.parse(text) : {};
          } catch {
            return reject(new Error(`server reply to ${url.pathname} is not JSON`));
          }
          const obj = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
          resolve({ status, json: obj });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`server did not answer ${url.pathname} within ${this.timeoutMs} ms`)));
      req.on('error', (err) => reject(tlsInWords(err, 'the central server', url.host, SERVER_CA_FIX) ?? err));
      req.end(payload);
    });
  }
}
