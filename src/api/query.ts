// Query-string access that never throws: malformed percent-encodings and invalid UTF-8 decode to
// U+FFFD instead of failing the request. The first value of a repeated key wins.
import type { IncomingMessage } from 'node:http';

export function queryOf(req: IncomingMessage): URLSearchParams {
  const url = req.url ?? '';
  const i = url.indexOf('?');
  return new URLSearchParams(i === -1 ? '' : url.slice(i + 1));
}

/** A base-10 integer, or undefined when the text is not one (or is outside the safe range). */
export function parseInteger(text: string | null): number | undefined {
  if (text === null || !/^[+-]?\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}
