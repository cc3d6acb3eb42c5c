// The one-time setup code (docs/decisions/0015-auth-modes-and-sessions.md): while no account
// exists, the first one is made by whoever can read this code from the box's console or boot
// partition. Its plain text lives in <data_dir>/setup-code (0600) so the boot-time provisioning and
// the agent show the same code; the database keeps its hash, and both go when the first account is
// made.
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../shared/atomic-file.js';
import { hashSetupCode, type AccountStore } from '../store/accounts.js';

// Crockford's base32: no I, L, O or U to misread. 12 characters: 60 bits.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export const setupCodePath = (dataDir: string): string => join(dataDir, 'setup-code');

export function newSetupCode(): string {
  const chars = Array.from({ length: 12 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
  return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8)}`;
}

/**
 * The current setup code, made when needed; undefined once an account exists (then any code left
 * behind is removed).
 */
export function ensureSetupCode(accounts: AccountStore, dataDir: string): string | undefined {
  const file = setupCodePath(dataDir);
  // Under the write lock: at boot the agent and provisioning may both get here at once, and
  // each would otherwise make its own code, the file from one and the hash from the other.
  return accounts.whileWriting(() => {
    if (accounts.count() > 0) {
      rmSync(file, { force: true });
      return undefined;
    }
    const stored = accounts.setupCodeHash();
    if (stored && existsSync(file)) {
      const code = readFileSync(file, 'utf8').trim();
      if (hashSetupCode(code) === stored) return code;
    }
    const code = newSetupCode();
    // File first: a power cut between the two leaves a file whose hash does not match, made anew.
    writeFileAtomic(file, code + '\n', 0o600);
    accounts.setSetupCode(code);
    return code;
  });
}

export function removeSetupCodeFile(dataDir: string): void {
  rmSync(setupCodePath(dataDir), { force: true });
}
