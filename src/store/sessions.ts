// The `sessions` table (migration 9): one row per signed-in session, keyed by the SHA-256 of its
// token (never the token). What a session means, its limits and its fallbacks on a card that
// takes no writes are auth/sessions.ts's; this module holds the table's statements.
import type { DB } from './db.js';

export class SessionRows {
  private readonly stmt;

  constructor(db: DB) {
    this.stmt = {
      insert: db.prepare('INSERT INTO sessions (token_hash, user, created_at, expires_at) VALUES (?, ?, ?, ?)'),
      get: db.prepare('SELECT user, expires_at FROM sessions WHERE token_hash = ?'),
      delete: db.prepare('DELETE FROM sessions WHERE token_hash = ?'),
      deleteUser: db.prepare('DELETE FROM sessions WHERE user = ? AND token_hash <> ?'),
      ofUser: db.prepare('SELECT token_hash FROM sessions WHERE user = ? AND token_hash <> ?').pluck(),
      sweep: db.prepare('DELETE FROM sessions WHERE expires_at <= ?'),
      expired: db.prepare('SELECT token_hash FROM sessions WHERE expires_at <= ?').pluck(),
      count: db.prepare('SELECT count(*) FROM sessions').pluck(),
      oldest: db.prepare('SELECT token_hash FROM sessions ORDER BY created_at LIMIT ?').pluck(),
      deleteOldest: db.prepare('DELETE FROM sessions WHERE token_hash IN (SELECT token_hash FROM sessions ORDER BY created_at LIMIT ?)'),
    };
  }

  insert(hash: Buffer, user: string, createdAt: number, expiresAt: number): void {
    this.stmt.insert.run(hash, user, createdAt, expiresAt);
  }

  get(hash: Buffer): { user: string; expires_at: number } | undefined {
    return this.stmt.get.get(hash) as { user: string; expires_at: number } | undefined;
  }

  delete(hash: Buffer): void {
    this.stmt.delete.run(hash);
  }

  /** The hashes of `user`'s sessions but the one hashed `kept`. */
  hashesOfUser(user: string, kept: Buffer): Buffer[] {
    return this.stmt.ofUser.all(user, kept) as Buffer[];
  }

  /** Deletes `user`'s sessions but the one hashed `kept`. */
  deleteUser(user: string, kept: Buffer): void {
    this.stmt.deleteUser.run(user, kept);
  }

  /** The hashes of the sessions expired at `now`. */
  expiredHashes(now: number): Buffer[] {
    return this.stmt.expired.all(now) as Buffer[];
  }

  deleteExpired(now: number): void {
    this.stmt.sweep.run(now);
  }

  count(): number {
    return this.stmt.count.get() as number;
  }

  /** The hashes of the `n` oldest sessions (by creation). */
  oldestHashes(n: number): Buffer[] {
    return this.stmt.oldest.all(n) as Buffer[];
  }

  /** Deletes the `n` oldest sessions (by creation). */
  deleteOldest(n: number): void {
    this.stmt.deleteOldest.run(n);
  }
}
