// Local sessions (contract 5): opaque random tokens. The database keeps each session as the SHA-256
// hash of its token, its user and its expiry (migration 9), so an agent restart (a crash, an
// update) signs nobody out, and a copy of the database file signs nobody in: the token itself
// is only ever in the browser's cookie. The token has 256 random bits, so a fast hash is enough
// (nothing to guess, nothing a slow hash would protect).
import { createHash, randomBytes } from 'node:crypto';
import type { DB } from '../store/db.js';
import { SessionRows } from '../store/sessions.js';
import { storageProblem } from '../store/storage-guard.js';

export const SESSION_COOKIE = 'pm_agent_session';
export const SESSION_FALLBACK_MS = 24 * 3600_000;
// A server's expires_at further ahead than this is taken as this (a session is not for years).
export const SESSION_MAX_MS = 30 * 24 * 3600_000;
// Bounds the table if something logs in in a loop; the oldest session goes first.
export const MAX_SESSIONS = 10_000;

export interface Session {
  user: string;
  expires: number; // epoch ms
}

/** Why a session ended: said to whatever was bound to it (an open event stream). */
// account_changed: an admin changed the account's role or password; account_removed: it is gone.
export type SessionEnd = 'logout' | 'password_changed' | 'account_changed' | 'account_removed' | 'expired' | 'ended';

/** What the database keeps for a token: its SHA-256 (32 bytes). */
export const tokenHash = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** The key a session is known by in this process (its token's hash in hex; never the token). */
export const sessionKey = (token: string): string => tokenHash(token).toString('hex');

export class SessionStore {
  private readonly rows: SessionRows;
  // A card that takes no writes (full, read-only: store/storage-guard.ts) does not stop sign-in or
  // sign-out: a session that could not be stored lives here for this run, and one that could not
  // be deleted is refused here for this run. Keys are token hashes, as in the table.
  private readonly unstored = new Map<string, Session>();
  private readonly undeleted = new Set<string>();
  // Told of every session this store ends, so long-lived channels bound to it close at once
  // instead of outliving it (a cookie refused on the next request is not enough for a stream).
  private readonly endListeners = new Set<(key: string, why: SessionEnd) => void>();

  constructor(
    db: DB,
    private readonly now: () => number = Date.now,
    private readonly onStorageProblem: (err: Error, doing: string) => void = () => {},
  ) {
    this.rows = new SessionRows(db);
  }

  create(user: string, expires?: number): { token: string; session: Session } {
    const now = this.now();
    // The login route refuses an expiry already past; here only the cap and the fallback apply.
    const session = { user, expires: Math.min(expires && expires > now ? expires : now + SESSION_FALLBACK_MS, now + SESSION_MAX_MS) };
    const token = randomBytes(32).toString('base64url');
    const hash = tokenHash(token);
    this.write('storing a session', () => {
      if (this.rows.count() >= MAX_SESSIONS) {
        this.sweep();
        const over = this.rows.count() - MAX_SESSIONS + 1;
        if (over > 0) {
          const evicted = this.rows.oldestHashes(over).map((h) => h.toString('hex'));
          this.rows.deleteOldest(over);
          this.ended(evicted, 'ended');
        }
      }
      this.rows.insert(hash, user, now, session.expires);
    }, () => this.unstored.set(hash.toString('hex'), session));
    return { token, session };
  }

  /** The live session for a token, or undefined (an expired one is forgotten). */
  get(token: string | undefined): Session | undefined {
    if (!token) return undefined;
    const hash = tokenHash(token);
    const key = hash.toString('hex');
    if (this.undeleted.has(key)) return undefined;
    const row = this.rows.get(hash);
    const s = row ? { user: row.user, expires: row.expires_at } : this.unstored.get(key);
    if (!s) return undefined;
    if (s.expires <= this.now()) {
      this.delete(token, 'expired');
      return undefined;
    }
    return s;
  }

  delete(token: string, why: SessionEnd = 'logout'): void {
    const hash = tokenHash(token);
    const key = hash.toString('hex');
    this.unstored.delete(key);
    this.write('ending a session', () => this.rows.delete(hash), () => this.undeleted.add(key));
    this.ended([key], why);
  }

  /** Ends every session of a user but `keep` (after a password change, or the account's removal). */
  deleteUser(user: string, keep?: string, why: SessionEnd = 'password_changed'): void {
    const kept = keep ? tokenHash(keep) : Buffer.alloc(0);
    const keys: string[] = [];
    for (const [k, s] of this.unstored) {
      if (s.user === user && k !== kept.toString('hex')) {
        this.unstored.delete(k);
        keys.push(k);
      }
    }
    // Read before the delete, to say which ended; readable even on a card that takes no writes.
    const stored = this.rows.hashesOfUser(user, kept).map((h) => h.toString('hex'));
    keys.push(...stored);
    this.write('ending the sessions of a user', () => this.rows.deleteUser(user, kept), () => {
      // Not deletable now: every session of the user but `keep` is refused for this run instead.
      for (const k of stored) this.undeleted.add(k);
    });
    this.ended(keys, why);
  }

  /** Removes expired sessions (the agent calls it every 10 minutes and at start). */
  sweep(): void {
    const now = this.now();
    const keys: string[] = [];
    for (const [k, s] of this.unstored) {
      if (s.expires <= now) {
        this.unstored.delete(k);
        keys.push(k);
      }
    }
    if (this.endListeners.size) keys.push(...this.rows.expiredHashes(now).map((h) => h.toString('hex')));
    this.write('removing expired sessions', () => this.rows.deleteExpired(now), () => {});
    this.ended(keys, 'expired');
  }

  /** Calls `listener` with the key (sessionKey) of each session ended from now on; returns the unsubscribe. */
  onEnd(listener: (key: string, why: SessionEnd) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  private ended(keys: string[], why: SessionEnd): void {
    for (const key of keys) {
      for (const l of this.endListeners) {
        try {
          l(key, why);
        } catch {
          // A listener's failure must not undo or interrupt the sign-out itself.
        }
      }
    }
  }

  private write(doing: string, run: () => void, instead: () => void): void {
    try {
      run();
    } catch (err) {
      if (!storageProblem(err)) throw err;
      this.onStorageProblem(err as Error, doing);
      instead();
    }
  }
}
