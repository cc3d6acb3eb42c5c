#!/usr/bin/env node
// printbox-agent: the command line. Scripts outside the project depend on these exact names.
// Each subcommand lives in src/commands/<name>.ts and is loaded only when used.
import { errorText } from './shared/error-text.js';

type Command = (args: string[], configPath: string | undefined) => Promise<number>;

const commands: Record<string, () => Promise<{ run: Command }>> = {
  serve: () => import('./commands/serve.js'),
  import: () => import('./commands/import.js'),
  export: () => import('./commands/export.js'),
  rollup: () => import('./commands/rollup.js'),
  redirect: () => import('./commands/redirect.js'),
  version: () => import('./commands/version.js'),
  passwd: () => import('./commands/passwd.js'),
  provision: () => import('./commands/provision.js'),
  'install-allowed': () => import('./commands/install-allowed.js'),
};

const usage = `usage: printbox-agent [--config FILE] [serve | import FILE | export | rollup | redirect | version | passwd [--role admin|viewer] USER | provision | install-allowed VERSION]
  --config FILE   TOML configuration (also env PRINTBOX_CONFIG)
`;

function parseArgs(argv: string[]): { name: string; args: string[]; configPath?: string } {
  let configPath = process.env.PRINTBOX_CONFIG || undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--config') {
      if (i + 1 >= argv.length) throw new Error('--config needs a file name');
      configPath = argv[++i];
    } else if (a.startsWith('--config=')) {
      configPath = a.slice('--config='.length);
    } else {
      rest.push(a);
    }
  }
  const [name = 'serve', ...args] = rest;
  return { name, args, configPath };
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`printbox-agent: ${errorText(err)}\n${usage}`);
    return 2;
  }
  if (parsed.name === 'help' || parsed.name === '--help' || parsed.name === '-h') {
    process.stdout.write(usage);
    return 0;
  }
  // Not for people: the image build (scripts/image/customize.sh) warms Node's compile cache by
  // loading a command's modules without running it (the box runs one bundled file, whose
  // commands' code is evaluated only when used, so importing the file alone would cache little).
  if (parsed.name === 'load-only') {
    const only = commands[parsed.args[0] ?? ''];
    if (!only) {
      process.stderr.write(`printbox-agent: load-only needs a command name\n`);
      return 2;
    }
    await only();
    return 0;
  }
  const load = commands[parsed.name];
  if (!load) {
    process.stderr.write(`printbox-agent: unknown command '${parsed.name}'\n${usage}`);
    return 2;
  }
  // Node has started; what follows is the command's own modules (log/startup-phases.ts).
  performance.mark('printbox:main');
  const { run } = await load();
  return run(parsed.args, parsed.configPath);
}

main().then(
  (code) => {
    // serve keeps running on its own handles; other commands end here.
    if (code !== -1) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`printbox-agent: ${errorText(err)}\n`);
    process.exitCode = 1;
  },
);
