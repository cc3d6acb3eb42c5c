// printbox-agent provision: run as root at every boot, beside the network and the agent
// (printbox-provision.service). Applies printbox.toml from the boot partition when it changed
// since the last boot (a password is stored hashed, a Wi-Fi key in a root-only file, then their
// lines removed from the file), and,
// while no account exists, puts the one-time setup code where the technician can read it.
// A bad file is applied not at all; the reason goes beside it and to the journal; the box boots.
//   --boot DIR   the boot partition (default /boot/firmware)
//   --etc DIR    where system files go (default /etc)
//   --run DIR    where the console banner finds the setup code (default /run/printbox-setup)
// What happened goes to <data_dir>/provision-state.json (provision/state.ts: GET /settings, the
// check that skips this command when the file is unchanged) and one line to <run>/provisioning
// (the console banner). The services whose files it changed are listed in <run>/system-changed,
// for printbox-system-reload.service to have them read their files again.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { databasePath, loadConfig } from '../config/config.js';
import { openDatabase } from '../store/db.js';
import { AccountStore } from '../store/accounts.js';
import { SettingsTable } from '../store/settings-table.js';
import { SettingsStore } from '../settings/store.js';
import { settingsDefaults } from '../settings/settings.js';
import { writeFileAtomic } from '../shared/atomic-file.js';
import { asDataDirOwner } from '../store/as-owner.js';
import { hashPassword } from '../auth/passwords.js';
import { ensureSetupCode } from '../auth/setup-code.js';
import { parseProvision, withoutSecrets, ProvisionError, type Provision } from '../provision/file.js';
import { systemFiles, writeSystemFiles } from '../provision/system-files.js';
import type { SystemFile } from '../provision/system-file.js';
import { provisionMessage, readProvisionState, writeProvisionState, type ProvisionState } from '../provision/state.js';

const APPLIED_KEY = 'provisioned_file_sha256';
const SYSTEM_CHANGED = 'system-changed';

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(name);
  if (i === -1) return fallback;
  if (i + 1 >= args.length) throw new Error(`${name} needs a directory`);
  return args[i + 1];
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const say = (msg: string) => process.stdout.write(`printbox-provision: ${msg}\n`);

/** A mounted file system: the directory's device differs from its parent's (as mountpoint(1)). */
function isMountPoint(dir: string): boolean {
  try {
    return statSync(dir).dev !== statSync(dirname(dir)).dev;
  } catch {
    return false;
  }
}

export async function run(args: string[], configPath: string | undefined): Promise<number> {
  const boot = option(args, '--boot', '/boot/firmware');
  const etc = option(args, '--etc', '/etc');
  const runDir = option(args, '--run', '/run/printbox-setup');
  const config = loadConfig(configPath);
  const file = join(boot, 'printbox.toml');
  const errorFile = join(boot, 'printbox-toml.error');

  // The appliance's /boot/firmware exists in the root file system too: only a mount is the
  // partition. A directory named with --boot (tests, other layouts) stands for a mounted one.
  const bootPresent = args.includes('--boot') ? existsSync(boot) : isMountPoint(boot);
  const now = new Date().toISOString();
  const previous = asDataDirOwner(config.data_dir, () => readProvisionState(config.data_dir));
  let state: Omit<ProvisionState, 'message'> = { state: bootPresent ? 'no-file' : 'no-boot-partition', checked_at: now };
  let reason: string | undefined;

  if (bootPresent && existsSync(file)) {
    const text = readFileSync(file, 'utf8');
    const db = asDataDirOwner(config.data_dir, () => openDatabase(databasePath(config)));
    try {
      const applied = new SettingsTable(db).get(APPLIED_KEY);
      if (applied === sha256(text)) {
        say('printbox.toml unchanged since it was applied');
        const since = previous?.sha256 === applied ? previous.applied_at : undefined;
        state = { state: 'unchanged', checked_at: now, applied_at: since, sha256: applied };
      } else {
        const settings = new SettingsStore(db, settingsDefaults(config));
        let p: Provision | undefined;
        let files: SystemFile[] = [];
        try {
          p = parseProvision(text, settings.get());
          // Every file under /etc worked out before anything is written: a refusal writes nothing.
          files = systemFiles(etc, p);
        } catch (err) {
          p = undefined;
          if (!(err instanceof ProvisionError)) throw err;
          reason = err.message;
          process.stderr.write(`printbox-provision: printbox.toml not applied: ${reason}\n`);
          writeFileAtomic(errorFile, `printbox.toml not applied: ${reason}\n`, 0o644);
          state = { state: 'refused', checked_at: now, sha256: sha256(text) };
        }
        if (p) {
          const kept = await apply(p, text, files, { db, settings, file, errorFile, etc, dataDir: config.data_dir, runDir });
          state = { state: 'applied', checked_at: now, applied_at: now, sha256: kept };
        }
      }
    } finally {
      db.close();
    }
  }
  if (!bootPresent) say(`no boot partition at ${boot}`);
  const record: ProvisionState = { ...state, message: provisionMessage(state, reason) };
  // Last, after the database: the agent reloads its settings when this file changes.
  asDataDirOwner(config.data_dir, () => writeProvisionState(config.data_dir, record));

  // The setup code: shown while no account exists, gone with the first one.
  const code = asDataDirOwner(config.data_dir, () => {
    const db = openDatabase(databasePath(config));
    try {
      return config.web.auth.mode === 'password' ? ensureSetupCode(new AccountStore(db), config.data_dir) : undefined;
    } finally {
      db.close();
    }
  });
  const codeFile = join(runDir, 'code');
  const setupTxt = join(boot, 'printbox-setup.txt');
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  writeFileAtomic(join(runDir, 'provisioning'), record.message + '\n', 0o600);
  if (code) {
    writeFileAtomic(codeFile, code + '\n', 0o600);
    if (bootPresent) {
      writeFileAtomic(
        setupTxt,
        `PrintBox setup code: ${code}\r\n\r\nOpen https://<box name>.local:8443/ (the name and address are on the box's screen),\r\n` +
          `enter this code, and choose the administrator's name and password. The code works once.\r\n`,
        0o644,
      );
    }
    say('no account yet: the setup code is on the console and in printbox-setup.txt');
  } else {
    rmSync(codeFile, { force: true });
    if (bootPresent) rmSync(setupTxt, { force: true });
  }
  return 0;
}

/**
 * networkd and timesyncd do not wait for provisioning (nor does the agent): they may already run
 * with the files as they were. Adds the services to the list printbox-system-reload.service
 * (OnSuccess= of this unit) reloads or restarts, then removes.
 */
function markSystemChanged(runDir: string, services: string[]): void {
  if (!services.length) return;
  const list = join(runDir, SYSTEM_CHANGED);
  const pending = existsSync(list) ? readFileSync(list, 'utf8').split('\n').filter(Boolean) : [];
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  writeFileAtomic(list, [...new Set([...pending, ...services])].join('\n') + '\n', 0o600);
}

async function apply(
  p: Provision,
  text: string,
  files: SystemFile[],
  to: { db: ReturnType<typeof openDatabase>; settings: SettingsStore; file: string; errorFile: string; etc: string; dataDir: string; runDir: string },
): Promise<string> {
  const hash = p.admin && (await hashPassword(p.admin.password));
  const kept = p.admin || p.wifi?.psk !== undefined ? withoutSecrets(text) : text;
  // Database first, in one transaction: the account, the settings, and which file was applied.
  // IMMEDIATE: the agent may be writing beside this at boot.
  asDataDirOwner(to.dataDir, () =>
    to.db.transaction(() => {
      if (p.admin && hash) new AccountStore(to.db).setPassword(p.admin.user, hash, 'admin');
      if (Object.keys(p.settings).length) to.settings.update(p.settings);
      new SettingsTable(to.db).set(APPLIED_KEY, sha256(kept));
    }).immediate(),
  );
  markSystemChanged(to.runDir, writeSystemFiles(to.etc, files));
  // Only now the plaintext goes (a temporary file renamed over the old one: the card holds the
  // file with the secrets or the file without them, never half of one): a power cut before this
  // applies the same password and Wi-Fi key again next boot, to the same result.
  if (kept !== text) writeFileAtomic(to.file, kept, 0o644);
  rmSync(to.errorFile, { force: true });
  const removed = [...(p.admin ? [`account ${p.admin.user}; password line removed`] : []), ...(p.wifi?.psk !== undefined ? ['Wi-Fi key stored; wifi_psk line removed'] : [])];
  if (p.wifi) say(`Wi-Fi: network ${JSON.stringify(p.wifi.ssid)}, country ${p.wifi.country}`);
  say(`printbox.toml applied${removed.length ? ` (${removed.join('; ')})` : ''}`);
  return sha256(kept);
}
