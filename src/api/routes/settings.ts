// GET/POST /settings (partial updates, all or nothing, applied live), the deprecated
// /settings/subnet_scan, and the removed endpoints that now point to /settings.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readJsonBody } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { publicSettings, SettingsError, type Settings } from '../../settings/settings.js';
import { readProvisionState } from '../../provision/state.js';

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

  app.post('/settings', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    try {
      const next = settings.update(body);
      ctx.log.info({ sections: Object.keys(body) }, 'settings changed');
      sendJson(res, 200, shown(next));
    } catch (err) {
      if (err instanceof SettingsError) return sendText(res, 400, err.message);
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
