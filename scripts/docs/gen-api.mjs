// Writes docs/api.md: every endpoint the agent serves, with examples made by running the built
// agent (npm run build first) on loopback with a seeded temporary database.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
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
writeFileSync(config, `data_dir = "${dir}/data"\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${https}\nhttp_port = ${http}\n[log]\nlevel = "warn"\n`);

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

const sections = [
  ['Read operations (contract 4.1)', [
    ['GET', '/devices/list', 'Saved devices (hidden ones included), as SavedDeviceEntry. No parameters, no method guard.'],
    ['GET', '/devices/discovered', 'Visible, unsaved devices as PrinterInfo, page_count and toner_levels from the latest raw snapshot. `minutes=N` keeps those seen in the last N minutes; `include_known=true` adds saved ones. `manufacturer` is the brand on the printer (rebadged lines by their own name: UTAX, Develop, Gestetner, FUJIFILM, Dell ...); `model` is cleaned of brand prefix, firmware versions, service tags and serial; `page_count` is the printer\'s total, or mono + colour when it reports only those two; `print_server` (`{"model","firmware"?}`, an addition) names the interface card a printer is reached through, apart from the printer.'],
    ['GET', '/devices/discovered?include_known=true&minutes=120', null],
    ['GET', '/api/devices/profile?serial=VD21457943', 'Device record and latest raw snapshot (or null).'],
    ['GET', '/api/devices/metrics/latest?serial=VD21457943', 'Newest raw snapshot; `tier` omitted.'],
    ['GET', '/api/devices/metrics/history?serial=VD21457943&period=day&maxPoints=5', 'Tiers raw, hourly, daily, monthly by window; `period` day|week|month|year (default week) or `since`+`until` (RFC 3339, inclusive); LTTB to `maxPoints` (default 200, max 10000, <3 = no reduction) unless `raw=true`.'],
    ['GET', `/api/devices/metrics/history?serial=VD21457943&since=${encodeURIComponent(iso(now - 60 * 24 * H))}&until=${encodeURIComponent(iso(now - 47 * H))}`, null],
    ['GET', '/api/devices/metrics/history?serial=VD21457943&since=2026-03-01%2010:00:00&until=2026-03-02T00:00:00Z', 'A non-RFC 3339 bound is a 400.'],
    ['GET', '/api/devices/metrics/history?serial=NOSUCH', 'No rows: 200 with `null`.'],
    ['GET', '/api/devices/metrics/bounds?serial=VD21457943', 'Earliest/latest timestamps and row count across all tiers.'],
    ['GET', '/api/devices/metrics/latest', 'Missing serial.'],
    ['POST', '/api/devices/profile?serial=VD21457943', 'Method guard.'],
    ['GET', '/api/version', 'Public: no credential needed.'],
  ]],
  ['Device management', [
    ['POST', '/devices/save', 'Body `{"serial"}`: marks a discovered device saved.', { serial: 'RH28Y00024' }],
    ['POST', '/devices/update', 'Body `{"serial", "asset_number"?, "location"?, "description"?, "visible"?}`: what a person sets; discovery never overwrites it (recorded in `locked_fields`).', { serial: 'RH28Y00024', asset_number: 'A-1001' }],
    ['POST', '/devices/save/all', 'Saves every visible discovered device.'],
    ['POST', '/devices/metrics/collect', 'Body `{"serial"}`: reads the device over SNMP now and answers the stored snapshot; 504 when it does not answer.', { serial: 'NOSUCH' }],
    ['POST', '/devices/delete', 'Body `{"serial"}`: removes the device and all its history in one transaction.', { serial: 'RH28Y00024' }],
    ['POST', '/devices/save', 'Bodies are validated: wrong content type 415, malformed JSON or missing fields 400.', { serial: 7 }],
  ]],
  ['Discovery and settings', [
    ['GET', '/settings', 'The contract\'s `discovery` object plus SNMP credentials (v3 keys never shown) and the polling interval.'],
    ['POST', '/settings', 'Partial update, all or nothing, applied at once and persisted. A bad value is a 400 naming the field.', { discovery: { manual_ranges: true, ranges_text: '127.0.1.1-20', allowed_ranges: ['127.0.0.0/8'] } }],
    ['POST', '/settings', null, { discovery: { snmp_timeout_ms: -1 } }],
    ['GET', '/settings/subnet_scan', 'Deprecated (use /settings, discovery.subnet_scan); still works.'],
    ['POST', '/discover', 'Starts a scan of the configured ranges and/or local subnets and answers 202 at once; a running scan is reported with `already_running`. Progress: `discovery_update` events.'],
    ['GET', '/discover', 'The last scan\'s state.'],
    ['GET', '/saved_ranges', 'Removed: 410 Gone with a pointer to /settings (also /mib_walk).'],
  ]],
  ['Events and logs', [
    ['GET', '/logs?level=warn&tail=5', 'Recent structured log records (`level` debug|info|warn|error, `tail` 1-2000, default 200).'],
    ['GET', '/logs?level=loud', null],
  ]],
];

let md = `# Agent HTTP API\n\nGenerated by \`node scripts/docs/gen-api.mjs\` from a running agent (build ${JSON.parse((await call('GET', '/api/version')).text).version}) on a seeded database; the contract is \`../shared/spec/agent-api-0.1.0.md\`, decisions in \`../shared/docs/decisions.md\`.\n\nAll endpoints but \`/api/version\` and the sign-in endpoints below need a credential: the \`pm_agent_session\` cookie, a loopback client (local admin, when \`web.auth.allow_local_admin\`), or the internal proxy header \`X-Service-Proxy: server\`. \`X-Forwarded-For\`, \`X-Forwarded-Proto\` and \`X-Service-Proxy\` count only when the TCP peer is in \`web.auth.trusted_proxies\` (default: loopback); from any other peer they are ignored. Without a credential: 302 to \`/login?return_to=...\` when \`Accept\` contains \`text/html\`, else 401 \`unauthorized\`. Only canonical request paths are served: an empty segment (\`//x\`), a \`.\` or \`..\` segment, a backslash, an encoded \`/\`, \`\\\`, \`.\` or NUL answer 400 before authentication (\`bad request path: ...\`); an absolute-form target (\`https://host/x\`) is served as its path. Errors are plain text ending in a newline. The examples below come from a loopback client.\n`;
for (const [title, calls] of sections) {
  md += `\n## ${title}\n`;
  for (const [method, path, text, body] of calls) {
    const r = await call(method, path, { body });
    if (text) md += `\n### \`${method} ${path.split('?')[0]}\`\n\n${text}\n`;
    md += `\n\`\`\`\n$ ${method} ${path}${body ? `  ${JSON.stringify(body)}` : ''}\n${r.status}${r.headers.location ? ` Location: ${r.headers.location}` : ''} ${r.headers['content-type'] ?? ''}\n${pretty(r.text)}\n\`\`\`\n`;
  }
}
md += `
## Events: \`GET /events\`

Server-Sent Events. \`connected\` \`{"agent_version"}\` on open; \`discovery_update\`
\`{"scan_id","state":"running|done|failed","scanned","total","found","error"?}\`;
\`device_change\` \`{"serial","change":"discovered|updated|saved|hidden|deleted|metrics"}\`. A comment
line every 15 s keeps the stream alive; a client that stops reading is dropped. At most 4 streams
per client address (a fifth: 503); when all 32 are open, a new stream closes the oldest stream of
the client holding the most.

## \`GET /logfile\`

The in-memory log (the box logs to journald) as a text download, one JSON record a line.

## Sign-in endpoints

Auth modes: \`local\` (no sign-in; the box itself is the local admin), \`password\` (local accounts:
the appliance's mode), \`server\` (credentials checked by the central server), \`disabled\`.
Failed attempts (sign-in, setup code, password change, server callback) are counted per client
address and per account name: after 5, the next attempt within 1 s, 2 s, 4 s ... (at most
15 minutes) answers 429 \`too many failed attempts: try again in N s\` with \`Retry-After\`, before
any password is checked.

- \`GET /login?return_to=/path\` (and its script \`/login.js\`): the sign-in page; in password mode
  while no account exists, the setup page (setup code, user, password); in local and disabled
  mode a notice.
- \`POST /api/v1/auth/login\` \`{"username","password"}\`: password mode checks the local account
  (scrypt); server mode asks the central server's \`/api/v1/auth/login\`. On success 200
  \`{"user","expires_at"}\` and the agent's own \`pm_agent_session\` cookie (Path=/, HttpOnly,
  SameSite=Lax, Expires, Max-Age, Secure over HTTPS): 24 hours, or in server mode the server's
  \`expires_at\` (at most 30 days; one already past or unreadable: 502, no session). 401
  \`invalid credentials\`; 502 when the server is unreachable; 403 in local and disabled mode.
- \`POST /api/v1/auth/logout\`: ends the session and clears the cookie; 204.
- \`POST /api/v1/auth/setup\` \`{"setup_code","username","password"}\` (password mode, while no
  account exists): makes the first account with the one-time code from the console or
  \`printbox-setup.txt\`, then signs in; 201 \`{"user","expires_at"}\`. 401 \`invalid setup code\`,
  409 once an account exists, 400 naming a bad user name or a password under 8 characters.
- \`POST /api/v1/auth/password\` \`{"current_password","new_password"}\` (password mode, a signed-in
  user): 204; the user's other sessions end. 401 \`current_password is wrong\`.
- \`GET /api/v1/auth/callback?token=...&return_to=/path\` (server mode): the server token is
  checked by calling the server's \`GET /api/v1/agents\` with it; on success a local session
  cookie (24 hours) and a 302 to \`return_to\` (local paths only).

## HTTP listener

With \`web.redirect_http_to_https\` (default) every request on the HTTP port answers 302 to
\`https://<same host>:<https_port><same path and query>\` before anything else runs.
`;
writeFileSync(join(root, 'docs/api.md'), md);
agent.kill('SIGTERM');
await new Promise((r) => agent.once('exit', r));
rmSync(dir, { recursive: true, force: true });
console.log('wrote docs/api.md');
