// Secrets bound to where they go. A stored secret is write-only (GET /settings never shows it),
// but whoever can change where it is sent could read it there: point the SMTP host at one's own
// server and press "Send a test", and the password arrives in AUTH. So a change to a secret's
// destination is a change to the secret: it needs proof that the person may know the secret (the
// account's current password, checked by the route), or the secret given anew, or cleared.
import type { Settings } from './settings.js';

interface Binding {
  /** The secret, as `section.key`. */
  secret: string;
  /** The settings that decide where, and to whom, it is sent (`section.key`). */
  destination: readonly string[];
  /** The destination setting whose `""` means the secret is sent nowhere (no e-mail, no link). */
  off: string;
}

/**
 * Each secret the box sends somewhere, with what decides where it goes. The webhook secret is not
 * here: it only keys an HMAC and never leaves the box. The central server's agent token is not
 * either: it is kept per server URL (store/server-link.ts) and forgotten when the URL changes.
 */
export const SECRET_DESTINATIONS: readonly Binding[] = [
  {
    secret: 'notifications.smtp_password',
    // Host and port say where; security mode and certificate trust say whether someone on the path
    // can take the server's place (plain text, or a self-signed certificate accepted).
    destination: ['notifications.smtp_host', 'notifications.smtp_port', 'notifications.smtp_security', 'notifications.ca_pem', 'notifications.smtp_allow_self_signed'],
    off: 'notifications.smtp_host',
  },
  // A CA trusted for the server decides who could take its place, as the mail server's does.
  { secret: 'server.enrollment_token', destination: ['server.url', 'server.ca_pem'], off: 'server.url' },
];

const valueAt = (s: unknown, path: string): unknown => {
  const [section, key] = path.split('.');
  return ((s as Record<string, Record<string, unknown>>)[section] ?? {})[key];
};

/** A stored secret that a change would send to a new destination. */
export interface Redirect {
  secret: string;
  /** The destination settings the change moves. */
  moved: string[];
}

/**
 * What `next` (a merged change of `current`) would send elsewhere: a secret stored now, kept as it
 * is (neither given anew in `patch` nor cleared), whose destination changes to one that is not off.
 */
export function redirectedSecrets(current: Settings, next: Settings, patch: unknown): Redirect[] {
  const out: Redirect[] = [];
  for (const b of SECRET_DESTINATIONS) {
    const stored = valueAt(current, b.secret);
    if (typeof stored !== 'string' || stored === '') continue; // nothing to send anywhere
    if (valueAt(next, b.secret) !== stored) continue; // cleared, or replaced by a new one
    const given = valueAt(patch, b.secret);
    if (typeof given === 'string' && given !== '') continue; // given again: whoever sent it knows it
    // Turned off (unenrolled, no e-mail): sent nowhere. Turning it on again somewhere is a change.
    if (valueAt(next, b.off) === '') continue;
    const moved = b.destination.filter((d) => JSON.stringify(valueAt(current, d)) !== JSON.stringify(valueAt(next, d)));
    if (moved.length) out.push({ secret: b.secret, moved });
  }
  return out;
}

/** The refusal's message: what was wrong, and the three ways to make the change. */
export function redirectProblem(redirects: Redirect[], passwordUsable: boolean): string {
  const parts = redirects.map((r) => `${r.moved.join(', ')} would send the stored ${r.secret} to a new destination`);
  const ways = redirects.map((r) => `${r.secret} anew, or ${r.secret}: null to clear it`).join('; ');
  const proof = passwordUsable ? 'send current_password (your account password) with the change, or give ' : 'give ';
  return `${parts.join('; ')}: ${proof}${ways}. Nothing was changed`;
}
