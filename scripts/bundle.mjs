// The agent as one ES module for the box: dist/src/printbox-agent.js, made by esbuild from the
// compiled dist/src/cli.js (scripts/build.mjs runs this after tsc). Under TCG, and on a Pi's card,
// Node's ESM loader resolving and linking ~140 modules one by one was most of the agent's start
// (docs/performance.md); one file is one read, one parse, one compile-cache entry.
//
// Left outside the bundle, loaded from node_modules at run time as before:
// - better-sqlite3 and usb: native addons, found by their packages' own paths;
// - what the sources load through createRequire(import.meta.url) (net-snmp) or import.meta.resolve
//   (selfsigned, run in a child process): esbuild does not follow those;
// - files the modules read beside themselves (openapi.json, the UI's assets, build-info.json,
//   package.json): each module's import.meta.url is rewritten to the URL its own dist/src file
//   would have had, so `new URL('./assets/…', import.meta.url)` still names dist/src/ui/assets/….
//   The bundle therefore lives in dist/src, beside the tree it was made from.
// Bundled CommonJS packages that require Node's built-in modules get a real `require` (esbuild's
// ESM output has none of its own).
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const distSrc = join(root, 'dist/src');
export const BUNDLE = join(distSrc, 'printbox-agent.js');
/** What esbuild says went in and what the bundle still imports (test/agent/api/bundle.test.ts reads it; not shipped). */
export const META = join(root, 'dist/printbox-agent.meta.json');

/** The expression that stands for import.meta.url in the dist/src file `file`. */
function urlOf(file) {
  const rel = relative(distSrc, file).split(sep).join('/');
  return `new URL(${JSON.stringify('./' + rel)}, import.meta.url).href`;
}

const metaUrl = {
  name: 'import-meta-url-per-module',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(distSrc + sep)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      return { contents: text.replaceAll('import.meta.url', urlOf(args.path)), loader: 'js' };
    });
  },
};

export async function bundle() {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [join(distSrc, 'cli.js')],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: ['better-sqlite3', 'usb'],
    plugins: [metaUrl],
    banner: { js: "import { createRequire as __printboxRequire } from 'node:module';\nconst require = __printboxRequire(import.meta.url);" },
    // Smaller text to read and scan at every start; names kept (logs and errors carry them).
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'eof',
    logLevel: 'warning',
    metafile: true,
  });
  await writeFile(META, JSON.stringify(result.metafile) + '\n');
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundle();
