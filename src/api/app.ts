// Assembles the agent's HTTP application: request log, auth wrapper, then the route modules.
import { App } from '@tinyhttp/app';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentContext } from './context.js';
import { sendText } from './respond.js';
import { authWrapper } from '../auth/wrapper.js';
import * as authRoutes from '../auth/routes.js';
import * as readRoutes from './routes/read.js';
import * as deviceRoutes from './routes/devices.js';
import * as discoveryRoutes from './routes/discovery.js';
import * as settingsRoutes from './routes/settings.js';
import * as eventRoutes from './routes/events.js';
import * as logRoutes from './routes/logs.js';
import * as uiRoutes from './routes/ui.js';

/** Route modules: each registers its paths on the app. Later features add theirs here. */
const ROUTES: { register(app: App, ctx: AgentContext): void }[] = [
  authRoutes,
  readRoutes,
  deviceRoutes,
  discoveryRoutes,
  settingsRoutes,
  eventRoutes,
  logRoutes,
  uiRoutes,
];

function requestLog(ctx: AgentContext) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      // Path only: query strings can carry tokens (the auth callback); headers carry cookies.
      ctx.log.debug(
        {
          method: req.method,
          path: (req.url ?? '').split('?')[0].slice(0, 200),
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - start) / 1e6,
          remote: req.socket.remoteAddress,
        },
        'request',
      );
    });
    next();
  };
}

export function createApp(ctx: AgentContext): App {
  const app = new App({
    settings: { xPoweredBy: false },
    noMatchHandler: (_req, res) => sendText(res, 404, 'not found'),
    onError: (err: unknown, _req, res) => {
      ctx.log.error({ err: err instanceof Error ? err.stack : String(err) }, 'request failed');
      if (!res.headersSent) sendText(res, 500, 'internal error');
      else res.destroy();
    },
  });
  app.use(requestLog(ctx));
  app.use(authWrapper(ctx.config, ctx.sessions));
  for (const routes of ROUTES) routes.register(app, ctx);
  return app;
}
