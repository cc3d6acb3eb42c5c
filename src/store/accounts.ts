// Local accounts for password mode (decisions.md, Auth) and the one-time setup code that lets the
// first account be made. Every account is an administrator: the contract's handlers check no roles.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { DB } from './db.js';

export interface Account {
  username: string;
  password_hash: string;
  created_at: number;
  updated_at: number;
}

export const USERNAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,31}$/;

/** Why a user name is not acceptable, or undefined. */
export function usernameProblem(name: string): string | undefined {
  return USERNAME_PATTERN.test(name)
    ? undefined
    : 'username must be 1 to 32 characters: lower-case letters, digits, ".", "_" or "-", starting with a letter or digit';
}

// The setup code has 60 random bits and dies with its first use; a fast hash is enough to keep it
// out of a copied database file.
export const hashSetupCode = (code: string): string => createHash('sha256').update(normalizeSetupCode(code)).digest('hex');
/** Codes are typed from a screen: case, spaces and dashes do not matter. */
export const normalizeSetupCode = (code: string): string => code.toUpperCase().replace(/[\s-]/g, '');

// Statements are prepared once, with the store: the public sign-in page must not compile SQL on
// every request.
export class AccountStore {
  private readonly stmt;

  constructor(private readonly db: DB, private readonly now: () => number = Date.now) {
    this.stmt = {
      count: db.prepare('SELECT count(*) AS n FROM accounts'),
      get: db.prepare('SELECT * FROM accounts WHERE username = ?'),
      upsert: db.prepare(
        `INSERT INTO accounts (username, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (username) DO UPDATE SET password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
      ),
      clearCode: db.prepare('DELETE FROM setup_code'),
      code: db.prepare('SELECT code_hash FROM setup_code'),
      setCode: db.prepare(
        'INSERT INTO setup_code (id, code_hash, created_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET code_hash = excluded.code_hash, created_at = excluded.created_at',
      ),
    };
  }

  count(): number {
    return (this.stmt.count.get() as { n: number }).n;
  }

  get(username: string): Account | undefined {
    return this.stmt.get.get(username) as Account | undefined;
  }

  /** Creates the account or replaces its password. */
  setPassword(username: string, passwordHash: string): void {
    const t = this.now();
    this.stmt.upsert.run(username, passwordHash, t, t);
    // Once an account exists the setup code has no use left.
    this.stmt.clearCode.run();
  }

  /** Runs fn in a transaction that holds the write lock from its start (BEGIN IMMEDIATE). */
  whileWriting<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  setupCodeHash(): string | undefined {
    return (this.stmt.code.get() as { code_hash: string } | undefined)?.code_hash;
  }

  setSetupCode(code: string): void {
    this.stmt.setCode.run(hashSetupCode(code), this.now());
  }

  /**
   * Onboarding: makes the first account if, and only if, no account exists yet and the code is
   * the current setup code; the code is spent in the same transaction. False changes nothing.
   */
  createFirstAccount(code: string, username: string, passwordHash: string): boolean {
    return this.whileWriting(() => {
      const stored = this.setupCodeHash();
      if (this.count() > 0 || !stored) return false;
      const given = Buffer.from(hashSetupCode(code));
      if (!timingSafeEqual(given, Buffer.from(stored))) return false;
      this.setPassword(username, passwordHash);
      return true;
    });
  }
}
