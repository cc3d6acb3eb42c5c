// The local web UI: one page and one script, talking to the same API a central server uses, served
// under a strict Content-Security-Policy (no inline script). The script and style sheet are plain
// files (src/ui/assets/app.js, app.css); uPlot (the meter charts, npm package `uplot`) comes with
// them. scripts/build.mjs copies all four next to this module (dist/src/ui/assets), so the box
// needs no node_modules for the UI and nothing is built at run time. The page carries no data and
// no secret: the script asks the API for everything.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

function asset(name: string): string {
  // dist/src/ui/assets (the build's copy), else the sources when run from a tsc-only build.
  const candidates = [new URL(`./assets/${name}`, import.meta.url), new URL(`../../../src/ui/assets/${name}`, import.meta.url),
    new URL(`../../../node_modules/uplot/dist/${name}`, import.meta.url), new URL(`../../../node_modules/uplot/${name.replace('uPlot.', '')}`, import.meta.url)];
  for (const u of candidates) if (existsSync(u)) return readFileSync(u, 'utf8');
  throw new Error(`web UI asset ${name} is missing: run npm run build`);
}

// uPlot is MIT-licensed: its notice travels with it.
const UPLOT_JS = `/*! uPlot\n${asset('uPlot.LICENSE').trim()}\n*/\n${asset('uPlot.iife.min.js')}`;
const UPLOT_CSS = asset('uPlot.min.css');
const APP_JS = asset('app.js');
const APP_CSS = asset('app.css');

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>PrintBox</title>
<link rel="icon" href="favicon.ico" type="image/svg+xml">
<style>
${UPLOT_CSS}
${APP_CSS}</style>
</head>
<body>
<a class="skip" id="skip" href="#view">Skip to content</a>
<header><h1>PrintBox</h1>
<nav aria-label="Pages"><a href="#/printers" data-nav="printers">Printers</a><a href="#/discovered" data-nav="discovered">Discovered</a><a href="#/alerts" data-nav="alerts">Alerts <span id="alert-count" class="badge bad" hidden></span></a><a href="#/settings" data-nav="settings">Settings</a><a href="#/logs" data-nav="logs">Logs</a></nav>
<div class="right"><span id="conn" role="status" data-state="connecting">Connecting…</span><button id="logout" type="button">Sign out</button></div></header>
<p id="storage" role="alert" hidden></p>
<p id="live-note" role="status" hidden></p>
<p id="status" role="status" aria-live="polite"></p>
<main id="view" tabindex="-1"></main>
<footer><p class="muted" id="version"></p></footer>
<script src="ui.js"></script>
</body>
</html>
`;

export const PAGE_JS = `${UPLOT_JS}\n${APP_JS}`;

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
export const PAGE: Served = served(PAGE_HTML);
export const SCRIPT: Served = served(PAGE_JS);
