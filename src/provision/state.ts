// What the last provisioning run did with printbox.toml, for the agent's GET /settings,
// the console banner and the boot-time check that skips Node when the file has not changed
// (/usr/libexec/printbox/provision-unchanged). One small JSON file in the data directory, owned by
// the agent's user: written by `printbox-agent provision` (and by that check, for "unchanged"),
// read by the agent, which also reloads its settings when the file changes (a late boot
// partition applied while it runs). One key per line: the shell check reads it with sed.
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../shared/atomic-file.js';

export const PROVISION_STATE_FILE = 'provision-state.json';

export type ProvisionOutcome = 'applied' | 'unchanged' | 'refused' | 'no-boot-partition' | 'no-file';

export interface ProvisionState {
  state: ProvisionOutcome;
  /** For people: "printbox.toml applied at …", "unchanged since …", "refused: …", "no boot partition found". */
  message: string;
  /** When this run happened (ISO 8601, UTC). */
  checked_at: string;
  /** When the file now on the partition was applied ("applied" and "unchanged"). */
  applied_at?: string;
  /** SHA-256 of the file as kept after it was applied (the password line removed). */
  sha256?: string;
}

export const provisionStatePath = (dataDir: string): string => join(dataDir, PROVISION_STATE_FILE);

export function provisionMessage(s: Omit<ProvisionState, 'message'>, reason?: string): string {
  switch (s.state) {
    case 'applied':
      return `printbox.toml applied at ${s.applied_at}`;
    case 'unchanged':
      return `printbox.toml unchanged since ${s.applied_at ?? 'it was applied'}`;
    case 'refused':
      return `refused: ${reason ?? 'printbox.toml not applied'}`;
    case 'no-boot-partition':
      return 'no boot partition found';
    case 'no-file':
      return 'no printbox.toml on the boot partition';
  }
}

export function writeProvisionState(dataDir: string, s: ProvisionState): void {
  const lines = Object.entries(s)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  // 0640: the agent's user and group read it; the directory (0750) keeps everyone else out.
  writeFileAtomic(provisionStatePath(dataDir), `{\n${lines.join(',\n')}\n}\n`, 0o640);
}

const OUTCOMES: ProvisionOutcome[] = ['applied', 'unchanged', 'refused', 'no-boot-partition', 'no-file'];

/** The last run's record, or undefined when there is none (yet) or it cannot be read. */
export function readProvisionState(dataDir: string): ProvisionState | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(provisionStatePath(dataDir), 'utf8'));
  } catch {
    return undefined;
  }
  const p = parsed as Record<string, unknown>;
  if (typeof p !== 'object' || p === null || !OUTCOMES.includes(p.state as ProvisionOutcome)) return undefined;
  if (typeof p.message !== 'string' || typeof p.checked_at !== 'string') return undefined;
  const out: ProvisionState = { state: p.state as ProvisionOutcome, message: p.message, checked_at: p.checked_at };
  if (typeof p.applied_at === 'string') out.applied_at = p.applied_at;
  if (typeof p.sha256 === 'string') out.sha256 = p.sha256;
  return out;
}

/**
 * Calls onChange (debounced) whenever the record is written anew: provisioning ran, perhaps
 * while the agent serves (a boot partition that appeared late). A slow poll backs up the
 * directory watch, which a busy data directory (SQLite's files) wakes often but cheaply.
 */
export function watchProvisionState(dataDir: string, onChange: () => void): () => void {
  const file = provisionStatePath(dataDir);
  const stamp = () => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  let last = stamp();
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    timer = undefined;
    const now = stamp();
    if (now === last) return;
    last = now;
    onChange();
  };
  const soon = () => {
    if (!timer) timer = setTimeout(check, 200);
  };
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dataDir, { persistent: false }, (_event, name) => {
      if (name === null || name === PROVISION_STATE_FILE) soon();
    });
  } catch {
    watcher = undefined;
  }
  const poll = setInterval(soon, 30_000);
  poll.unref();
  return () => {
    clearInterval(poll);
    if (timer) clearTimeout(timer);
    watcher?.close();
  };
}
