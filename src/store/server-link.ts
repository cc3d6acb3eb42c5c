// The server link's durable state, one row (migration 8): the box's agent_id (made once, kept for
// life), the server the agent token belongs to, the token itself (a secret: only here, never
// logged, never shown by GET /settings), the upload cursor and the managed-settings version.
import { randomUUID } from 'node:crypto';
import type { DB } from './db.js';
import type { Statement } from 'better-sqlite3';

export interface LinkState {
  agent_id: string;
  server_url: string;
  agent_token: string;
  tenant_id: string;
  /** id of the last metrics_raw row the server acknowledged (2xx): uploads resume after it. */
  metrics_cursor: number;
  /** The time up to which the server holds readings (raw rows, or tier rows standing in for them). */
  metrics_cursor_ts: number;
  /** The managed settings version last applied (the server's SHA-256 hex), '' for none. */
  settings_version: string;
}

export class LinkStore {
  private readonly read: Statement;
  private readonly writeRegistration;
  private readonly writeCursor;
  private readonly writeSettingsVersion;
  private readonly writeForget;

  constructor(db: DB) {
    this.read = db.prepare('SELECT agent_id, server_url, agent_token, tenant_id, metrics_cursor, metrics_cursor_ts, managed_settings_version AS settings_version FROM server_link WHERE id = 1');
    this.writeRegistration = db.prepare('UPDATE server_link SET server_url = ?, agent_token = ?, tenant_id = ? WHERE id = 1');
    this.writeCursor = db.prepare(
      'UPDATE server_link SET metrics_cursor = max(metrics_cursor, ?), metrics_cursor_ts = max(metrics_cursor_ts, ?) WHERE id = 1',
    );
    this.writeSettingsVersion = db.prepare('UPDATE server_link SET managed_settings_version = ? WHERE id = 1');
    // The identity is made once; looked for first, since even an INSERT OR IGNORE is a write that a
    // full or read-only card refuses (the agent must still start there).
    if (!this.read.get()) db.prepare('INSERT INTO server_link (id, agent_id) VALUES (1, ?)').run(randomUUID());
    // Another server: its token, cursor and settings version mean nothing there.
    this.writeForget = db.prepare(
      "UPDATE server_link SET server_url = ?, agent_token = '', tenant_id = '', metrics_cursor = 0, metrics_cursor_ts = 0, managed_settings_version = '' WHERE id = 1",
    );
  }

  get(): LinkState {
    return this.read.get() as LinkState;
  }

  /** Starts over for `url` when the stored state belongs to another server. */
  useServer(url: string): LinkState {
    if (this.get().server_url !== url) this.writeForget.run(url);
    return this.get();
  }

  registered(url: string, token: string, tenantId: string): void {
    this.writeRegistration.run(url, token, tenantId);
  }

  /** The server refused the token: register again (the cursor stays: nothing was lost). */
  dropToken(): void {
    const s = this.get();
    this.writeRegistration.run(s.server_url, '', s.tenant_id);
  }

  /** The server acknowledged raw rows up to `id` (and readings up to `ts`); tier rows move only `ts`. */
  advanceCursor(id: number, ts: number): void {
    this.writeCursor.run(id, ts);
  }

  setSettingsVersion(v: string): void {
    this.writeSettingsVersion.run(v);
  }
}
