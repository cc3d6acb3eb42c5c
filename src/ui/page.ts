// The local web UI: one page and its ES modules, talking to the same API a central server uses,
// served under a strict Content-Security-Policy (no inline script). The modules and the style
// sheet are plain files (src/ui/assets/js/*.js, app.css), checked by tsc against docs/openapi.yaml
// when the agent is built, and bundled by it into one module (ui/main.js); uPlot (the meter
// charts, npm package `uplot`) comes with them as the module ui/uplot.js. scripts/build.mjs puts
// them next to this module (dist/src/ui/assets), so the box needs no node_modules for the UI and
// nothing is built at run time. The page carries no data and no secret: the script asks the API for everything.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

/** The first of these files that exists: the build's copy, else the sources (a tsc-only build). */
function firstFile(what: string, candidates: string[]): string {
  for (const c of candidates) {
    const u = new URL(c, import.meta.url);
    if (existsSync(u)) return readFileSync(u, 'utf8');
  }
  throw new Error(`web UI asset ${what} is missing: run npm run build`);
}
const asset = (name: string): string =>
  firstFile(name, [`./assets/${name}`, `../../../src/ui/assets/${name}`, `../../../node_modules/uplot/dist/${name}`,
    `../../../node_modules/uplot/${name.replace('uPlot.', '')}`]);

// uPlot is MIT-licensed: its notice travels with it. The package's ES module build is not minified
// (145 kB); its minified build (51 kB) is a script that declares `var uPlot`, which a module keeps
// to itself: exporting that variable makes it the module ui/uplot.js.
const UPLOT_LICENSE = asset('uPlot.LICENSE');
const UPLOT_JS = `${asset('uPlot.iife.min.js').trimEnd()}\nexport default uPlot;\n`;
const UPLOT_CSS = asset('uPlot.min.css');
const APP_CSS = asset('app.css');

function moduleSources(): Map<string, string> {
  const out = new Map<string, string>();
  // The build's bundle (scripts/build.mjs: main.js and every module it imports, but uPlot) is the
  // one module a first visit needs besides uPlot: 2 requests, not 20.
  const bundle = new URL('./assets/ui.js', import.meta.url);
  if (existsSync(bundle)) out.set('main.js', readFileSync(bundle, 'utf8'));
  else {
    // Without it (a tsc-only build), the modules as they are.
    const dirs = ['./assets/js/', '../../../src/ui/assets/js/'].map((d) => new URL(d, import.meta.url));
    const dir = dirs.find((d) => existsSync(new URL('main.js', d)));
    if (!dir) throw new Error('web UI asset js/main.js is missing: run npm run build');
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.js')).sort()) {
      out.set(name, readFileSync(new URL(name, dir), 'utf8'));
    }
  }
  out.set('uplot.js', `/*! uPlot\n${UPLOT_LICENSE.trim()}\n*/\n${UPLOT_JS}`);
  return out;
}
const MODULE_SOURCES = moduleSources();

// Every module is named in the page for preloading: the browser asks for them all at once instead
// of learning of each from its importer (a round trip per level, which counts through the central
// server's proxy). Relative URLs, like everything the page names (docs/ui.md).
const PRELOADS = [...MODULE_SOURCES.keys()].map((n) => `<link rel="modulepreload" href="ui/${n}">`).join('\n');

// Through the central server's proxy the person signed in to the server, not to the box: there is
// no session of the box's to end, so that page has no Sign out (routes/ui.ts picks it by principal).
const SIGN_OUT = '<button id="logout" type="button">Sign out</button>';

const pageHtml = (signOut: boolean): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>PrintBox</title>
<link rel="icon" href="favicon.ico" type="image/svg+xml">
${PRELOADS}
<style>
${UPLOT_CSS}
${APP_CSS}</style>
</head>
<body>
<a class="skip" id="skip" href="#view">Skip to content</a>
<header><h1>PrintBox</h1>
<button id="menu-button" type="button" aria-expanded="false">Menu</button>
<nav aria-label="Pages"><a href="#/printers" data-nav="printers">Printers</a><a href="#/discovered" data-nav="discovered">Discovered <span id="discovered-count" class="badge" hidden></span></a><a href="#/alerts" data-nav="alerts">Alerts <span id="alert-count" class="badge bad" hidden></span></a><a href="#/order-list" data-nav="order-list">Order list</a><a href="#/billing" data-nav="billing">Billing</a><a href="#/settings" data-nav="settings">Settings</a><a href="#/logs" data-nav="logs">Logs</a></nav>
<div class="right"><span id="conn" role="status" data-state="connecting">Connecting…</span>${signOut ? SIGN_OUT : ''}</div></header>
<p id="storage" role="alert" hidden></p>
<p id="live-note" role="status" hidden></p>
<p id="status" role="status" aria-live="polite"></p>
<main id="view" tabindex="-1"></main>
<footer><p class="muted" id="version"></p></footer>
<script type="module" src="ui/main.js"></script>
</body>
</html>
`;

/** A body with its strong ETag and gzip'd form, made once. */
export interface Served {
  body: Buffer;
  gzip: Buffer;
  etag: string;
}
export function served(text: string): Served {
  const body = Buffer.from(text, 'utf8');
  return { body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}
export const PAGE_HTML = pageHtml(true);
export const PAGE: Served = served(PAGE_HTML);
/** The page as the central server's proxy serves it: without Sign out. */
export const PAGE_VIA_SERVER: Served = served(pageHtml(false));
/** The UI's modules by file name (ui/<name>), uPlot's among them. */
export const MODULES: ReadonlyMap<string, Served> = new Map([...MODULE_SOURCES].map(([n, text]) => [n, served(text)]));
