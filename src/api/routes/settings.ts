// GET/POST /settings (partial updates, all or nothing, applied live), the deprecated
// /settings/subnet_scan, and the removed endpoints that now point to /settings. A change that
// would send a stored secret somewhere new needs the account's current password in the same
// request, or the secret given anew or cleared (settings/secret-destinations.ts).
import type { App } from '@tinyhttp/app';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentContext } from '../context.js';
import { readJsonBody } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { publicSettings, SettingsError, type Settings } from '../../settings/settings.js';
import { redirectedSecrets, redirectProblem } from '../../settings/secret-destinations.js';
import { readProvisionState } from '../../provision/state.js';
import { principalOf } from '../../auth/gate.js';
import { SESSION_COOKIE } from '../../auth/sessions.js';
import { cookieValue } from '../../auth/request-facts.js';
import { verifyPassword } from '../../auth/passwords.js';
import { beginAttempt, countFailure } from './login.js';
import { sessionLimitKey } from './account.js';

/**
 * The refused setting beside the text body (which stays the message API clients read): its key
 * (`Settings-Field`) and the refusal in the Settings page's words (`Settings-Problem`), which the
 * UI shows next to that field. A header carries Latin-1 only: the words are percent-encoded
 * where they hold anything but printable ASCII (and `%` itself), decoded with decodeURIComponent.
 */
function refusalHeaders(res: ServerResponse, err: SettingsError): void {
  if (!err.field) return;
  res.setHeader('Settings-Field', err.field);
  res.setHeader('Settings-Problem', err.plain.replace(/[^\x20-\x24\x26-\x7e]/gu, (c) => encodeURIComponent(c)));
}

/** A change refused because it would send a stored secret elsewhere without proof (403). */
class SecretRedirectRefused extends Error {}

const MAX_PASSWORD_LENGTH = 1024;

export function register(app: App, ctx: AgentContext): void {
  const { settings } = ctx;
  // The settings without secrets, the server link's state beside its URL and the data file
  // system's state, and what the last provisioning run did with printbox.toml (all read-only).
  const shown = (s: Settings) => {
    const out = publicSettings(s);
    const provisioning = readProvisionState(ctx.config.data_dir);
    return {
      ...out,
      ...(ctx.serverLink ? { server: { ...out.server, link: ctx.serverLink.status() } } : {}),
      ...(ctx.storage ? { storage: ctx.storage.status() } : {}),
      // No file hash: it says nothing to a person and nothing is gained by showing it.
      provisioning: provisioning ? { state: provisioning.state, message: provisioning.message, checked_at: provisioning.checked_at, applied_at: provisioning.applied_at ?? null } : null,
    };
  };

  app.get('/settings', (_req, res) => sendJson(res, 200, shown(settings.get())));

  // Only a password-mode account has a password to prove; a local admin on loopback, auth
  // disabled, server mode and the central server (its channel, a trusted proxy) have none, and
  // give the secret anew or clear it instead.
  const passwordUsable = (req: IncomingMessage) => {
    const p = principalOf(req);
    return ctx.config.web.auth.mode === 'password' && p?.kind === 'session' && Boolean(p.user);
  };

  /** Checks `current_password` against the signed-in account: true, or false with the answer sent. */
  const proveAccount = async (req: IncomingMessage, res: ServerResponse, password: unknown): Promise<boolean> => {
    if (typeof password !== 'string' || password === '' || password.length > MAX_PASSWORD_LENGTH) {
      sendText(res, 400, `current_password must be a string of 1 to ${MAX_PASSWORD_LENGTH} characters`);
      return false;
    }
    if (!passwordUsable(req)) {
      sendText(res, 403, 'current_password can only be checked for an account signed in with a password (password auth mode); give the secret anew or clear it instead. Nothing was changed');
      return false;
    }
    const user = principalOf(req)!.user!;
    // Limited per session like a password change: guessing through here costs what it costs there.
    const attempt = beginAttempt(ctx, res, [sessionLimitKey(cookieValue(req, SESSION_COOKIE) ?? '')], { proved: true });
    if (!attempt) return false;
    const account = ctx.accounts.get(user);
    const ok = await ctx.hashQueue
      .run(ctx.facts.clientAddress(req), true, async () => Boolean(account && (await verifyPassword(password, account.password_hash))))
      .catch((err: unknown) => {
        attempt.abandoned();
        throw err;
      });
    if (!ok) {
      countFailure(ctx, req, attempt, `settings change ${user}`);
      sendText(res, 403, 'current_password is wrong. Nothing was changed');
      return false;
    }
    attempt.succeeded();
    return true;
  };

  app.post('/settings', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    // Beside the sections, not a setting: the proof that moving a secret is allowed.
    const { current_password: password, ...patch } = body;
    const proved = Object.hasOwn(body, 'current_password') ? await proveAccount(req, res, password) : false;
    if (Object.hasOwn(body, 'current_password') && !proved) return;
    let moved: string[] = [];
    try {
      const next = settings.update(patch, (current, after) => {
        const redirects = redirectedSecrets(current, after, patch);
        if (redirects.length && !proved) throw new SecretRedirectRefused(redirectProblem(redirects, passwordUsable(req)));
        moved = redirects.map((r) => r.secret);
      });
      const entry = { sections: Object.keys(patch), ...(moved.length ? { secrets_moved: moved, user: principalOf(req)?.user } : {}) };
      if (moved.length) ctx.log.warn(entry, 'settings changed: stored secrets now go to a new destination (current password given)');
      else ctx.log.info(entry, 'settings changed');
      sendJson(res, 200, shown(next));
    } catch (err) {
      if (err instanceof SecretRedirectRefused) return sendText(res, 403, err.message);
      if (err instanceof SettingsError) {
        refusalHeaders(res, err);
        return sendText(res, 400, err.message);
      }
      throw err;
    }
  });

  // Deprecated (contract 4.2): use /settings, field discovery.subnet_scan.
  const deprecated = (res: { setHeader(k: string, v: string): void }) => {
    res.setHeader('Deprecation', 'true');
    res.setHeader('Link', '</settings>; rel="successor-version"');
  };
  app.get('/settings/subnet_scan', (_req, res) => {
    deprecated(res);
    sendJson(res, 200, { subnet_scan: settings.get().discovery.subnet_scan });
  });
  app.post('/settings/subnet_scan', async (req, res) => {
    deprecated(res);
    const body = await readJsonBody(req, res);
    if (!body) return;
    const value = body.subnet_scan ?? body.enabled;
    if (typeof value !== 'boolean') return sendText(res, 400, 'field subnet_scan must be true or false');
    settings.update({ discovery: { subnet_scan: value } });
    sendJson(res, 200, { subnet_scan: value });
  });

  for (const path of ['/saved_ranges', '/mib_walk']) {
    app.all(path, (_req, res) => {
      res.setHeader('Link', '</settings>; rel="successor-version"');
      sendText(
        res,
        410,
        path === '/saved_ranges'
          ? 'gone: /saved_ranges was removed; use /settings, field discovery.ranges_text'
          : 'gone: /mib_walk was removed; discovery reads printers itself, configure it through /settings',
      );
    });
  }
}
