// Writes docs/api.md from docs/openapi.yaml (the one description of the API: its text, parameters,
// bodies, responses and event payloads) plus examples made by running the built agent (npm run
// build first) on loopback with a seeded temporary database. Edit the YAML, not docs/api.md.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'dist/src/cli.js');
const freePort = () =>
  new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });

const dir = mkdtempSync(join(tmpdir(), 'printbox-doc-'));
const [https, http] = [await freePort(), await freePort()];
const config = join(dir, 'agent.toml');
writeFileSync(config, `data_dir = "${dir}/data"\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${https}\nhttp_port = ${http}\n[discovery]\nmdns_enabled = false\n[log]\nlevel = "warn"\n`);

// Seed: a saved and a discovered printer, raw snapshots for two days and older aggregated rows.
const now = Date.now();
const iso = (ms) => new Date(ms).toISOString().replace('.000Z', 'Z');
const H = 3600_000;
const lines = [{ kind: 'header', format: 'printbox-ndjson', version: 1 }];
const dev = (serial, ip, model, saved) => ({
  kind: 'device', serial, ip, manufacturer: 'Kyocera', model, hostname: serial.toLowerCase(),
  last_seen: iso(now - H), created_at: iso(now - 400 * 24 * H), first_seen: iso(now - 400 * 24 * H),
  device_type: 'network', source_type: 'snmp', is_saved: saved, visible: true, location: 'Floor 2',
  printer_info: { ip, model, manufacturer: 'Kyocera', serial, last_seen: iso(now - H), learned_oids: { page_count_oid: '1.3.6.1.2.1.43.10.2.1.4.1.1' }, is_mono: true },
});
lines.push(dev('VD21457943', '127.0.1.10', 'ECOSYS P2040dw', true), dev('RH28Y00024', '127.0.1.11', 'CS 4053ci', false));
for (let i = 48; i >= 1; i--) {
  lines.push({ kind: 'metrics', tier: 'raw', serial: 'VD21457943', timestamp: iso(now - i * H), page_count: 7400 + (48 - i) * 3, toner_levels: { black: 80 - Math.floor((48 - i) / 12) } });
}
lines.push({ kind: 'metrics', tier: 'raw', serial: 'RH28Y00024', timestamp: iso(now - 2 * H), page_count: 76498, color_pages: 40211, mono_pages: 36287, toner_levels: { black: 55, cyan: 70, magenta: 64, yellow: 81 } });
lines.push({ kind: 'metrics', tier: 'daily', serial: 'VD21457943', timestamp: iso(Math.floor((now - 40 * 24 * H) / (24 * H)) * 24 * H), page_count: 7100, toner_levels: { black: 95 } });
writeFileSync(join(dir, 'seed.ndjson'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
execFileSync(process.execPath, [cli, 'import', join(dir, 'seed.ndjson'), '--config', config]);

const agent = spawn(process.execPath, [cli, 'serve', '--config', config], { stdio: ['ignore', 'ignore', 'inherit'] });
const ca = () => readFileSync(join(dir, 'data/tls/agent.crt'));

function call(method, path, { body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: https, method, path, ca: ca(), checkServerIdentity: () => undefined, headers: { Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    if (body) req.write(JSON.stringify(body));
    req.end();
  });
}

for (let i = 0; ; i++) {
  try {
    await call('GET', '/api/version');
    break;
  } catch (e) {
    if (i > 100) throw e;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const pretty = (text, max = 40) => {
  let out = text;
  try {
    out = JSON.stringify(JSON.parse(text), null, 2);
  } catch {}
  const ls = out.trimEnd().split('\n');
  return ls.length > max ? [...ls.slice(0, max), `… (${ls.length - max} more lines)`].join('\n') : ls.join('\n');
};


// The examples: requests made against the seeded agent, shown under their operation.
const EXAMPLES = [
  ['GET', '/devices/list'],
  ['GET', '/devices/discovered'],
  ['GET', '/devices/discovered?include_known=true&minutes=120'],
  ['GET', '/api/devices/profile?serial=VD21457943'],
  ['GET', '/api/devices/metrics/latest?serial=VD21457943'],
  ['GET', '/api/devices/metrics/latest'],
  ['GET', '/api/devices/metrics/history?serial=VD21457943&period=day&maxPoints=5'],
  ['GET', `/api/devices/metrics/history?serial=VD21457943&since=${encodeURIComponent(iso(now - 60 * 24 * H))}&until=${encodeURIComponent(iso(now - 47 * H))}`],
  ['GET', '/api/devices/metrics/history?serial=VD21457943&since=2026-03-01%2010:00:00&until=2026-03-02T00:00:00Z'],
  ['GET', '/api/devices/metrics/history?serial=NOSUCH'],
  ['GET', '/api/devices/metrics/bounds?serial=VD21457943'],
  ['GET', `/api/devices/page-counts?serial=VD21457943&period=day&tz=Europe/Berlin&from=${encodeURIComponent(iso(now - 2 * 24 * H))}`],
  ['GET', '/api/devices/page-counts?serial=VD21457943&tz=Mars/Olympus'],
  ['POST', '/api/devices/profile?serial=VD21457943'],
  ['GET', '/api/version'],
  ['POST', '/devices/save', { serial: 'RH28Y00024' }],
  ['POST', '/devices/save', { serial: 7 }],
  ['POST', '/devices/update', { serial: 'RH28Y00024', asset_number: 'A-1001' }],
  ['POST', '/devices/save/all'],
  ['POST', '/devices/metrics/collect', { serial: 'NOSUCH' }],
  ['POST', '/devices/confirm-move', { serial: 'VD21457943', ip: '127.0.1.12' }],
  ['POST', '/devices/confirm-counter', { serial: 'VD21457943' }],
  ['POST', '/devices/delete', { serial: 'RH28Y00024' }],
  ['GET', '/settings'],
  ['POST', '/settings', { discovery: { manual_ranges: true, ranges_text: '127.0.1.1-20', allowed_ranges: ['127.0.0.0/8'] } }],
  ['POST', '/settings', { discovery: { snmp_timeout_ms: -1 } }],
  ['GET', '/settings/subnet_scan'],
  ['POST', '/discover'],
  ['GET', '/discover'],
  ['GET', '/saved_ranges'],
  ['GET', '/logs?level=warn&tail=5'],
  ['GET', '/logs?level=loud'],
];

const doc = parseYaml(readFileSync(join(root, 'docs/openapi.yaml'), 'utf8'));
const refName = (ref) => ref.split('/').pop();
const deref = (o) => (o && o.$ref ? doc.components[o.$ref.split('/')[2]][refName(o.$ref)] : o);
/** A schema in a few words: `Device`, `array of Device`, `string`, `integer | null`. */
function typeText(schema) {
  if (!schema) return '';
  if (schema.$ref) return `[${refName(schema.$ref)}](#${refName(schema.$ref).toLowerCase()})`;
  if (schema.type === 'array') return `array of ${typeText(schema.items)}`;
  if (schema.oneOf || schema.anyOf) return (schema.oneOf ?? schema.anyOf).map(typeText).join(' or ');
  if (schema.enum) return schema.enum.map((v) => `\`${v}\``).join(' \\| ');
  const t = [].concat(schema.type ?? 'any').join(' \\| ');
  return schema.format ? `${t} (${schema.format})` : t;
}
const cell = (text) => String(text ?? '').replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');

function propertiesTable(schema) {
  const props = Object.entries(schema.properties ?? {});
  if (!props.length) return '';
  const required = new Set(schema.required ?? []);
  return '\n| field | type | |\n|---|---|---|\n' +
    props.map(([k, v]) => `| \`${k}\`${required.has(k) ? ' (required)' : ''} | ${typeText(v)} | ${cell(v.description)} |`).join('\n') + '\n';
}

function operationText(method, path, op) {
  let out = `\n### \`${method.toUpperCase()} ${path}\`${op.deprecated ? ' (deprecated)' : ''}\n\n**${op.summary}.**${op.security?.length === 0 ? ' Public: no credential needed.' : ''}\n`;
  if (op.description) out += `\n${op.description.trim()}\n`;
  const params = (op.parameters ?? []).map(deref);
  if (params.length) {
    out += '\n| parameter | in | type | |\n|---|---|---|---|\n' +
      params.map((p) => `| \`${p.name}\`${p.required ? ' (required)' : ''} | ${p.in} | ${typeText(p.schema)} | ${cell(p.description)} |`).join('\n') + '\n';
  }
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  if (bodySchema) {
    out += `\nBody (\`application/json\`): ${typeText(bodySchema)}.\n`;
    if (!bodySchema.$ref) out += propertiesTable(bodySchema);
  }
  out += '\n| status | type | |\n|---|---|---|\n';
  for (const [status, r] of Object.entries(op.responses)) {
    const res = deref(r);
    const media = Object.entries(res.content ?? {}).map(([m, c]) => `\`${m}\`${c.schema && m === 'application/json' ? ` ${typeText(c.schema)}` : ''}`).join(', ');
    out += `| ${status} | ${media || '(no body)'} | ${cell(res.description)} |\n`;
  }
  return out;
}


// Run the examples in their order (they change the seeded state) and keep each under its operation.
const examples = new Map();
for (const [method, path, body] of EXAMPLES) {
  const r = await call(method, path, { body });
  const key = `${method.toLowerCase()} ${path.split('?')[0]}`;
  const text = `\n\`\`\`\n$ ${method} ${path}${body ? `  ${JSON.stringify(body)}` : ''}\n${r.status}${r.headers.location ? ` Location: ${r.headers.location}` : ''} ${r.headers['content-type'] ?? ''}\n${pretty(r.text)}\n\`\`\`\n`;
  examples.set(key, (examples.get(key) ?? '') + text);
}

const version = JSON.parse((await call('GET', '/api/version')).text).version;
let md = `# Agent HTTP API\n\nGenerated by \`node scripts/docs/gen-api.mjs\` from \`docs/openapi.yaml\` (served by the agent as \`GET /api/openapi.json\`) with examples from a running agent (build ${version}) on a seeded database, asked from a loopback client. The contract is \`../shared/spec/agent-api-0.1.0.md\`, decisions in \`docs/decisions/\`.\n\n${doc.info.description.trim()}\n`;
// Methods a path answers only with 405 (the contract's method guard) are one line under its GET.
const guardOnly = (op) => '405' in op.responses && !Object.keys(op.responses).some((s) => s.startsWith('2'));
const operations = Object.entries(doc.paths).flatMap(([path, item]) => {
  const methods = Object.entries(item).filter(([m]) => ['get', 'post', 'put', 'patch', 'delete', 'options', 'head'].includes(m));
  const guarded = methods.filter(([, op]) => guardOnly(op)).map(([m]) => m);
  return methods.filter(([, op]) => !guardOnly(op)).map(([method, op]) => ({ path, method, op, guarded: method === 'get' ? guarded : [] }));
});
for (const tag of doc.tags) {
  const ops = operations.filter((o) => o.op.tags?.[0] === tag.name);
  if (!ops.length) continue;
  md += `\n## ${tag.description.replace(/\.$/, '')}\n`;
  // A tag's rules that hold across its operations (x-text: Markdown).
  if (tag['x-text']) md += `\n${tag['x-text'].trim()}\n`;
  for (const { path, method, op, guarded } of ops) {
    md += operationText(method, path, op) + (examples.get(`${method} ${path}`) ?? '');
    if (guarded.length) {
      md += `\n${guarded.map((m) => m.toUpperCase()).join(', ')}: 405 \`GET only\` with \`Allow: GET\`.\n`;
      md += guarded.map((m) => examples.get(`${m} ${path}`) ?? '').join('');
    }
  }
  if (tag.name === 'events') {
    md += '\nEvent payloads (`x-events`):\n\n';
    for (const [name, s] of Object.entries(doc.paths['/events'].get['x-events'])) md += `- \`${name}\`: ${typeText(s)}\n`;
  }
}
md += '\n## Schemas\n';
for (const [name, schema] of Object.entries(doc.components.schemas)) {
  md += `\n### ${name}\n\n${schema.description ? cell(schema.description) + '\n' : ''}${propertiesTable(schema) || `\n${typeText(schema)}\n`}`;
}
// The backup format is the command line's, not HTTP's: its one description, docs/backup-format.md,
// goes in whole, a level down.
md += '\n' + readFileSync(join(root, 'docs/backup-format.md'), 'utf8').replace(/^#/gm, '##').trimEnd() + '\n';
writeFileSync(join(root, 'docs/api.md'), md);
agent.kill('SIGTERM');
await new Promise((r) => agent.once('exit', r));
rmSync(dir, { recursive: true, force: true });
console.log('wrote docs/api.md');
