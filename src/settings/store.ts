// Settings persisted in the `settings` table as one JSON document, over defaults from the config
// file. Listeners hear every change so schedules and scans use new values at once.
import type { DB } from '../store/db.js';
import { SettingsTable } from '../store/settings-table.js';
import { defaultSettings, knownSettingsOnly, mergeSettings, type Settings, type SettingsDefaults } from './settings.js';
import { errorText } from '../shared/error-text.js';

const KEY = 'settings';

export class SettingsStore {
  private current: Settings;
  private readonly listeners = new Set<(s: Settings) => void>();
  private readonly table: SettingsTable;
  private readonly base: Settings;

  constructor(db: DB, defaults: SettingsDefaults, private readonly onBadStored?: (msg: string) => void) {
    this.table = new SettingsTable(db);
    this.base = defaultSettings(defaults);
    this.current = this.stored();
  }

  private stored(): Settings {
    const onBadStored = this.onBadStored;
    const base = this.base;
    const stored = this.table.get(KEY);
    let current = base;
    if (stored !== undefined) {
      try {
        const { known, unknown } = knownSettingsOnly(JSON.parse(stored));
        if (unknown.length) onBadStored?.(`stored settings this agent does not know, ignored: ${unknown.join(', ')}`);
        current = mergeSettings(base, known);
      } catch (err) {
        // Stored by an older or newer agent with a field this one rejects: keep the defaults,
        // say so, and leave the stored row alone until someone saves.
        onBadStored?.(errorText(err));
      }
    }
    return current;
  }

  /**
   * Reads the stored document again, after another process wrote it (provisioning from a boot
   * partition that appeared while the agent runs); listeners hear it when anything changed.
   */
  reload(): boolean {
    const next = this.stored();
    if (JSON.stringify(next) === JSON.stringify(this.current)) return false;
    this.current = next;
    for (const l of this.listeners) l(next);
    return true;
  }

  get(): Settings {
    return this.current;
  }

  /**
   * Validates and stores a partial update; throws SettingsError and changes nothing on error.
   * `check` sees the settings before and after, before anything is stored, and may refuse by
   * throwing (the route's rule on secrets' destinations: it must judge the very change stored).
   */
  update(patch: unknown, check?: (current: Settings, next: Settings) => void): Settings {
    const next = mergeSettings(this.current, patch);
    check?.(this.current, next);
    this.table.set(KEY, JSON.stringify(next));
    this.current = next;
    for (const l of this.listeners) l(next);
    return next;
  }

  onChange(listener: (s: Settings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
