// Which webhook hosts the box refuses to call: itself, or an address that is no other host. The
// settings check a webhook URL with it when it is saved; notify/webhook.ts checks each address a
// name resolves to when it posts.
import { isIP } from 'node:net';
import { nameIsThisBox, notAnotherHost, plainAddress } from './own-targets.js';

/** Why a webhook's host (a name or an IP literal) is this box or no other host at all, or undefined. */
export function webhookHostProblem(host: string): string | undefined {
  const h = host.replace(/^\[|\]$/g, '');
  return isIP(plainAddress(h)) ? notAnotherHost(h) : nameIsThisBox(h);
}
