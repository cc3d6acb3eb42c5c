// The web UI's modules are checked by tsc against docs/openapi.yaml: scripts/build.mjs
// makes the API's types with openapi-typescript and runs src/ui/assets/tsconfig.json. Here the same
// check runs against the real document (it passes) and against one with three shapes changed (a
// response field renamed, a query parameter's values, a request field's type): each fails, naming
// the module that reads the old shape. The check is strict: a field that may become missing or
// null fails it too where a module uses it unchecked. No browser: this is the build's own check.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import openapiTS, { astToString } from 'openapi-typescript';
import { repoRoot } from '../../kit/agent.js';
import { openapiDocument } from '../../kit/openapi.js';

const work = join(repoRoot, 'dist', `ui-types-test-${process.pid}`);
mkdirSync(work, { recursive: true });
after(() => rmSync(work, { recursive: true, force: true }));

type Doc = ReturnType<typeof openapiDocument> & { components: { schemas: Record<string, any> } };

/** tsc over the UI's modules with the API's types made from `doc`. */
async function check(name: string, doc: object): Promise<{ status: number | null; out: string }> {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'openapi.d.ts'), astToString(await openapiTS(doc as Parameters<typeof openapiTS>[0])));
  // The UI's own configuration, with only the generated types swapped (paths are relative to the
  // configuration that names them: absolute here).
  const config = {
    extends: join(repoRoot, 'src/ui/assets/tsconfig.json'),
    compilerOptions: {
      paths: { 'printbox-openapi': [join(dir, 'openapi.d.ts')], uplot: [join(repoRoot, 'node_modules/uplot/dist/uPlot.d.ts')] },
    },
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config));
  const r = spawnSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

const changed = (change: (d: Doc) => void): Doc => {
  const d = structuredClone(openapiDocument()) as Doc;
  change(d);
  return d;
};

test('the modules pass the check against docs/openapi.yaml as it is', async () => {
  const r = await check('as-is', openapiDocument());
  assert.equal(r.status, 0, r.out);
  // Every module is checked (// @ts-check) and none is left out of the configuration's reach.
  for (const f of readdirSync(join(repoRoot, 'src/ui/assets/js')).filter((n) => n.endsWith('.js'))) {
    assert.match(readFileSync(join(repoRoot, 'src/ui/assets/js', f), 'utf8'), /^\/\/ @ts-check$/m, f);
  }
});

test('shapes changed in the document fail the check, each in the module that reads it', async () => {
  // One document with three changes (tsc reports every error: one run covers them all).
  const r = await check('changed', changed((d) => {
    // A response field renamed.
    const page = d.components.schemas.PrinterPage;
    page.properties.count = page.properties.total;
    delete page.properties.total;
    page.required = page.required.map((k: string) => (k === 'total' ? 'count' : k));
    // A query parameter's values.
    const filter = (d.paths['/api/printers'] as any).get.parameters.find((p: { name: string }) => p.name === 'filter');
    filter.schema.enum = ['visible', 'alerts', 'hidden', 'all'];
    // A request field's type.
    (d.paths['/api/alerts/acknowledge'] as any).post.requestBody.content['application/json'].schema.properties.id = { type: 'string' };
  }));
  assert.notEqual(r.status, 0);
  assert.match(r.out, /printers\.js\(\d+,\d+\): error TS2339: Property 'total' does not exist/);
  assert.match(r.out, /printers\.js\(\d+,\d+\): error TS2322: Type '"shown"' is not assignable/);
  assert.match(r.out, /alerts\.js\(\d+,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
});

test('a field that may now be missing or null fails the check where a module uses it unchecked (strict)', async () => {
  const r = await check('nullable', changed((d) => {
    // A required list made optional: the Printers page reads it at once.
    const page = d.components.schemas.PrinterPage;
    page.required = page.required.filter((k: string) => k !== 'printers');
    // A number made nullable: the Settings page divides it.
    d.components.schemas.StorageStatus.properties.reserve_bytes.type = ['integer', 'null'];
  }));
  assert.notEqual(r.status, 0);
  assert.match(r.out, /printers\.js\(\d+,\d+\): error TS18048: 'page\.printers' is possibly 'undefined'/);
  assert.match(r.out, /settings-box\.js\(\d+,\d+\): error TS18047: 'st\.reserve_bytes' is possibly 'null'/);
});
