// PJL over a bidirectional printer interface: one job-less query (Universal Exit Language around
// INFO requests), read back until every requested section has ended with its form feed.
// Unsolicited status (USTATUS DEVICE, if a previous host turned it on) carries the same fields as
// INFO STATUS and is read as such; USTATUSOFF at the start keeps it from arriving again.
import type { BulkPipe } from './pipe.js';

const UEL = '\x1b%-12345X';
/** The request: page count and device status. */
export const PJL_QUERY = `${UEL}@PJL\r\n@PJL USTATUSOFF\r\n@PJL INFO PAGECOUNT\r\n@PJL INFO STATUS\r\n${UEL}`;
/** A printer that streams more than this is not answering PJL. */
const MAX_REPLY = 64 * 1024;

export interface PjlReading {
  pageCount?: number;
  /** PJL status code: 10001 ready, 10xxx information, 30xxx-50xxx attention. */
  code?: number;
  display?: string;
  online?: boolean;
}

/** Parses what came back (any number of sections, in any order, partial at the end). */
export function parsePjlReply(text: string): PjlReading {
  const out: PjlReading = {};
  for (const section of text.split('\f')) {
    const lines = section.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
    const head = lines.findIndex((l) => /^@PJL\s+(INFO\s+(PAGECOUNT|STATUS)|USTATUS\s+DEVICE)\b/i.test(l));
    if (head < 0) continue;
    const kind = /PAGECOUNT/i.test(lines[head]!) ? 'pagecount' : 'status';
    for (const line of lines.slice(head + 1)) {
      const eq = line.indexOf('=');
      const key = eq > 0 ? line.slice(0, eq).trim().toUpperCase() : '';
      const value = eq > 0 ? line.slice(eq + 1).trim() : line;
      if (kind === 'pagecount' && (key === '' || key === 'PAGECOUNT') && /^\d{1,12}$/.test(value)) out.pageCount = Number(value);
      else if (kind === 'status' && key === 'CODE' && /^\d{5}$/.test(value)) out.code = Number(value);
      else if (kind === 'status' && key === 'DISPLAY') out.display = value.replace(/^"|"$/g, '');
      else if (kind === 'status' && key === 'ONLINE') out.online = /^TRUE$/i.test(value);
    }
  }
  return out;
}

/** Status lines for a reading: the panel's text, and "offline" when the printer says so. */
export function pjlStatusMessages(r: PjlReading): string[] {
  const out: string[] = [];
  if (r.display && !(r.code === 10001 && /^ready$/i.test(r.display))) out.push(r.display);
  if (r.online === false) out.push('offline');
  return out;
}

function complete(text: string): boolean {
  const ended = text.split('\f').slice(0, -1).join('\f');
  return /@PJL\s+INFO\s+PAGECOUNT/i.test(ended) && /@PJL\s+INFO\s+STATUS/i.test(ended);
}

/**
 * Sends the query and reads until both sections ended, the printer went quiet for `quietMs`
 * after saying something, or `timeoutMs` passed. Undefined when nothing PJL came back.
 */
export async function readPjl(pipe: BulkPipe, timeoutMs: number, quietMs = 500): Promise<PjlReading | undefined> {
  const deadline = Date.now() + timeoutMs;
  await pipe.write(Buffer.from(PJL_QUERY, 'latin1'), timeoutMs);
  let text = '';
  while (!complete(text) && text.length < MAX_REPLY) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const chunk = await pipe.read(4096, text ? Math.min(left, quietMs) : left);
    if (chunk.length === 0) {
      if (text) break; // it said something, then stopped: use what came
      continue;
    }
    text += Buffer.from(chunk).toString('latin1');
  }
  const reading = parsePjlReply(text);
  return Object.keys(reading).length ? reading : undefined;
}
