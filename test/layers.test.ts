// The layers of src/ (.dependency-cruiser.cjs, docs/architecture.md "Layers"): the tree as it is
// passes, and the rules do fail when broken, on a copy of src/ given an import to a higher layer,
// an import between two folders of one layer, an import cycle made of type-only imports, and a
// folder the list does not name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: the nearest folder above this file with the agent's package.json. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === 'printbox-agent') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('the repository root was not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

const root = repoRoot();
const depcruise = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

/** Runs dependency-cruiser on `dir`'s src/ with the repository's rules; the violations it reports. */
function cruise(dir: string): Promise<Violation[]> {
  const args = [depcruise, 'src', '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'];
  return new Promise((resolve, reject) => {
    // It exits non-zero when it finds a violation: the JSON on stdout says which.
    execFile(process.execPath, args, { cwd: dir, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      try {
        resolve((JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations);
      } catch {
        reject(new Error(`dependency-cruiser gave no report: ${err?.message ?? ''}\n${stderr}`));
      }
    });
  });
}

test('the folders of src/ keep their layers: no cycle, no import upward or sideways', async () => {
  assert.deepEqual(await cruise(root), []);
});

test('the rules fail on an upward import, a sideways import, a type-only cycle and an unlisted folder', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'layers-'));
  try {
    cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true });
    cpSync(join(root, 'tsconfig.json'), join(dir, 'tsconfig.json'));
    // The model (layer 1) reaching up into the API.
    writeFileSync(join(dir, 'src/model/upward.ts'), "import { sendText } from '../api/respond.js';\nexport const send = sendText;\n");
    // One domain importing another of its own layer.
    writeFileSync(join(dir, 'src/usb/sideways.ts'), "import { rollupOnce } from '../rollup/rollup.js';\nexport const roll = rollupOnce;\n");
    // Two shared helpers naming each other's types only: erased by the compiler, still a cycle.
    writeFileSync(join(dir, 'src/shared/cycle-a.ts'), "import type { B } from './cycle-b.js';\nexport interface A { b?: B }\n");
    writeFileSync(join(dir, 'src/shared/cycle-b.ts'), "import type { A } from './cycle-a.js';\nexport interface B { a?: A }\n");
    // A folder the list of layers does not name.
    mkdirSync(join(dir, 'src/unlisted'));
    writeFileSync(join(dir, 'src/unlisted/helper.ts'), "import { formatTime } from '../model/time.js';\nexport const f = formatTime;\n");

    const found = await cruise(dir);
    const seen = (rule: RegExp, from: string, to: string) =>
      found.some((v) => rule.test(v.rule.name) && v.from === from && v.to === to);
    assert.ok(seen(/imports-higher$/, 'src/model/upward.ts', 'src/api/respond.ts'), JSON.stringify(found, null, 1));
    assert.ok(seen(/sideways$/, 'src/usb/sideways.ts', 'src/rollup/rollup.ts'), JSON.stringify(found, null, 1));
    assert.ok(
      found.some((v) => v.rule.name === 'no-circular' && v.from === 'src/shared/cycle-a.ts' && v.to === 'src/shared/cycle-b.ts'),
      JSON.stringify(found, null, 1),
    );
    assert.ok(seen(/^folder-not-in-layers$/, 'src/unlisted/helper.ts', 'src/model/time.ts'), JSON.stringify(found, null, 1));
    // Nothing else: the copy is the tree that passes, plus these four.
    const expected = new Set(['src/model/upward.ts', 'src/usb/sideways.ts', 'src/shared/cycle-a.ts', 'src/shared/cycle-b.ts', 'src/unlisted/helper.ts']);
    assert.deepEqual(found.filter((v) => !expected.has(v.from)), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
