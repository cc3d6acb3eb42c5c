// The test tree is laid out like the code, so that a newcomer finds a module's tests where the
// module is, and the benches and soaks stay free to run without the rest of the suite:
//   test/unit/<folder>/  in-process tests of src/<folder>/ (the folder must exist in src/);
//   test/agent/          tests against a running agent (HTTP, Chromium, namespace LANs, servers, soaks);
//   test/image/          the image's own files checked on the build machine; test/vm/ inside the VM;
//   test/kit/            the shared kit: the only part of test/ that scripts/bench and scripts/soak
//                        import, and it imports nothing else of test/ itself;
//   test/fixtures/       recordings and documents the tests read;
//   test/layers.test.ts and this file: the layout of the whole of src/ and of test/.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// Compiled to dist/test/; the sources are read, not the build.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOP = ['agent', 'fixtures', 'image', 'kit', 'layers.test.ts', 'layout.test.ts', 'unit', 'vm'];

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** Every file under `dir` (relative to the repository), recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(join(root, f)).isFile());
}

/** The relative modules `file` imports (static, dynamic and side-effect imports, and re-exports). */
function relativeImports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\s)(?:import|export)\s[^'";]*?from\s*['"](\.\.?\/[^'"]+)['"]|import\(\s*['"](\.\.?\/[^'"]+)['"]|^import\s+['"](\.\.?\/[^'"]+)['"]/gm)) {
    found.push(m[1] ?? m[2] ?? m[3]!);
  }
  return found;
}

test('test/ holds only the parts of the layout', () => {
  assert.deepEqual(readdirSync(join(root, 'test')).sort(), TOP);
});

test('each folder of test/unit names a folder of src/', () => {
  const folders = readdirSync(join(root, 'test/unit')).filter((f) => isDir(join(root, 'test/unit', f)));
  assert.ok(folders.length > 10, 'test/unit has its folders');
  for (const f of readdirSync(join(root, 'test/unit'))) {
    assert.ok(isDir(join(root, 'test/unit', f)), `test/unit/${f}: a test of src/<folder> goes in test/unit/<folder>/`);
    assert.ok(isDir(join(root, 'src', f)), `test/unit/${f}/ names no folder of src/`);
  }
});

test('scripts/bench and scripts/soak import nothing of test/ but test/kit, and the kit nothing else of test/', () => {
  const importers = [...filesUnder('scripts/bench'), ...filesUnder('scripts/soak'), ...filesUnder('test/kit')].filter((f) => /\.(ts|mjs|js)$/.test(f));
  assert.ok(importers.length > 20, 'the benches, soaks and kit are found');
  const wrong: string[] = [];
  for (const file of importers) {
    for (const spec of relativeImports(readFileSync(join(root, file), 'utf8'))) {
      const target = relative(root, resolve(root, dirname(file), spec));
      if (target.startsWith('test' + sep) && !target.startsWith(join('test', 'kit') + sep)) wrong.push(`${file}: ${spec}`);
    }
  }
  assert.deepEqual(wrong, [], 'imports from test/ outside test/kit');
});

test('the layout check sees each form of import', () => {
  // The check above finds nothing on a tree that is right; make sure it reads what it would have to find.
  const text = [
    "import { a } from '../../test/unit/store/a.js';",
    "import type { B } from '../../test/agent/b.js';",
    "export { c } from './c.js';",
    "import '../d.js';",
    "const e = await import('../../test/e.js');",
    "import { f } from 'node:fs';",
  ].join('\n');
  assert.deepEqual(relativeImports(text), ['../../test/unit/store/a.js', '../../test/agent/b.js', './c.js', '../d.js', '../../test/e.js']);
});
