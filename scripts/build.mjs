// Compiles the TypeScript sources, turns docs/openapi.yaml into the JSON the agent serves
// (dist/src/api/openapi.json, GET /api/openapi.json), checks the web UI's modules against it,
// records what /api/version reports about this build, and bundles the compiled agent into the one
// file the box runs (dist/src/printbox-agent.js, scripts/bundle.mjs).
// Build facts come from the environment when the image build sets them (reproducible builds),
// else from git and the clock.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function git(args) {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

const tsc = (project) =>
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', project], { stdio: 'inherit' });
// The compiled tests are made afresh: scripts/test.sh runs every dist/test/**/*.test.js, and a test
// moved or deleted in the sources must not go on running from an earlier build.
rmSync(join(root, 'dist/test'), { recursive: true, force: true });
tsc(root);

// yaml is a development dependency: the build has it, the box gets only the JSON.
const { parse } = await import('yaml');
const openapi = parse(readFileSync(join(root, 'docs/openapi.yaml'), 'utf8'));
mkdirSync(join(root, 'dist/src/api'), { recursive: true });
writeFileSync(join(root, 'dist/src/api/openapi.json'), JSON.stringify(openapi) + '\n');

// The web UI's modules are checked by tsc from their JSDoc (src/ui/assets/tsconfig.json), with the
// API's types made from the same document by openapi-typescript (a development dependency), so an
// API shape the UI reads wrongly fails the build.
const { default: openapiTS, astToString } = await import('openapi-typescript');
mkdirSync(join(root, 'dist/ui-types'), { recursive: true });
writeFileSync(join(root, 'dist/ui-types/openapi.d.ts'), astToString(await openapiTS(openapi)));
tsc(join(root, 'src/ui/assets'));

// The web UI's modules and style sheet, and uPlot (a development dependency: the box gets the
// copy; page.ts makes it one of the UI's modules), beside the compiled src/ui/page.js, which reads
// them once at start-up. The modules' directory is made afresh: a module that is gone from the
// sources must not be served.
const uiAssets = join(root, 'dist/src/ui/assets');
rmSync(join(uiAssets, 'js'), { recursive: true, force: true });
mkdirSync(join(uiAssets, 'js'), { recursive: true });
for (const f of readdirSync(join(root, 'src/ui/assets/js')).filter((n) => n.endsWith('.js'))) {
  copyFileSync(join(root, 'src/ui/assets/js', f), join(uiAssets, 'js', f));
}
// The modules as one: a first visit asked for 19 modules besides uPlot; esbuild (a
// development dependency) bundles main.js and what it imports into ui.js, which page.ts serves as
// ui/main.js. uPlot stays its own module, ui/uplot.js (page.ts makes it). Identifiers are kept, so
// that a stack trace from a technician's browser still names the functions of the sources.
const { build: esbuild } = await import('esbuild');
await esbuild({
  entryPoints: [join(root, 'src/ui/assets/js/main.js')], outfile: join(uiAssets, 'ui.js'),
  bundle: true, format: 'esm', target: 'es2022', minifyWhitespace: true, minifySyntax: true, legalComments: 'inline',
  logLevel: 'warning',
  plugins: [{
    name: 'uplot-module',
    setup: (b) => b.onResolve({ filter: /^\.\/uplot\.js$/ }, (a) => ({ path: a.path, external: true })),
  }],
});
for (const f of ['app.css', 'login.js']) copyFileSync(join(root, 'src/ui/assets', f), join(uiAssets, f));
for (const f of ['uPlot.iife.min.js', 'uPlot.min.css']) copyFileSync(join(root, 'node_modules/uplot/dist', f), join(uiAssets, f));
copyFileSync(join(root, 'node_modules/uplot/LICENSE'), join(uiAssets, 'uPlot.LICENSE'));

const epoch = process.env.SOURCE_DATE_EPOCH;
const info = {
  build_time: epoch ? new Date(Number(epoch) * 1000).toISOString() : new Date().toISOString(),
  git_commit: process.env.PRINTBOX_GIT_COMMIT || git(['rev-parse', '--short=12', 'HEAD']) || 'unknown',
  build_type: process.env.PRINTBOX_BUILD_TYPE || 'dev',
};
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(join(root, 'dist/build-info.json'), JSON.stringify(info, null, 2) + '\n');

// The box's one-file agent (its units run it; `npm start` and the tests run dist/src/cli.js).
const { bundle: bundleAgent } = await import('./bundle.mjs');
await bundleAgent();
