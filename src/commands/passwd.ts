// printbox-agent passwd USER: sets a local account's password (making the account if needed),
// for the person with a shell on the box. The password is read from standard input: typed twice
// at a terminal (not echoed), or the first line of a pipe. Every session of that user ends at once
// (sessions live in the database, which the running agent reads on every request).
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { databasePath, loadConfig } from '../config/config.js';
import { openDatabase } from '../store/db.js';
import { AccountStore, usernameProblem } from '../store/accounts.js';
import { asDataDirOwner } from '../store/as-owner.js';
import { hashPassword, passwordProblem } from '../auth/passwords.js';
import { removeSetupCodeFile } from '../auth/setup-code.js';
import { SessionStore } from '../auth/sessions.js';

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
  const user = args[0];
  if (!user || args.length > 1) {
    process.stderr.write('usage: printbox-agent passwd USER   (the password is read from standard input)\n');
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
  asDataDirOwner(config.data_dir, () => {
    const db = openDatabase(databasePath(config));
    try {
      new AccountStore(db).setPassword(user, hash);
      new SessionStore(db).deleteUser(user);
    } finally {
      db.close();
    }
    removeSetupCodeFile(config.data_dir);
  });
  process.stdout.write(`password set for ${user}\n`);
  return 0;
}
