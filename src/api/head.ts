// HEAD requests, answered as GET without the body (api/app.ts). A route that streams (GET /events)
// must know: Node holds a HEAD response's head until end(), and a stream never ends.
import type { IncomingMessage } from 'node:http';

const heads = new WeakSet<IncomingMessage>();

/** Records that this request came as HEAD (before its method is made GET for the router). */
export function markHead(req: IncomingMessage): void {
  heads.add(req);
}

export const cameAsHead = (req: IncomingMessage): boolean => heads.has(req);
