// Webhooks: a JSON POST signed with HMAC-SHA256 of webhook_secret (docs/api.md, Notifications).
// The signed material is `<timestamp>.<body>`, the timestamp (Unix seconds) sent beside it, so a
// receiver can refuse an old request replayed. Redirects are not followed (a 3xx is a failure):
// the URL a technician set is the only place the alert goes.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { rootCertificates } from 'node:tls';

const TIMEOUT_MS = 15_000;
/** The receiver's answer read at most (for the error message); the rest is dropped. */
const ANSWER_BYTES = 512;

export const SIGNATURE_HEADER = 'X-PrintBox-Signature';
export const TIMESTAMP_HEADER = 'X-PrintBox-Timestamp';
export const DELIVERY_HEADER = 'X-PrintBox-Delivery';

/** `sha256=<hex>`: HMAC-SHA256 over `<timestamp>.<body>` with the shared secret. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

export interface WebhookPost {
  url: string;
  secret: string;
  body: string;
  deliveryId: number;
  /** Trusted beside the system's CAs (settings notifications.ca_pem). */
  caPem: string;
  now: number;
}

/** Posts once; resolves on a 2xx, rejects with the status or the network's reason otherwise. */
export function postWebhook(p: WebhookPost): Promise<void> {
  const u = new URL(p.url);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return Promise.reject(new Error('webhook URL must be http:// or https://'));
  const timestamp = Math.floor(p.now / 1000);
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(p.body)),
    'User-Agent': 'PrintBox',
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: webhookSignature(p.secret, timestamp, p.body),
    [DELIVERY_HEADER]: String(p.deliveryId),
  };
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', headers, timeout: TIMEOUT_MS };
    const req =
      u.protocol === 'https:'
        ? https.request(u, { ...options, ca: p.caPem ? [...rootCertificates, p.caPem] : undefined, minVersion: 'TLSv1.2' })
        : http.request(u, options);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.on('response', (res) => {
      let answer = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (answer.length < ANSWER_BYTES) answer += c;
      });
      res.on('error', reject);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve();
        const where = status >= 300 && status < 400 ? ` (redirects are not followed${res.headers.location ? `: Location ${String(res.headers.location).slice(0, 200)}` : ''})` : '';
        reject(new Error(`HTTP ${status}${where}${answer.trim() ? `: ${answer.trim().slice(0, 200)}` : ''}`));
      });
    });
    req.end(p.body);
  });
}
