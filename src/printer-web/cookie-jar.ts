// A printer's cookies, kept for it in ONE browser cookie of the box's own making. The printer's
// Set-Cookie headers never reach the browser as they are: each one updates a small jar (at most
// JAR_LIMITS.entries cookies, JAR_LIMITS.bytes in all) that the box sends to the browser as the
// cookie `pbx_printer_jar`, Path=/proxy/{serial}/, and reads back from the browser's requests to
// give the printer its cookies. So a printer page can add at most one cookie to the box's origin
// however many it sets, whatever it names them (no Domain, no other path, no `__Host-`, no name
// of the box's own), and the browser's per-site cookie limit (Chromium evicts beyond 180) is never
// reached through printer pages: the box's session and device cookies cannot be evicted by them.
// Through the central server's proxy the jar is the one cookie that crosses the channel, both ways
// (server/proxy.ts): the printer's session survives there too, and no cookie of the box's own (its
// session, its device cookie) ever leaves the box, nor does one of the server's reach a route.
// Pure string work, no I/O.

export const JAR_COOKIE = 'pbx_printer_jar';
export const JAR_LIMITS = {
  /** Printer cookies kept per printer (a vendor's pages use a handful). */
  entries: 20,
  /** The jar cookie's encoded value: under the 4096 bytes browsers keep for one cookie. */
  bytes: 3800,
};

/** One printer cookie: name, value and when it lapses (ms since the epoch; null: with the browser session). */
export type JarEntry = [name: string, value: string, expires: number | null];

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,256}$/;
// RFC 6265 cookie-octets, optionally quoted: what a printer may give and get back.
const VALUE = /^(?:"[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*"|[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*)$/;

/** The jar the browser sent in its Cookie header (the first valid one), without entries lapsed at `now`. */
export function readJar(cookieHeader: string | undefined, now: number): JarEntry[] {
  for (const part of (cookieHeader ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== JAR_COOKIE) continue;
    const raw = part.slice(eq + 1).trim();
    if (!raw || raw.length > JAR_LIMITS.bytes) continue;
    try {
      const parsed: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
      if (!Array.isArray(parsed)) continue;
      const out: JarEntry[] = [];
      for (const e of parsed.slice(0, JAR_LIMITS.entries)) {
        if (!Array.isArray(e) || typeof e[0] !== 'string' || typeof e[1] !== 'string') continue;
        const expires = typeof e[2] === 'number' ? e[2] : null;
        if (!TOKEN.test(e[0]) || !VALUE.test(e[1]) || (expires !== null && expires <= now)) continue;
        if (!out.some((x) => x[0] === e[0])) out.push([e[0], e[1], expires]);
      }
      return out;
    } catch {
      continue;
    }
  }
  return [];
}

/** `cookieHeader` with the jar's pairs only (undefined without any): what the server's channel lets in. */
export function jarCookieOnly(cookieHeader: string | undefined): string | undefined {
  const pairs = (cookieHeader ?? '').split(';').map((p) => p.trim()).filter((p) => p.slice(0, p.indexOf('=')).trim() === JAR_COOKIE);
  return pairs.length ? pairs.join('; ') : undefined;
}

/** Whether a Set-Cookie header sets (or deletes) the jar: the one cookie the channel lets out. */
export function setsJar(setCookie: string): boolean {
  const eq = setCookie.indexOf('=');
  return eq !== -1 && setCookie.slice(0, eq).trim() === JAR_COOKIE;
}

/**
 * `jar` with `over`'s cookies on top (same name: `over`'s value): the printer's cookies from the
 * browser's jar and from a sign-in the box made for it (printer-web/auto-login.ts).
 */
export function mergeJars(jar: readonly JarEntry[], over: readonly JarEntry[]): JarEntry[] {
  return [...jar.filter(([n]) => !over.some(([o]) => o === n)), ...over];
}

/** The Cookie header the printer gets: its own cookies and nothing else (never the box's). */
export function printerCookieHeader(jar: readonly JarEntry[]): string | undefined {
  return jar.length ? jar.map(([n, v]) => `${n}=${v}`).join('; ') : undefined;
}

/** When a Set-Cookie's cookie lapses: null for a session cookie, <= now for a deletion. */
function expiryOf(attrs: string[], now: number): number | null {
  let expires: number | null = null;
  for (const raw of attrs) {
    const eq = raw.indexOf('=');
    const key = (eq === -1 ? raw : raw.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? '' : raw.slice(eq + 1).trim();
    // Max-Age wins over Expires (RFC 6265 5.3 step 3).
    if (key === 'max-age' && /^-?\d{1,12}$/.test(value)) return now + Number(value) * 1000;
    if (key === 'expires') {
      const t = Date.parse(value);
      if (Number.isFinite(t)) expires = t;
    }
  }
  return expires;
}

export interface JarUpdate {
  jar: JarEntry[];
  /** The printer's cookies refused (a bad name or value, over the jar's limits). */
  refused: number;
}

/** The jar after the printer's Set-Cookie headers, in order; new cookies over the limits are refused. */
export function applySetCookies(jar: readonly JarEntry[], setCookies: readonly string[], now: number): JarUpdate {
  const out = jar.map((e): JarEntry => [...e]);
  let refused = 0;
  for (const header of setCookies) {
    const [pair, ...attrs] = header.split(';');
    const eq = pair.indexOf('=');
    const name = eq === -1 ? '' : pair.slice(0, eq).trim();
    const value = eq === -1 ? '' : pair.slice(eq + 1).trim();
    if (!TOKEN.test(name) || !VALUE.test(value) || value.length > JAR_LIMITS.bytes) {
      refused++;
      continue;
    }
    const expires = expiryOf(attrs, now);
    const at = out.findIndex((e) => e[0] === name);
    if (expires !== null && expires <= now) {
      if (at !== -1) out.splice(at, 1);
      continue;
    }
    const entry: JarEntry = [name, value, expires];
    const next = at === -1 ? [...out, entry] : out.map((e, i) => (i === at ? entry : e));
    if (next.length > JAR_LIMITS.entries || encode(next).length > JAR_LIMITS.bytes) {
      refused++;
      continue;
    }
    out.splice(0, out.length, ...next);
  }
  return { jar: out, refused };
}

function encode(jar: readonly JarEntry[]): string {
  return Buffer.from(JSON.stringify(jar), 'utf8').toString('base64url');
}

/** The Set-Cookie that stores `jar` for the printer under `path` (`/proxy/{serial}/`); an empty jar deletes it. */
export function jarSetCookie(jar: readonly JarEntry[], path: string, secure: boolean): string {
  const attrs = [`Path=${path}`, 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])];
  if (!jar.length) return [`${JAR_COOKIE}=`, ...attrs, 'Max-Age=0', 'Expires=Thu, 01 Jan 1970 00:00:00 GMT'].join('; ');
  return [`${JAR_COOKIE}=${encode(jar)}`, ...attrs].join('; ');
}
