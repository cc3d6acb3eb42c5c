// What every soak script's command line shares: `--name value` options with defaults, whether a
// module was run as the program (so tests can import the same module without running it), and
// the machine facts a reliability figure is reported with.
import { cpus } from 'node:os';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The number after `--name` on the command line, else `dflt`; a non-number stops the script. */
export function numberArg(name: string, dflt: number, argv = process.argv): number {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const v = Number(argv[i + 1]);
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} needs a non-negative number, got ${JSON.stringify(argv[i + 1])}`);
  return v;
}

export const flagArg = (name: string, argv = process.argv): boolean => argv.includes(`--${name}`);

/** True when the module at `metaUrl` is the script node was started with (not an import). */
export function isMain(metaUrl: string): boolean {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(metaUrl));
  } catch {
    return false;
  }
}

/** "2 cores, AMD EPYC ..., node v24.x": printed at the top of each report. */
export function machineLine(): string {
  const list = cpus();
  return `${list.length} cores, ${list[0]?.model.trim() ?? 'unknown CPU'}, node ${process.version}`;
}

/** The value at quantile q (0..1) of `sorted` (ascending), nearest rank. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
