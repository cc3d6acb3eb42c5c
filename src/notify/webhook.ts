// Webhooks: a JSON POST signed with HMAC-SHA256 of webhook_secret (docs/api.md, Notifications).
// The signed material is `<timestamp>.<body>`, the timestamp (Unix seconds) sent beside it, so a
// receiver can refuse an old request replayed. Redirects are not followed (a 3xx is a failure):
// the URL a technician set is the only place the alert goes. That place is never this box itself
// nor no other host (loopback, link-local, unspecified, the box's own addresses): refused when set
// (settings) and again at send time on every address the name resolves to, so a name that later
// resolves to 127.0.0.1 goes nowhere. A failure says the status only: the receiver's body and
// Location are its own (an address on the box would otherwise be read back through the result).
import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { rootCertificates } from 'node:tls';
import { notAnotherHost } from '../net/own-targets.js';
import { webhookHostProblem } from '../net/webhook-host.js';
import { tlsInWords } from '../net/tls-words.js';

const TIMEOUT_MS = 15_000;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, refusing a name that resolves (even in part) to an address that is not another host. */
function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    for (const a of addresses) {
      const why = notAnotherHost(a.address);
      if (why) return callback(Object.assign(new Error(`webhook host ${hostname} resolves to ${a.address}, ${why}: not sent`), { code: 'EREFUSED' }), []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

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
  const self = webhookHostProblem(u.hostname);
  if (self) return Promise.reject(new Error(`webhook host ${u.hostname} is ${self}: not sent`));
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
    const options = { method: 'POST', headers, timeout: TIMEOUT_MS, lookup: guardedLookup };
    const req =
      u.protocol === 'https:'
        ? https.request(u, { ...options, ca: p.caPem ? [...rootCertificates, p.caPem] : undefined, minVersion: 'TLSv1.2' })
        : http.request(u, options);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    // A certificate failure in plain words: whose, what failed, what to do (net/tls-words.ts).
    req.on('error', (err) => reject(tlsInWords(err, 'the webhook', u.host, 'upload its CA certificate in Settings → Notifications (Trusted CA certificate)') ?? err));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      // Nothing of the answer is kept: only its status is the result.
      res.resume();
      res.on('error', reject);
      res.on('end', () => {
        if (status >= 200 && status < 300) return resolve();
        reject(new Error(`HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`));
      });
    });
    req.end(p.body);
  });
}
