// The route index (api/route-index.ts) hands each request to an App holding only its path's
// routes: every request must reach the handler tinyhttp's whole table would have run (paths in
// other cases, with a trailing slash or a query, wrong methods, paths that a parameter route or a
// pattern's '.' also matches, unknown paths), and an indexed path must not test the other routes'
// patterns (the point of the index).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { App } from '@tinyhttp/app';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { routeIndex } from '../../../src/api/route-index.js';

/** A table like the agent's, each handler saying its name: static paths, methods, parameters, a wildcard, a '.'. */
function table() {
  const newApp = () => new App({ settings: { xPoweredBy: false }, applyExtensions: (_q, _s, next) => next?.(), noMatchHandler: (req) => said(req, 'no match') });
  const app = newApp();
  const to = (name: string) => (req: IncomingMessage) => said(req, name);
  app.get('/', to('root'));
  app.get('/settings', to('get settings'));
  app.post('/settings', to('post settings'));
  app.all('/api/devices/metrics/latest', to('latest'));
  app.get('/ui/app', to('static ui/app, before the parameter route'));
  app.get('/ui/:module', to('ui module'));
  app.get('/ui/late', to('static ui/late, after the parameter route'));
  app.all('/proxy/:serial/*', to('proxy wildcard'));
  app.all('/proxy/x', to('static proxy/x'));
  app.get('/login.js', to('login.js'));
  app.get('/loginXjs', to('loginXjs'));
  return { app, newApp };
}

type Probe = IncomingMessage & { ran?: string };
function said(req: IncomingMessage, name: string) {
  (req as Probe).ran = name;
}

function run(handle: (req: IncomingMessage, res: ServerResponse) => void, method: string, url: string): string {
  const req = { method, url, headers: {} } as Probe;
  const res = { writableEnded: false, setHeader() {}, end() {} } as unknown as ServerResponse;
  handle(req, res);
  return req.ran ?? '(nothing)';
}

const PATHS = [
  '/', '/?a=1', '/settings', '/SETTINGS', '/settings/', '/settings?x=/y', '/api/devices/metrics/latest?serial=A',
  '/Api/Devices/Metrics/Latest/', '/ui/app', '/ui/late', '/ui/other', '/proxy/x', '/proxy/x/', '/proxy/x/y', '/proxy/y',
  '/login.js', '/loginXjs', '/LOGIN.JS/', '/login.jsx', '/nowhere', '/settings/more',
];

test('every request reaches the handler that tinyhttp\'s whole table runs', () => {
  const { app, newApp } = table();
  const dispatch = routeIndex(app, newApp);
  for (const method of ['GET', 'POST', 'PUT'])
    for (const path of PATHS) {
      const expected = run(app.attach as (req: IncomingMessage, res: ServerResponse) => void, method, path);
      assert.equal(run(dispatch, method, path), expected, `${method} ${path}`);
    }
  // And the table itself was not changed by the index.
  assert.equal(run(app.attach as (req: IncomingMessage, res: ServerResponse) => void, 'GET', '/ui/late'), 'ui module');
});

test('an indexed path tests only its own routes\' patterns; a path others also match goes to the whole table', () => {
  const { app, newApp } = table();
  const dispatch = routeIndex(app, newApp);
  const tested = new Set<string>();
  for (const m of app.middleware) {
    const pattern = m.regex!.pattern;
    const test = pattern.test.bind(pattern);
    pattern.test = (s: string) => (tested.add(m.path as string), test(s));
  }
  const patternsTested = (method: string, url: string) => {
    tested.clear();
    run(dispatch, method, url);
    return [...tested].sort();
  };
  assert.deepEqual(patternsTested('POST', '/Settings/?a=b'), ['/settings']);
  assert.deepEqual(patternsTested('GET', '/api/devices/metrics/latest?serial=A'), ['/api/devices/metrics/latest']);
  // '/ui/app' is matched by '/ui/:module' too, '/proxy/x/' by the wildcard, '/loginXjs' by '/login.js'.
  for (const url of ['/ui/app', '/proxy/x', '/loginXjs', '/nowhere']) assert.equal(patternsTested('GET', url).length, new Set(app.middleware.map((m) => m.path)).size, url);
});
