// The log level follows the `log.level` setting (POST /settings, the server's managed settings):
// pino checks the level at each call, so a change holds from the next line on, without a restart.
import type { Logger } from './logger.js';

/** Where the level comes from (the settings store): what it is now, and a call on each change. */
export interface LevelSource {
  get(): { log: { level: string } };
  onChange(listener: (s: { log: { level: string } }) => void): () => void;
}

const VERBOSITY: Record<string, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, fatal: 5 };

/** Applies the stored level now (it may differ from the config file's) and on every change. */
export function followLogLevel(log: Logger, settings: LevelSource): () => void {
  const apply = (level: string) => {
    const from = log.level;
    if (level === from) return;
    // Said at info under whichever of the two levels shows it: before going quieter, after going louder.
    const say = () => log.info({ from, to: level }, 'log level changed');
    if ((VERBOSITY[level] ?? 2) > (VERBOSITY[from] ?? 2)) {
      say();
      log.level = level;
    } else {
      log.level = level;
      say();
    }
  };
  apply(settings.get().log.level);
  return settings.onChange((s) => apply(s.log.level));
}
