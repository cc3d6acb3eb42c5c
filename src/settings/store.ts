// Settings persisted in the `settings` table as one JSON document, over defaults from the config
// file. Listeners hear every change so schedules and scans use new values at once.
import type { DB } from '../store/db.js';
import { defaultSettings, knownSettingsOnly, mergeSettings, type Settings, type SettingsDefaults } from './settings.js';

const KEY = 'settings';

export class SettingsStore {
  private current: Settings;
  private readonly listeners = new Set<(s: Settings) => void>();
  private readonly save;

  constructor(db: DB, defaults: SettingsDefaults, onBadStored?: (msg: string) => void) {
    this.save = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
    const base = defaultSettings(defaults);
    const row = db.prepare('SELECT value FROM settings WHERE key = ?').get(KEY) as { value: string } | undefined;
    this.current = base;
    if (row) {
      try {
        const { known, unknown } = knownSettingsOnly(JSON.parse(row.value));
        if (unknown.length) onBadStored?.(`stored settings this agent does not know, ignored: ${unknown.join(', ')}`);
        this.current = mergeSettings(base, known);
      } catch (err) {
        // Stored by an older or newer agent with a field this one rejects: keep the defaults,
        // say so, and leave the stored row alone until someone saves.
        onBadStored?.((err as Error).message);
      }
    }
  }

  get(): Settings {
    return this.current;
  }

  /** Validates and stores a partial update; throws SettingsError and changes nothing on error. */
  update(patch: unknown): Settings {
    const next = mergeSettings(this.current, patch);
    this.save.run(KEY, JSON.stringify(next));
    this.current = next;
    for (const l of this.listeners) l(next);
    return next;
  }

  onChange(listener: (s: Settings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
