// The `settings` table (migration 1): named text values the agent keeps between runs. Its users
// each own one key: the settings document (settings/store.ts), the update state
// (update/service.ts), the hash of the provisioning file applied (commands/provision.ts), the
// storage guard's write probe (commands/serve.ts). Each writes its whole value at once.
import type { Statement } from 'better-sqlite3';
import type { DB } from './db.js';

export class SettingsTable {
  private readonly read: Statement<[string], string>;
  private readonly write: Statement<[string, string]>;

  /** Statements prepared once: a write (the storage probe) may run often. */
  constructor(db: DB) {
    this.read = db.prepare<[string], string>('SELECT value FROM settings WHERE key = ?').pluck();
    this.write = db.prepare<[string, string]>('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  }

  /** The value stored under `key`, or undefined when none is. */
  get(key: string): string | undefined {
    return this.read.get(key);
  }

  /** Stores `value` under `key`, replacing what was there. */
  set(key: string, value: string): void {
    this.write.run(key, value);
  }
}
