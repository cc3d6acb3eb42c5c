// Signing in to a printer's web page with the credentials the central server keeps for it
// (PrintMaster's GET /api/v1/agents/device-credentials), as PrintMaster's agent does
// (agent/proxy/vendor_login.go, agent/main.go's /proxy handler):
// - `basic` with auto_login: every request to the printer carries Authorization: Basic;
// - `form` with auto_login: the vendor's sign-in form is posted once (Epson and Kyocera, the two
//   vendors the reference knows; another vendor is not signed in), and the cookies it gave are
//   sent with every request to that printer for 15 minutes. A page that asks for the password again
//   while they are sent (the session ended on the printer) drops them: the next page signs in anew.
// The cookies live in the box's memory, kept as the printer's jar is (cookie-jar.ts), never in a
// browser: a person who opens the page through the server has the printer's session, not its
// password. Credentials are asked of the server at most once a minute per printer; a failed
// sign-in is not tried again for a minute (a printer locks an account after a few).
import { applySetCookies, printerCookieHeader, type JarEntry } from './cookie-jar.js';
import type { PrinterWebTarget } from './target.js';
import { printerRequest, readBounded } from './upstream.js';
import { errorText } from '../shared/error-text.js';

export interface PrinterCredentials {
  username: string;
  password: string;
  authType: 'basic' | 'form';
  autoLogin: boolean;
}

export const AUTO_LOGIN_LIMITS = {
  /** How long the cookies of a sign-in are used (the reference's session cache). */
  sessionMs: 15 * 60_000,
  /** How long an answer of the server about a printer's credentials (or of none) is used. */
  credentialsMs: 60_000,
  /** The server's answer about credentials (the reference agent waits 5 s). */
  credentialsAskMs: 5_000,
  /** How long after a failed sign-in the box does not try again. */
  retryMs: 60_000,
  /** A whole sign-in: every request of it. */
  signInMs: 15_000,
  /** A sign-in page read. */
  pageBytes: 1024 * 1024,
  redirects: 5,
  fieldChars: 1024,
};

/** The server's answer as credentials, or undefined (none stored, or not in the shape the reference gives). */
export function parseCredentials(json: Record<string, unknown>): PrinterCredentials | undefined {
  if (json.exists !== true) return undefined;
  const { username, password } = json;
  const max = AUTO_LOGIN_LIMITS.fieldChars;
  if (typeof username !== 'string' || typeof password !== 'string' || username.length > max || password.length > max) return undefined;
  // The reference stores "basic" when none was chosen.
  const authType = typeof json.auth_type === 'string' && json.auth_type ? json.auth_type.toLowerCase() : 'basic';
  if (authType !== 'basic' && authType !== 'form') return undefined;
  return { username, password, authType, autoLogin: json.auto_login === true };
}

/** The Authorization header for `basic` credentials with auto_login, else undefined. */
export function basicAuthorization(c: PrinterCredentials | undefined): string | undefined {
  if (!c || c.authType !== 'basic' || !c.autoLogin || !c.password) return undefined;
  return 'Basic ' + Buffer.from(`${c.username}:${c.password}`, 'utf8').toString('base64');
}

/** Whether an HTML page asks for a password (the reference's test for "signed out"). */
export function asksForPassword(html: string): boolean {
  const lower = html.toLowerCase();
  return (lower.includes('type="password"') || lower.includes("type='password'")) && /login|password|username|sign in/.test(lower);
}

// Static files need no sign-in of their own (the reference skips them too).
const STATIC = /\.(js|css|png|jpe?g|gif|svg|ico|woff2?|ttf|eot)$/i;

interface Exchange {
  status: number;
  /** The path of the last request (after redirects). */
  path: string;
  body: string;
}

/** A printer's pages fetched like a browser would for a sign-in: its cookies kept, redirects on the printer followed. */
class SignInClient {
  jar: JarEntry[] = [];

  constructor(private readonly t: PrinterWebTarget, private readonly signal: AbortSignal, private readonly now: () => number) {}

  async request(method: 'GET' | 'POST', path: string, form?: URLSearchParams): Promise<Exchange> {
    let body = form ? Buffer.from(form.toString()) : Buffer.alloc(0);
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = { host: this.t.origin.replace(/^https?:\/\//, ''), 'accept-encoding': 'identity' };
      const cookie = printerCookieHeader(this.jar);
      if (cookie) headers.cookie = cookie;
      if (method === 'POST') {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        headers['content-length'] = String(body.length);
        headers.origin = this.t.origin;
      }
      const res = await printerRequest(this.t, method, path, headers, body, this.signal);
      this.jar = applySetCookies(this.jar, res.headers['set-cookie'] ?? [], this.now()).jar;
      const status = res.statusCode ?? 0;
      const next = [301, 302, 303, 307, 308].includes(status) ? this.onPrinter(res.headers.location, path) : undefined;
      if (!next || hop >= AUTO_LOGIN_LIMITS.redirects) {
        const text = await readBounded(res, AUTO_LOGIN_LIMITS.pageBytes);
        return { status, path, body: Buffer.isBuffer(text) ? text.toString('utf8') : '' };
      }
      res.resume();
      // As browsers (and Go's client, the reference's): 307 and 308 repeat the request, the others GET.
      if (status !== 307 && status !== 308) {
        method = 'GET';
        body = Buffer.alloc(0);
      }
      path = next;
    }
  }

  /** A Location's path when it is on this printer; another host's is not followed. */
  private onPrinter(location: string | undefined, from: string): string | undefined {
    if (!location) return undefined;
    try {
      const u = new URL(location, this.t.origin + from);
      return u.origin === new URL(this.t.origin).origin ? u.pathname + u.search : undefined;
    } catch {
      return undefined;
    }
  }
}

type VendorSignIn = (client: SignInClient, c: PrinterCredentials) => Promise<void>;

/** The first of `paths` the printer answers 200 for. */
async function firstPage(client: SignInClient, paths: string[]): Promise<Exchange & { asked: string }> {
  for (const asked of paths) {
    const r = await client.request('GET', asked).catch(() => undefined);
    if (r?.status === 200) return { ...r, asked };
  }
  throw new Error(`no sign-in page at ${paths.join(', ')}`);
}

const signedIn = (r: Exchange): void => {
  if (![200, 302, 303].includes(r.status)) throw new Error(`the sign-in form answered ${r.status}`);
};

/** Epson (Web Config): the password page's form, posted to its action under the page's path. */
const epson: VendorSignIn = async (client, c) => {
  const page = await firstPage(client, ['/PRESENTATION/ADVANCED/PASSWORD', '/PRESENTATION/HTML/TOP/INDEX.HTML']);
  const action = /action="([^"]*)"/.exec(page.body)?.[1] || 'SET';
  const to = action.startsWith('/') ? action : `${page.asked.replace(/\/$/, '')}/${action}`;
  const form = new URLSearchParams({ INPUTT_USERNAME: c.username, INPUTT_PASSWORD: c.password, SEL_SESSIONTYPE: 'ADMIN', access: 'https' });
  signedIn(await client.request('POST', to, form));
};

/** Kyocera (Command Center RX): the start page's form with its hidden fields, posted to that page. */
const kyocera: VendorSignIn = async (client, c) => {
  const page = await firstPage(client, ['/wlmeng/index.htm', '/startwlm/Start_Wlm.htm', '/startpage.htm']);
  const form = new URLSearchParams({ arg01_UserName: c.username, arg02_Password: c.password, Login: 'Login' });
  for (const [name, value] of hiddenFields(page.body)) form.set(name, value);
  signedIn(await client.request('POST', page.path, form));
};

/** <input type="hidden" name=… value=…> of a page (the reference's pattern). */
export function hiddenFields(html: string): [string, string][] {
  const re = /<input[^>]*type=["']?hidden["']?[^>]*name=["']?([^"'\s>]+)["']?[^>]*value=["']?([^"'\s>]*)["']?/gi;
  return [...html.matchAll(re)].map((m) => [m[1], m[2]]);
}

/** The sign-in for a manufacturer, as the reference picks it (by name). */
export function vendorSignIn(manufacturer: string | undefined): VendorSignIn | undefined {
  const m = (manufacturer ?? '').toLowerCase();
  if (m.includes('epson')) return epson;
  if (m.includes('kyocera')) return kyocera;
  return undefined;
}

/** What to add to one request to the printer. */
export interface PrinterAuth {
  authorization?: string;
  /** Cookies of the box's sign-in (empty without one). */
  cookies: JarEntry[];
}

interface Remembered<T> {
  value: T;
  until: number;
}

export interface AutoLoginOptions {
  /** The server's credentials for a printer (undefined: none, or no server). */
  credentials(serial: string, signal: AbortSignal): Promise<PrinterCredentials | undefined>;
  now(): number;
  onSignIn(serial: string, outcome: { ok: true; cookies: number } | { ok: false; error: string }): void;
}

/** The sign-ins the box keeps, per printer serial. */
export class AutoLogin {
  private readonly creds = new Map<string, Remembered<PrinterCredentials | undefined>>();
  private readonly sessions = new Map<string, Remembered<JarEntry[]>>();
  private readonly failed = new Map<string, number>();
  private readonly pending = new Map<string, Promise<JarEntry[] | undefined>>();
  private readonly asking = new Map<string, Promise<PrinterCredentials | undefined>>();

  constructor(private readonly o: AutoLoginOptions) {}

  /**
   * What one request to the printer at `target` carries for `serial`: Basic credentials, or the
   * cookies of a form sign-in (made now when there is none, for a page rather than a static file).
   */
  async forRequest(serial: string, manufacturer: string | undefined, target: PrinterWebTarget, path: string, signal: AbortSignal): Promise<PrinterAuth> {
    const c = await this.credentialsOf(serial, signal);
    const authorization = basicAuthorization(c);
    if (authorization) return { authorization, cookies: [] };
    if (!c || c.authType !== 'form' || !c.autoLogin || !c.password) return { cookies: [] };
    const now = this.o.now();
    const held = this.sessions.get(serial);
    if (held && held.until > now) return { cookies: held.value };
    const signIn = vendorSignIn(manufacturer);
    if (!signIn || STATIC.test(path.split('?')[0]) || (this.failed.get(serial) ?? 0) > now) return { cookies: [] };
    let run = this.pending.get(serial);
    if (!run) {
      run = this.signIn(serial, signIn, c, target).finally(() => this.pending.delete(serial));
      this.pending.set(serial, run);
    }
    return { cookies: (await run) ?? [] };
  }

  /** The printer's Set-Cookies, for the cookies of a sign-in that it renews (its session id turning over). */
  renewed(serial: string, setCookies: readonly string[]): void {
    const held = this.sessions.get(serial);
    if (!held || !setCookies.length) return;
    const names = new Set(held.value.map(([n]) => n));
    const updated = applySetCookies(held.value, setCookies.filter((h) => names.has(h.slice(0, h.indexOf('=')).trim())), this.o.now()).jar;
    this.sessions.set(serial, { value: updated, until: held.until });
  }

  /** The printer asked for the password although the sign-in's cookies went with the request. */
  signedOut(serial: string): void {
    this.sessions.delete(serial);
  }

  /** The printer's credentials, asked of the server once for all the requests that need them meanwhile. */
  private credentialsOf(serial: string, signal: AbortSignal): Promise<PrinterCredentials | undefined> {
    const held = this.creds.get(serial);
    if (held && held.until > this.o.now()) return Promise.resolve(held.value);
    let asking = this.asking.get(serial);
    if (!asking) {
      asking = this.ask(serial, signal).finally(() => this.asking.delete(serial));
      this.asking.set(serial, asking);
    }
    return asking;
  }

  private async ask(serial: string, signal: AbortSignal): Promise<PrinterCredentials | undefined> {
    let value: PrinterCredentials | undefined;
    try {
      value = await this.o.credentials(serial, AbortSignal.any([signal, AbortSignal.timeout(AUTO_LOGIN_LIMITS.credentialsAskMs)]));
    } catch {
      // The server unreachable: the page without a sign-in, as without credentials (the request
      // itself ended: nothing learnt).
      if (signal.aborted) return undefined;
      value = undefined;
    }
    this.creds.set(serial, { value, until: this.o.now() + AUTO_LOGIN_LIMITS.credentialsMs });
    return value;
  }

  private async signIn(serial: string, signIn: VendorSignIn, c: PrinterCredentials, target: PrinterWebTarget): Promise<JarEntry[] | undefined> {
    const client = new SignInClient(target, AbortSignal.timeout(AUTO_LOGIN_LIMITS.signInMs), this.o.now);
    try {
      await signIn(client, c);
    } catch (err) {
      const error = errorText(err);
      this.failed.set(serial, this.o.now() + AUTO_LOGIN_LIMITS.retryMs);
      this.o.onSignIn(serial, { ok: false, error });
      return undefined;
    }
    this.failed.delete(serial);
    this.sessions.set(serial, { value: client.jar, until: this.o.now() + AUTO_LOGIN_LIMITS.sessionMs });
    this.o.onSignIn(serial, { ok: true, cookies: client.jar.length });
    return client.jar;
  }
}
