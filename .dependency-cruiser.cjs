// The layers of src/, checked by dependency-cruiser (`npm run lint:layers`, and `npm test`'s
// "layers" stage). docs/architecture.md, "Layers", says why and what to do when a module needs
// something from a layer above its own.
//
// LAYERS is the architecture: an ordered list, lowest first, each entry a layer of folders of
// src/. The rules below are generated from it:
// - no import cycle anywhere in src/, type-only imports included (an `import type` is a
//   dependency of the design even though the compiler erases it);
// - a folder imports only folders of its own layer or of lower ones, never of a higher layer;
// - the folders of one layer do not import each other, except along the edges its `within` names;
// - every folder of src/ is in LAYERS (a new folder takes its place in the list before it is used),
//   and nothing imports the entry point, src/cli.ts.
'use strict';

/** @type {{ name: string, folders: string[], within?: [string, string][] }[]} */
const LAYERS = [
  { name: 'shared helpers, with no domain knowledge', folders: ['shared'] },
  { name: 'the domain model: types and pure functions', folders: ['model'] },
  { name: 'logging and the events bus', folders: ['log', 'events'] },
  {
    name: 'protocols: wire formats and clients',
    folders: ['net', 'snmp', 'ipp', 'systemd'],
    within: [['ipp', 'snmp']], // IPP reads the IEEE 1284 Device ID and supply names with SNMP's parsers
  },
  { name: 'configuration and storage (all SQL)', folders: ['config', 'store'] },
  { name: 'settings', folders: ['settings'] },
  { name: 'domains that need no other domain', folders: ['auth', 'rollup', 'forecast', 'billing', 'usb', 'update', 'printer-web'] },
  { name: 'discovery and provisioning', folders: ['discovery', 'provision'] },
  { name: 'alerts', folders: ['alerts'] },
  { name: 'notifications', folders: ['notify'] },
  { name: 'the web UI\'s pages and the listeners', folders: ['ui', 'web'] },
  { name: 'the Agent HTTP API', folders: ['api'] },
  { name: 'the central server link', folders: ['server'] },
  { name: 'commands: the composition roots', folders: ['commands'] },
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
const folderPath = (folders) => `^src/(${folders.map(escape).join('|')})/`;
const ALL = LAYERS.flatMap((l) => l.folders);
/** A folder of src/ that LAYERS does not list. */
const UNLISTED = `^src/(?!(${ALL.map(escape).join('|')})/)[^/]+/`;

const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${i}-imports-higher`,
  comment: `${layer.name} (${layer.folders.join(', ')}) must not import a higher layer`,
  severity: 'error',
  from: { path: folderPath(layer.folders) },
  to: { path: folderPath(LAYERS.slice(i + 1).flatMap((l) => l.folders)) },
}));

const sideways = LAYERS.flatMap((layer, i) =>
  layer.folders.length < 2
    ? []
    : layer.folders.map((folder) => {
        const others = layer.folders.filter((f) => f !== folder && !(layer.within ?? []).some(([a, b]) => a === folder && b === f));
        return others.length === 0
          ? undefined
          : {
              name: `layer-${i}-sideways`,
              comment: `${folder} must not import another folder of its layer (${layer.name}) unless the layer's list allows it`,
              severity: 'error',
              from: { path: folderPath([folder]) },
              to: { path: folderPath(others) },
            };
      }).filter(Boolean),
);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import cycle, type-only imports included: one of its modules belongs lower',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...upward,
    ...sideways,
    {
      name: 'folder-not-in-layers',
      comment: 'every folder of src/ takes its place in LAYERS (.dependency-cruiser.cjs): this one is imported',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: UNLISTED },
    },
    {
      name: 'folder-not-in-layers',
      comment: 'every folder of src/ takes its place in LAYERS (.dependency-cruiser.cjs): this one imports',
      severity: 'error',
      from: { path: UNLISTED },
      to: {},
    },
    {
      name: 'no-import-of-entry-point',
      comment: 'src/cli.ts is the entry point, above every layer',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/cli\\.ts$' },
    },
  ],
  options: {
    // Type-only imports count: `import type` and `import { type X }` are dependencies too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // The browser's UI modules (src/ui/assets) are cruised too: they sit in ui/, and no cycle either.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.d.ts'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
