// Local accounts for password mode (docs/decisions/0015-auth-modes-and-sessions.md) and the
// one-time setup code that lets the first account be made. An account is an `admin` (everything) or
// a `viewer` (reads only: the gate refuses its writes, auth/roles.ts); the box always keeps at
// least one admin.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { DB } from './db.js';

export const ROLES = ['admin', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (v: unknown): v is Role => (ROLES as readonly unknown[]).includes(v);

export interface Account {
  username: string;
  password_hash: string;
  role: Role;
  created_at: number;
  updated_at: number;
}

/** An account as it may be shown: never its password hash. */
export type AccountSummary = Omit<Account, 'password_hash'>;

/** Why an account change was refused (nothing was changed). */
export class AccountChangeRefused extends Error {
  constructor(readonly reason: 'exists' | 'missing' | 'last_admin', message: string) {
    super(message);
  }
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
const missing = (username: string) => new AccountChangeRefused('missing', `no account named ${JSON.stringify(username)}`);

export class AccountStore {
  private readonly stmt;

  constructor(private readonly db: DB, private readonly now: () => number = Date.now) {
    this.stmt = {
      count: db.prepare('SELECT count(*) AS n FROM accounts'),
      get: db.prepare('SELECT * FROM accounts WHERE username = ?'),
      role: db.prepare('SELECT role FROM accounts WHERE username = ?').pluck(),
      list: db.prepare('SELECT username, role, created_at, updated_at FROM accounts ORDER BY username'),
      admins: db.prepare("SELECT count(*) FROM accounts WHERE role = 'admin'").pluck(),
      // A new account is an admin unless told otherwise; an existing one keeps its role.
      upsert: db.prepare(
        `INSERT INTO accounts (username, password_hash, role, created_at, updated_at) VALUES (?, ?, coalesce(?, 'admin'), ?, ?)
         ON CONFLICT (username) DO UPDATE SET password_hash = excluded.password_hash, role = coalesce(?, role), updated_at = excluded.updated_at`,
      ),
      insert: db.prepare('INSERT INTO accounts (username, password_hash, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?)'),
      setRole: db.prepare('UPDATE accounts SET role = ?, updated_at = ? WHERE username = ?'),
      remove: db.prepare('DELETE FROM accounts WHERE username = ?'),
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

  /** The account's role; undefined when no such account exists. */
  roleOf(username: string): Role | undefined {
    return this.stmt.role.get(username) as Role | undefined;
  }

  /** Every account, by name, without password hashes. */
  list(): AccountSummary[] {
    return this.stmt.list.all() as AccountSummary[];
  }

  /**
   * Creates the account or replaces its password; `role`, when given, is set too (a new account
   * without one is an admin). Demoting the last admin is refused (AccountChangeRefused).
   */
  setPassword(username: string, passwordHash: string, role?: Role): void {
    this.whileWriting(() => {
      if (role) this.keepAnAdmin(username, role);
      const t = this.now();
      this.stmt.upsert.run(username, passwordHash, role ?? null, t, t, role ?? null);
      // Once an account exists the setup code has no use left.
      this.stmt.clearCode.run();
    });
  }

  /** Makes a new account; refused when the name is taken. */
  create(username: string, passwordHash: string, role: Role): void {
    this.whileWriting(() => {
      if (this.get(username)) throw new AccountChangeRefused('exists', `an account named ${JSON.stringify(username)} exists already`);
      const t = this.now();
      this.stmt.insert.run(username, passwordHash, role, t, t);
      this.stmt.clearCode.run();
    });
  }

  /** Changes an existing account's role, its password, or both; refused for the last admin's demotion. */
  update(username: string, change: { role?: Role; passwordHash?: string }): void {
    this.whileWriting(() => {
      if (!this.get(username)) throw missing(username);
      if (change.role) {
        this.keepAnAdmin(username, change.role);
        this.stmt.setRole.run(change.role, this.now(), username);
      }
      if (change.passwordHash) this.setPassword(username, change.passwordHash);
    });
  }

  /** Removes an account; refused for the last admin. */
  remove(username: string): void {
    this.whileWriting(() => {
      if (!this.get(username)) throw missing(username);
      this.keepAnAdmin(username, undefined);
      this.stmt.remove.run(username);
    });
  }

  /** Refuses a change that would leave no admin: `username` becoming `role` (undefined: removed). */
  private keepAnAdmin(username: string, role: Role | undefined): void {
    if (role === 'admin' || this.roleOf(username) !== 'admin') return;
    if ((this.stmt.admins.get() as number) <= 1) throw new AccountChangeRefused('last_admin', `${username} is the last admin: the box must keep at least one admin: make another account an admin first`);
  }

  /** Runs fn in a transaction that holds the write lock from its start (BEGIN IMMEDIATE); nested, a savepoint. */
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
