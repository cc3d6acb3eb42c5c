// Device cookies (OWASP, "Slow down online guessing attacks with device cookies"; docs/api.md,
// Authentication): a successful sign-in gives the browser a cookie naming the account and a random
// device id, signed with HMAC-SHA256 under a secret that never leaves the box. A later sign-in to
// that account presenting the cookie is limited on the failures of that cookie alone, so hosts
// guessing the account's password (and locking it for everyone else) cannot lock out a technician
// who has signed in from that browser before. The cookie proves nothing else: the password is
// still checked, and it opens no session.
//
// The secret lives in <data_dir>/device-cookie.key (0600, 32 random bytes, base64url). If it
// cannot be written (no room, a read-only card) a secret for this run only is used: cookies then
// stop counting at the next restart, which only makes their holders untrusted again.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { serialize } from '@tinyhttp/cookie';
import { writeFileAtomic } from '../shared/atomic-file.js';
import { cookieValue } from './request-facts.js';

export const DEVICE_COOKIE = 'pm_agent_device';
// Sent only to the sign-in routes: no other request needs it.
export const DEVICE_COOKIE_PATH = '/api/v1/auth';
// 400 days: the longest browsers keep a cookie.
export const DEVICE_COOKIE_MAX_AGE_S = 400 * 86_400;
const SECRET_BYTES = 32;

export const deviceSecretPath = (dataDir: string): string => join(dataDir, 'device-cookie.key');

/** The secret from the data directory, made there when missing; `onProblem` hears of a secret kept in memory only. */
export function loadDeviceSecret(dataDir: string, onProblem: (err: unknown) => void): Buffer {
  const file = deviceSecretPath(dataDir);
  try {
    if (existsSync(file)) {
      const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
      if (secret.length === SECRET_BYTES) return secret;
    }
  } catch (err) {
    onProblem(err);
    return randomBytes(SECRET_BYTES);
  }
  const secret = randomBytes(SECRET_BYTES);
  try {
    writeFileAtomic(file, secret.toString('base64url') + '\n', 0o600);
  } catch (err) {
    onProblem(err);
  }
  return secret;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

export class DeviceCookies {
  constructor(
    private readonly secret: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new cookie value for `user`: <user>.<device id>.<issued, s>.<mac>, all base64url or digits. */
  issue(user: string): string {
    const body = `${b64(user)}.${randomBytes(16).toString('base64url')}.${Math.floor(this.now() / 1000)}`;
    return `${body}.${this.mac(body)}`;
  }

  /** The device id of a genuine, unexpired cookie for `user`; undefined for anything else. */
  deviceFor(value: string | undefined, user: string): string | undefined {
    if (!value || value.length > 512) return undefined;
    const parts = value.split('.');
    if (parts.length !== 4) return undefined;
    const [name, id, issued, mac] = parts;
    const given = Buffer.from(mac, 'base64url');
    const expected = Buffer.from(this.mac(`${name}.${id}.${issued}`), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    if (Buffer.from(name, 'base64url').toString('utf8') !== user.toLowerCase()) return undefined;
    const age = this.now() / 1000 - Number(issued);
    if (!(age >= -60 && age <= DEVICE_COOKIE_MAX_AGE_S)) return undefined;
    return id;
  }

  /** The device id the request's cookie proves for `user`, if any. */
  fromRequest(req: IncomingMessage, user: string): string | undefined {
    return this.deviceFor(cookieValue(req, DEVICE_COOKIE), user);
  }

  /** Adds the Set-Cookie of a new device cookie for `user` (beside any other Set-Cookie). */
  give(res: ServerResponse, user: string, secure: boolean): void {
    const cookie = serialize(DEVICE_COOKIE, this.issue(user.toLowerCase()), {
      encode: (s: string) => s,
      path: DEVICE_COOKIE_PATH,
      maxAge: DEVICE_COOKIE_MAX_AGE_S,
      expires: new Date(this.now() + DEVICE_COOKIE_MAX_AGE_S * 1000),
      httpOnly: true,
      sameSite: 'Strict',
      secure,
    });
    const prev = res.getHeader('Set-Cookie');
    res.setHeader('Set-Cookie', [...(prev === undefined ? [] : Array.isArray(prev) ? prev : [String(prev)]), cookie]);
  }

  private mac(body: string): string {
    return createHmac('sha256', this.secret).update(`printbox device cookie v1\n${body}`).digest('base64url');
  }
}
