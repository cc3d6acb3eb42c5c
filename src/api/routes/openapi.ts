// GET /api/openapi.json: the API's own description, public like /api/version. The source is
// docs/openapi.yaml; the build turns it into dist/src/api/openapi.json beside this module, so the
// box serves the document of the code it runs.
import type { App } from '@tinyhttp/app';
import { readFileSync } from 'node:fs';

const FILE = new URL('../openapi.json', import.meta.url);
let body: Buffer | undefined;

export function register(app: App): void {
  app.get('/api/openapi.json', (_req, res) => {
    // Read at the first request only: most boxes never serve it.
    body ??= readFileSync(FILE);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Length', body.length);
    res.end(body);
  });
}
