// The check of a trusted_proxies entry (config.toml's [server] section), by the same parser that
// compiles the list for requests (auth/request-facts.ts), so that what the config accepts is what
// the requests' trust understands.
import { parseIPNotation } from '@tinyhttp/proxy-addr';
import { errorText } from '../shared/error-text.js';

/** Why a trusted_proxies entry is not a CIDR range (or a single address), or undefined. */
export function trustedProxyProblem(entry: string): string | undefined {
  if (entry === '0.0.0.0/0' || entry === '::/0') return undefined;
  try {
    parseIPNotation(entry);
    return undefined;
  } catch (err) {
    return errorText(err);
  }
}
