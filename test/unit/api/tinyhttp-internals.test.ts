// api/route-index.ts reaches past tinyhttp's public API: it reads an App's `middleware` entries
// (`path`, `method`, `regex.pattern`, `regex.keys`) and pushes entries made by one App into
// another's list. package.json pins @tinyhttp/app to one exact version for that reason. These
// checks fail when the installed tinyhttp differs from the pin or when its internals no longer have
// the shapes the index relies on: then re-check route-index.ts before changing the pin.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { App } from '@tinyhttp/app';

const RECHECK = 'tinyhttp internals changed: re-check src/api/route-index.ts before changing the @tinyhttp/app pin';

/** The repository's root: the nearest folder above this file holding the project's package.json. */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'printbox-agent') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json of printbox-agent not found above the test');
    dir = up;
  }
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

test('@tinyhttp/app is pinned to one exact version, and that version is the one installed', () => {
  const root = projectRoot();
  const wanted = (readJson(join(root, 'package.json')).dependencies as Record<string, string>)['@tinyhttp/app'];
  assert.match(wanted, /^\d+\.\d+\.\d+$/, `@tinyhttp/app must be pinned exactly (not a range): ${RECHECK}`);
  const installed = readJson(join(root, 'node_modules/@tinyhttp/app/package.json')).version;
  assert.equal(installed, wanted, `installed @tinyhttp/app ${String(installed)} is not the pinned ${wanted}: ${RECHECK}`);
  const locked = (readJson(join(root, 'package-lock.json')).packages as Record<string, { dependencies?: Record<string, string> }>)[''];
  assert.equal(locked.dependencies?.['@tinyhttp/app'], wanted, `package-lock.json's root entry must pin the same version: ${RECHECK}`);
});

test('an App keeps its routes as `middleware` entries with a path, a method and a compiled regex', () => {
  const app = new App();
  assert.ok(Array.isArray(app.middleware), `App.middleware is not an array: ${RECHECK}`);
  app.get('/a/b', () => {});
  app.post('/items/:id', () => {});
  assert.equal(app.middleware.length, 2, `one middleware entry per route: ${RECHECK}`);
  const [plain, param] = app.middleware;
  assert.equal(plain.path, '/a/b', RECHECK);
  assert.equal(plain.method, 'GET', RECHECK);
  assert.ok(plain.regex?.pattern instanceof RegExp, `middleware[].regex.pattern is not a RegExp: ${RECHECK}`);
  assert.ok(Array.isArray(plain.regex.keys) && plain.regex.keys.length === 0, `a path without parameters has no regex.keys: ${RECHECK}`);
  assert.deepEqual(param.regex?.keys, ['id'], `a parameter route lists its names in regex.keys: ${RECHECK}`);
  // route-index's routeKey() folds case and one trailing slash, as the pattern does.
  for (const url of ['/a/b', '/A/B', '/a/b/']) assert.ok(plain.regex.pattern.test(url), `the pattern of /a/b does not match ${url}: ${RECHECK}`);
  assert.ok(!plain.regex.pattern.test('/a/bc'), RECHECK);
});

test('an entry pushed into another App\'s middleware is run by that App', () => {
  const table = new App();
  let ran = '';
  table.get('/only', () => {
    ran = 'only';
  });
  const other = new App({ noMatchHandler: () => (ran = 'no match') });
  other.middleware.push(table.middleware[0]);
  const req = { method: 'GET', url: '/only', headers: {} } as IncomingMessage;
  const res = { writableEnded: false, setHeader() {}, end() {} } as unknown as ServerResponse;
  other.attach(req as Parameters<App['attach']>[0], res as Parameters<App['attach']>[1]);
  assert.equal(ran, 'only', `an App does not run the entries in its middleware list at request time: ${RECHECK}`);
});
