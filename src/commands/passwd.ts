// printbox-agent passwd [--role admin|viewer] USER: sets a local account's password (making the
// account if needed: an admin unless --role says otherwise), and its role when --role is given,
// for the person with a shell on the box. The password is read from standard input: typed twice
// at a terminal (not echoed), or the first line of a pipe. The last admin cannot be made a viewer.
// Every session of that user ends at once (sessions live in the database, which the running agent
// reads on every request).
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Writable } from 'node:stream';
import { databasePath, loadConfig } from '../config/config.js';
import { openDatabase } from '../store/db.js';
import { AccountChangeRefused, AccountStore, ROLES, isRole, usernameProblem } from '../store/accounts.js';
import { asDataDirOwner } from '../store/as-owner.js';
import { hashPassword, passwordProblem } from '../auth/passwords.js';
import { removeSetupCodeFile } from '../auth/setup-code.js';
import { SessionStore } from '../auth/sessions.js';
import { errorText } from '../shared/error-text.js';

async function readSecret(prompt: string): Promise<string> {
  const tty = process.stdin.isTTY;
  // At a terminal, the prompt is written and the typing is not.
  const muted = new Writable({ write: (_c, _e, done) => done() });
  if (tty) process.stderr.write(prompt);
  const rl = createInterface({ input: process.stdin, output: tty ? muted : undefined, terminal: tty });
  const line = await new Promise<string>((resolve) => {
    rl.once('line', resolve);
    rl.once('close', () => resolve(''));
  });
  rl.close();
  if (tty) process.stderr.write('\n');
  return line;
}

export async function run(args: string[], configPath: string | undefined): Promise<number> {
  const usage = 'usage: printbox-agent passwd [--role admin|viewer] USER   (the password is read from standard input)\n';
  let parsed;
  try {
    parsed = parseArgs({ args, options: { role: { type: 'string' } }, allowPositionals: true });
  } catch (err) {
    process.stderr.write(`printbox-agent passwd: ${errorText(err)}\n${usage}`);
    return 2;
  }
  const [user, ...extra] = parsed.positionals;
  const role = parsed.values.role;
  if (!user || extra.length > 0) {
    process.stderr.write(usage);
    return 2;
  }
  if (role !== undefined && !isRole(role)) {
    process.stderr.write(`printbox-agent passwd: --role must be one of ${ROLES.join(', ')}, got ${JSON.stringify(role)}\n`);
    return 2;
  }
  const nameProblem = usernameProblem(user);
  if (nameProblem) {
    process.stderr.write(`printbox-agent passwd: ${nameProblem}\n`);
    return 2;
  }
  const password = await readSecret('New password: ');
  if (process.stdin.isTTY && (await readSecret('Again: ')) !== password) {
    process.stderr.write('printbox-agent passwd: the two passwords differ; nothing changed\n');
    return 1;
  }
  const weak = passwordProblem(password);
  if (weak) {
    process.stderr.write(`printbox-agent passwd: ${weak}; nothing changed\n`);
    return 1;
  }
  const hash = await hashPassword(password);
  const config = loadConfig(configPath);
  const refused = asDataDirOwner(config.data_dir, () => {
    const db = openDatabase(databasePath(config));
    try {
      new AccountStore(db).setPassword(user, hash, role);
      new SessionStore(db).deleteUser(user);
    } catch (err) {
      if (err instanceof AccountChangeRefused) return err.message;
      throw err;
    } finally {
      db.close();
    }
    removeSetupCodeFile(config.data_dir);
    return undefined;
  });
  if (refused) {
    process.stderr.write(`printbox-agent passwd: ${refused}; nothing changed\n`);
    return 1;
  }
  process.stdout.write(`password set for ${user}${role ? ` (role ${role})` : ''}\n`);
  return 0;
}
