// The agent's request handler: request log, request-target check, auth gate, same-origin check,
// then the tinyhttp app with the route modules. These run before tinyhttp sees the request, so the
// path the gate judged is the path the router matches (web/request-target.ts says why).
import { App, type Handler as RouteHandler } from '@tinyhttp/app';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AgentContext } from './context.js';
import { sendText } from './respond.js';
import { markHead } from './head.js';
import { admit, fromServerChannel, principalOf } from '../auth/gate.js';
import { roleProblem } from '../auth/roles.js';
import { crossOriginProblem } from '../auth/same-origin.js';
import { acceptsHtml } from '../auth/request-facts.js';
import { checkRequestTarget } from '../web/request-target.js';
import { routeIndex, routeKey } from './route-index.js';
import * as loginRoutes from './routes/login.js';
import * as accountRoutes from './routes/account.js';
import * as accountsRoutes from './routes/accounts.js';
import * as readRoutes from './routes/read.js';
import * as deviceRoutes from './routes/devices.js';
import * as deviceTrustRoutes from './routes/device-trust.js';
import * as discoveryRoutes from './routes/discovery.js';
import * as settingsRoutes from './routes/settings.js';
import * as eventRoutes from './routes/events.js';
import * as logRoutes from './routes/logs.js';
import * as uiRoutes from './routes/ui.js';
import * as openapiRoutes from './routes/openapi.js';
import * as backupRoutes from './routes/backup.js';
import * as autoupdateRoutes from './routes/autoupdate.js';
import * as printerProxyRoutes from './routes/printer-proxy.js';
import * as devicePreviewRoutes from './routes/device-preview.js';
import * as reportRoutes from './routes/report.js';
import * as forecastRoutes from './routes/forecast.js';
import * as alertRoutes from './routes/alerts.js';
import * as notificationRoutes from './routes/notifications.js';
import * as printerListRoutes from './routes/printers.js';
import * as billingRoutes from './routes/billing.js';
import * as orderListRoutes from './routes/order-list.js';
import * as meterHistoryRoutes from './routes/meter-history.js';
import * as pageCountRoutes from './routes/page-counts.js';
import { errorText } from '../shared/error-text.js';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Route modules: each registers its paths on the app. Later features add theirs here. */
const ROUTES: { register(app: App, ctx: AgentContext): void }[] = [
  loginRoutes,
  accountRoutes,
  accountsRoutes,
  readRoutes,
  deviceRoutes,
  deviceTrustRoutes,
  discoveryRoutes,
  settingsRoutes,
  eventRoutes,
  logRoutes,
  uiRoutes,
  openapiRoutes,
  backupRoutes,
  autoupdateRoutes,
  printerProxyRoutes,
  devicePreviewRoutes,
  reportRoutes,
  forecastRoutes,
  alertRoutes,
  notificationRoutes,
  printerListRoutes,
  billingRoutes,
  orderListRoutes,
  meterHistoryRoutes,
  pageCountRoutes,
];

function logRequest(ctx: AgentContext, req: IncomingMessage, res: ServerResponse): void {
  // Per-request lines are debug output: at other levels the request carries no listener for them.
  if (!ctx.log.isLevelEnabled('debug')) return;
  const start = process.hrtime.bigint();
  const path = (req.url ?? '').split('?')[0].slice(0, 200);
  res.on('finish', () => {
    // Path only: query strings can carry tokens (the auth callback); headers carry cookies.
    ctx.log.debug(
      { method: req.method, path, status: res.statusCode, ms: Number(process.hrtime.bigint() - start) / 1e6, remote: req.socket.remoteAddress },
      'request',
    );
  });
}

// tinyhttp attaches some 25 helpers (req.query, res.json, res.send ...) to every request by
// default; no route here uses them, and under load they cost half the CPU of a request and most of
// its garbage (docs/performance.md). tinyhttp itself needs only res.sendStatus (a route parameter
// that fails to decode), so that is all this provides: one function for every response (tinyhttp
// calls it as a method), not a closure made per request.
function sendStatus(this: ServerResponse, code: number) {
  sendText(this, code, (STATUS_CODES[code] ?? 'error').toLowerCase());
  return this;
}
const routerExtensions: RouteHandler = (_req, res, next) => {
  res.sendStatus = sendStatus as typeof res.sendStatus;
  next?.();
};

interface Router {
  /** The whole table of routes (tinyhttp's own entries). */
  app: App;
  /** Hands a request to the App of its path (route-index.ts). */
  dispatch: (req: IncomingMessage, res: ServerResponse) => void;
  /** The methods a path is registered with; undefined for an unknown path or an any-method route. */
  methodsOf: Map<string, string[]>;
}

function createRouter(ctx: AgentContext): Router {
  // Filled once the routes are registered: a path that exists with other methods is a 405 naming
  // them (with Allow), not a 404.
  const methodsOf = new Map<string, string[]>();
  const newApp = () =>
    new App({
      settings: { xPoweredBy: false },
      applyExtensions: routerExtensions,
      noMatchHandler: (req, res) => {
        const allowed = methodsOf.get(routeKey((req.url ?? '/').split('?')[0]));
        if (!allowed) return sendText(res, 404, 'not found');
        res.setHeader('Allow', allowed.join(', '));
        sendText(res, 405, `${allowed.join(', ')} only`);
      },
      onError: (err: unknown, req, res) => {
        // A write the card did not take: the storage guard says so everywhere; the client gets 507
        // with SQLite's own words. Nothing was changed (the transaction was rolled back).
        if (!res.headersSent && ctx.storage?.failed(err, `${req.method} ${(req.url ?? '').split('?')[0]}`)) {
          return sendText(res, 507, `not stored: the data file system does not take writes (${ctx.storage.status().state}): ${errorText(err)}`);
        }
        if (!res.headersSent && (err as { code?: unknown })?.code === 'SQLITE_BUSY') {
          // Another process (the CLI's import) held the database past busy_timeout.
          res.setHeader('Retry-After', '5');
          return sendText(res, 503, `database busy (another process is writing to it, such as an import): try again: ${errorText(err)}`);
        }
        ctx.log.error({ err: err instanceof Error ? err.stack : String(err) }, 'request failed');
        if (!res.headersSent) sendText(res, 500, 'internal error');
        else res.destroy();
      },
    });
  const app = newApp();
  for (const routes of ROUTES) routes.register(app, ctx);
  for (const m of app.middleware) {
    if (!m.method || typeof m.path !== 'string') continue;
    const key = routeKey(m.path);
    methodsOf.set(key, [...new Set([...(methodsOf.get(key) ?? []), m.method])]);
  }
  return { app, dispatch: routeIndex(app, newApp), methodsOf };
}

/** Every route the app registers (method undefined = any method): tests walk this to try each way in. */
export function routeTable(): { method?: string; path: string }[] {
  // Route modules only keep references to the context at registration; nothing is called on it.
  return createRouter({} as AgentContext).app.middleware.map((m) => ({ method: m.method, path: m.path as string }));
}

/**
 * No credential (contract 5.6): a browser goes to the login page, anything else gets 401. The
 * Location is relative to the request's path ("../login" from /devices/list), so it stays under a
 * prefix that serves the box, such as the central server's /api/v1/proxy/agent/<id>/.
 */
function refuse(req: IncomingMessage, res: ServerResponse): void {
  if (!acceptsHtml(req)) return sendText(res, 401, 'unauthorized');
  const path = (req.url ?? '/').split('?')[0];
  const up = '../'.repeat(path.split('/').length - 2);
  res.statusCode = 302;
  res.setHeader('Location', `${up}login?return_to=${encodeURIComponent(req.url ?? '/')}`);
  res.end();
}

export function createHandler(ctx: AgentContext): Handler {
  const { dispatch, methodsOf } = createRouter(ctx);
  return (req, res) => {
    logRequest(ctx, req, res);
    const target = checkRequestTarget(req.url);
    if (!target.ok) return sendText(res, 400, target.message);
    req.url = target.url;
    // HEAD is GET without the body (Node leaves the body out: the response was made for a HEAD).
    // tinyhttp would otherwise match HEAD to a route of any method, so that HEAD /discover ran the
    // POST handler and started a scan, past the same-origin check that lets HEAD through as safe.
    if (req.method === 'HEAD') {
      const allowed = methodsOf.get(routeKey(target.url.split('?')[0]));
      if (allowed && !allowed.includes('GET')) {
        res.setHeader('Allow', allowed.join(', '));
        return sendText(res, 405, `${allowed.join(', ')} only`);
      }
      markHead(req);
      req.method = 'GET';
    }
    if (!admit(req, ctx.config, ctx.sessions, ctx.accounts, ctx.facts)) return refuse(req, res);
    // A viewer's writes are refused here, before any route reads a body (auth/roles.ts).
    const forbidden = roleProblem(req, principalOf(req));
    if (forbidden) return sendText(res, 403, forbidden);
    // Over the box's own channel, the page is the central server's (the box's UI under its proxy
    // prefix, or the server's own buttons): its origin is the server's, which the server judged.
    // Cross-site requests the server relayed are still refused.
    const crossOrigin = crossOriginProblem(req, ctx.facts.isHttps(req) ? 'https' : 'http', fromServerChannel(req) ? ctx.settings.get().server.url : undefined);
    if (crossOrigin) return sendText(res, 403, crossOrigin);
    dispatch(req, res);
  };
}
