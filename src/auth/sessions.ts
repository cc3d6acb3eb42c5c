// Local sessions (contract 5): opaque tokens held in memory only, lost on restart.
import { randomBytes } from 'node:crypto';

export const SESSION_COOKIE = 'pm_agent_session';
export const SESSION_FALLBACK_MS = 24 * 3600_000;
// A server's expires_at further ahead than this is taken as this (a session is not for years).
export const SESSION_MAX_MS = 30 * 24 * 3600_000;
// Bounds memory if something logs in in a loop; the oldest session goes first.
const MAX_SESSIONS = 10_000;

export interface Session {
  user: string;
  expires: number; // epoch ms
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly now: () => number = Date.now) {}

  create(user: string, expires?: number): { token: string; session: Session } {
    const now = this.now();
    // The login route refuses an expiry already past; here only the cap and the fallback apply.
    const session = { user, expires: Math.min(expires && expires > now ? expires : now + SESSION_FALLBACK_MS, now + SESSION_MAX_MS) };
    const token = randomBytes(32).toString('base64url');
    if (this.sessions.size >= MAX_SESSIONS) this.sweep();
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    this.sessions.set(token, session);
    return { token, session };
  }

  /** The live session for a token, or undefined (an expired one is forgotten). */
  get(token: string | undefined): Session | undefined {
    if (!token) return undefined;
    const s = this.sessions.get(token);
    if (!s) return undefined;
    if (s.expires <= this.now()) {
      this.sessions.delete(token);
      return undefined;
    }
    return s;
  }

  delete(token: string): void {
    this.sessions.delete(token);
  }

  /** Ends every session of a user but `keep` (after a password change). */
  deleteUser(user: string, keep?: string): void {
    for (const [t, s] of this.sessions) if (s.user === user && t !== keep) this.sessions.delete(t);
  }

  sweep(): void {
    const now = this.now();
    for (const [t, s] of this.sessions) if (s.expires <= now) this.sessions.delete(t);
  }
}
