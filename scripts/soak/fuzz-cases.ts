// The fuzzer's requests: each starts from a route of the agent (its path, methods, query parameters
// and JSON body schema from docs/openapi.yaml, plus every path of the agent's own route table) and
// a plausible request for it, then gets a few mutations: method, path spelling, query string,
// headers, message framing (Content-Length, Transfer-Encoding) and body. Seeded, so a run and any
// request it reports can be made again.
import type { OpenApiDoc } from '../../test/kit/openapi.js';

export interface FuzzRoute {
  path: string;
  methods: string[];
  query: { name: string; schema: Schema }[];
  body?: Schema;
}

export interface FuzzRequest {
  /** The bytes sent. */
  bytes: Buffer;
  method: string;
  target: string;
  tls: boolean;
  halfClose: boolean;
  /** For the agent without a local admin (password mode): it meets the auth gate. */
  unauthenticated: boolean;
  /** The mutations applied, by name: what a report shows beside the request. */
  mutations: string[];
}

type Schema = { [k: string]: unknown };
type Random = () => number;

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'get', 'Post', 'BREW', 'G ET', 'X'.repeat(300)];

/** The routes to fuzz: the document's operations, and any path of the route table it lacks. */
export function fuzzRoutes(doc: OpenApiDoc, table: { method?: string; path: string }[]): FuzzRoute[] {
  const routes = new Map<string, FuzzRoute>();
  const resolve = (s: unknown): Schema => resolveRef(doc, s as Schema);
  for (const [path, item] of Object.entries(doc.paths)) {
    const route: FuzzRoute = { path, methods: [], query: [] };
    for (const [method, op] of Object.entries(item as unknown as Record<string, Schema>)) {
      if (typeof op !== 'object' || !op || !('responses' in op)) continue;
      route.methods.push(method.toUpperCase());
      for (const p of (op.parameters as Schema[] | undefined) ?? []) {
        const param = resolve(p);
        if (param.in === 'query' && !route.query.some((q) => q.name === param.name)) {
          route.query.push({ name: String(param.name), schema: resolve(param.schema ?? {}) });
        }
      }
      const json = (op.requestBody as Schema | undefined)?.content as Record<string, Schema> | undefined;
      if (json?.['application/json']) route.body = resolve(json['application/json'].schema);
    }
    routes.set(path, route);
  }
  for (const r of table) {
    if (typeof r.path !== 'string' || r.path.includes(':') || r.path.includes('*')) continue;
    const known = routes.get(r.path) ?? { path: r.path, methods: [], query: [] };
    if (r.method && !known.methods.includes(r.method)) known.methods.push(r.method);
    if (known.methods.length === 0) known.methods.push('GET');
    routes.set(r.path, known);
  }
  return [...routes.values()];
}

function resolveRef(doc: OpenApiDoc, s: Schema): Schema {
  let cur = s;
  for (let i = 0; i < 10 && cur && typeof cur.$ref === 'string'; i++) {
    cur = (cur.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], doc) as Schema;
  }
  return cur ?? {};
}

const pick = <T>(rnd: Random, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
const chance = (rnd: Random, p: number) => rnd() < p;

/** A value that fits `schema` (enough to get past the first checks of a handler). */
function plausible(doc: OpenApiDoc, schema: Schema, rnd: Random, serials: string[], name = '', depth = 0): unknown {
  const s = resolveRef(doc, schema);
  if (Array.isArray(s.enum)) return pick(rnd, s.enum);
  const alt = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (alt?.length) return plausible(doc, pick(rnd, alt), rnd, serials, name, depth);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  if (name === 'serial') return pick(rnd, serials);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = (s.properties ?? {}) as Record<string, Schema>;
      for (const [k, v] of Object.entries(props)) {
        if (depth < 3 && (((s.required as string[] | undefined) ?? []).includes(k) || chance(rnd, 0.5))) out[k] = plausible(doc, v, rnd, serials, k, depth + 1);
      }
      return out;
    }
    case 'array':
      return depth < 3 ? [plausible(doc, (s.items ?? {}) as Schema, rnd, serials, name, depth + 1)] : [];
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : 0;
      const max = typeof s.maximum === 'number' ? s.maximum : min + 1000;
      return min + Math.floor(rnd() * (Math.min(max, min + 1000) - min + 1));
    }
    case 'boolean':
      return chance(rnd, 0.5);
    default:
      if (s.format === 'date-time') return new Date(Date.now() - rnd() * 30 * 864e5).toISOString();
      if (/range|ranges_text/.test(name)) return '127.0.0.1-2';
      if (/url/.test(name)) return 'http://127.0.0.1:9/';
      return pick(rnd, ['soak', 'tech', 'secret-pass-1', '127.0.0.1', '']);
  }
}

// ---- mutations --------------------------------------------------------------------------------

const PATH_MUTATIONS: [string, (p: string, rnd: Random) => string][] = [
  ['percent-encode', (p, rnd) => p.replace(/[a-z]/g, (c) => (chance(rnd, 0.3) ? `%${c.charCodeAt(0).toString(16)}` : c))],
  ['encoded-slash', (p) => p.replace(/\//g, (c, i) => (i > 0 ? '%2F' : c))],
  ['dot-segments', (p, rnd) => pick(rnd, [`/.${p}`, `/x/..${p}`, `${p}/.`, `${p}/..`, `/%2e%2e${p}`, `/..;${p}`, `${p}/../..${p}`])],
  ['double-slash', (p, rnd) => pick(rnd, [`/${p}`, p.replace(/\//g, '//'), `${p}//`])],
  ['trailing', (p, rnd) => p + pick(rnd, ['/', '.', ';', '%00', '%', '%zz', '#frag', ' ', '%20', '~'])],
  ['case', (p) => p.toUpperCase()],
  ['overlong', (p, rnd) => p + '/' + 'a'.repeat(pick(rnd, [300, 5000, 70_000]))],
  ['utf8', (p, rnd) => p + pick(rnd, ['/%C0%AE%C0%AE/', '/%ff%fe', '/é', '/%E2%80%AE', '/\u0000', '/%u002e'])],
  ['absolute-form', (p, rnd) => pick(rnd, [`http://127.0.0.1${p}`, `https://evil.invalid${p}`, `//127.0.0.1${p}`])],
  ['asterisk', () => '*'],
  ['empty', () => ''],
  ['backslash', (p) => p.replace(/\//g, '\\')],
];

const QUERY_VALUES = ['', '-1', '0', '1e309', '99999999999999999999999', 'NaN', 'null', 'true', '[]', '{}', '%', '%zz', '%00', 'x'.repeat(5000), '1.5', ' 1', '２', "'; DROP TABLE devices;--", '..%2F..%2Fetc%2Fpasswd', 'day&period=year'];

function queryString(route: FuzzRoute, rnd: Random, doc: OpenApiDoc, serials: string[], mutations: string[]): string {
  const parts: string[] = [];
  for (const q of route.query) {
    if (chance(rnd, 0.8)) parts.push(`${q.name}=${encodeURIComponent(String(plausible(doc, q.schema, rnd, serials, q.name)))}`);
  }
  if (!route.query.some((q) => q.name === 'serial') && /devices\/(profile|metrics)/.test(route.path)) parts.push(`serial=${encodeURIComponent(pick(rnd, serials))}`);
  if (chance(rnd, 0.3)) {
    mutations.push('query');
    const name = route.query.length && chance(rnd, 0.7) ? pick(rnd, route.query).name : pick(rnd, ['serial', 'period', 'x', '__proto__', 'constructor', 'a[]', '']);
    const value = pick(rnd, QUERY_VALUES);
    switch (Math.floor(rnd() * 4)) {
      case 0: parts.push(`${name}=${value}`); break; // duplicated or added
      case 1: parts.splice(0, parts.length, `${name}=${value}`); break; // only this one
      case 2: parts.push(pick(rnd, ['&&&', '=', '&=&', `${name}`, `${name}[x]=1`, `${'q'.repeat(3000)}=1`])); break;
      default: return '?' + Array.from({ length: pick(rnd, [100, 2000]) }, (_, i) => `p${i}=${i}`).join('&');
    }
  }
  return parts.length ? `?${parts.join('&')}` : chance(rnd, 0.05) ? '?' : '';
}

function bodyFor(route: FuzzRoute, rnd: Random, doc: OpenApiDoc, serials: string[], mutations: string[]): Buffer | undefined {
  const base = route.body ? plausible(doc, route.body, rnd, serials) : undefined;
  if (!chance(rnd, route.body ? 0.45 : 0.15)) return base === undefined ? undefined : Buffer.from(JSON.stringify(base));
  const kind = pick(rnd, ['bad-json', 'deep-array', 'deep-object', 'huge-number', 'wrong-types', 'not-object', 'huge', 'utf8', 'extra-fields', 'empty'] as const);
  mutations.push(`body:${kind}`);
  const json = JSON.stringify(base ?? {});
  switch (kind) {
    case 'bad-json': return Buffer.from(pick(rnd, [json.slice(0, -1), json + ',', `{"a":1,}`, "{'a':1}", '{"a":}', json.replace(/"/, ''), '\u0000', 'nul']));
    case 'deep-array': return Buffer.from('['.repeat(pick(rnd, [1000, 30_000])) + ']'.repeat(pick(rnd, [0, 1000, 30_000])));
    case 'deep-object': {
      const n = pick(rnd, [500, 10_000]);
      return Buffer.from('{"a":'.repeat(n) + '1' + '}'.repeat(n));
    }
    case 'huge-number': return Buffer.from(json.replace(/:(\d+|true|false|"[^"]*")/, ':' + pick(rnd, ['1e400', '-1e400', '123456789012345678901234567890', '0.0000000000000000000000001', '-0', '9007199254740993'])) || '{"serial":1e400}');
    case 'wrong-types': {
      const o = (typeof base === 'object' && base) ? { ...(base as Record<string, unknown>) } : {};
      const keys = Object.keys(o).length ? Object.keys(o) : ['serial', 'discovery', 'snmp', 'username'];
      for (const k of keys) if (chance(rnd, 0.6)) o[k] = pick(rnd, [null, 1, -1, 1.5, true, 'x', [], {}, [[]], { a: { b: {} } }, 'x'.repeat(2000)]);
      return Buffer.from(JSON.stringify(o));
    }
    case 'not-object': return Buffer.from(pick(rnd, ['[]', '"x"', '1', 'null', 'true', '[{}]']));
    case 'huge': return Buffer.from(JSON.stringify({ ...(base as object), pad: 'x'.repeat(pick(rnd, [60_000, 70_000, 300_000])) }));
    case 'utf8': return Buffer.concat([Buffer.from(json.slice(0, -1) + ',"x":"'), Buffer.from(pick(rnd, [[0xff, 0xfe], [0xc0, 0xae], [0xed, 0xa0, 0x80]])), Buffer.from('\\ud800"}')]);
    case 'extra-fields': {
      const extra = '"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},"":1,"unknown_field":1';
      return Buffer.from(json === '{}' ? `{${extra}}` : `{${extra},${json.slice(1)}`);
    }
    default: return Buffer.alloc(0);
  }
}

/** The next fuzzed request for `route`. */
export function fuzzRequest(doc: OpenApiDoc, route: FuzzRoute, rnd: Random, serials: string[]): FuzzRequest {
  const mutations: string[] = [];
  let method = pick(rnd, route.methods);
  if (chance(rnd, 0.15)) {
    method = pick(rnd, METHODS);
    mutations.push('method');
  }
  let path = route.path;
  if (chance(rnd, 0.3)) {
    const [name, mutate] = pick(rnd, PATH_MUTATIONS);
    path = mutate(path, rnd);
    mutations.push(`path:${name}`);
  }
  const target = path + queryString(route, rnd, doc, serials, mutations);
  let body = bodyFor(route, rnd, doc, serials, mutations);
  if (!body && ['POST', 'PUT', 'PATCH'].includes(method) && chance(rnd, 0.5)) body = Buffer.from('{}');

  const headers: [string, string][] = [['Host', '127.0.0.1']];
  headers.push(['Accept', pick(rnd, ['application/json', 'application/json', '*/*', 'text/html', 'text/event-stream', ''])]);
  if (body) headers.push(['Content-Type', chance(rnd, 0.9) ? 'application/json' : pick(rnd, ['text/plain', 'application/json; charset=latin1', 'APPLICATION/JSON', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', ''])]);
  const unauthenticated = chance(rnd, 0.2);
  if (unauthenticated && chance(rnd, 0.3)) headers.push(['Cookie', pick(rnd, ['pm_agent_session=forged', 'pm_agent_session=', `pm_agent_session=${'a'.repeat(64)}`])]);
  let halfClose = false;
  let framing: 'length' | 'chunked' | 'none' = body ? 'length' : 'none';
  if (chance(rnd, 0.25)) {
    const kind = pick(rnd, ['huge-header', 'many-headers', 'dup-host', 'no-host', 'cookies', 'xff-junk', 'service-proxy', 'bad-chars', 'dup-content-type', 'expect', 'upgrade', 'range'] as const);
    mutations.push(`header:${kind}`);
    switch (kind) {
      case 'huge-header': headers.push(['X-Big', 'b'.repeat(pick(rnd, [8000, 17_000, 70_000]))]); break;
      case 'many-headers': for (let i = 0; i < pick(rnd, [100, 2100]); i++) headers.push([`X-H${i}`, String(i)]); break;
      case 'dup-host': headers.push(['Host', 'evil.invalid']); break;
      case 'no-host': headers.shift(); break;
      case 'cookies': headers.push(['Cookie', pick(rnd, [Array.from({ length: 500 }, (_, i) => `c${i}=${i}`).join('; '), 'pm_agent_session=%zz; pm_agent_session=x', ';;;=;', `pm_agent_session=${'"'.repeat(10)}`, 'a'.repeat(6000)])]); break;
      case 'xff-junk': headers.push(['X-Forwarded-For', pick(rnd, ['', ',,,', 'not-an-ip', '127.0.0.1, 127.0.0.1'.repeat(100), '999.1.1.1', '[::1]'])]); headers.push(['X-Forwarded-Proto', pick(rnd, ['http', 'https', 'gopher', ''])]); break;
      case 'service-proxy': headers.push(['X-Service-Proxy', pick(rnd, ['server', 'SERVER', '', 'server, server'])]); break;
      case 'bad-chars': headers.push([pick(rnd, ['X-Bad', 'X Bad', 'X-Bad:', 'Ümlaut']), pick(rnd, ['a\u0001b', 'a\rb', 'é', '\u007f'])]); break;
      case 'dup-content-type': headers.push(['Content-Type', 'text/plain']); break;
      case 'expect': headers.push(['Expect', pick(rnd, ['100-continue', 'nonsense'])]); break;
      case 'upgrade': headers.push(['Connection', 'Upgrade'], ['Upgrade', pick(rnd, ['websocket', 'h2c', 'x'])]); break;
      default: headers.push(['Range', pick(rnd, ['bytes=0-10', 'bytes=-1', 'bytes=x'])]);
    }
  }
  if (chance(rnd, 0.15)) {
    const kind = pick(rnd, ['cl-short', 'cl-long', 'cl-negative', 'cl-junk', 'cl-duplicate', 'chunked', 'chunked-bad', 'te-and-cl', 'te-junk', 'cl-missing'] as const);
    mutations.push(`framing:${kind}`);
    body ??= Buffer.from('{}');
    switch (kind) {
      case 'cl-short': headers.push(['Content-Length', String(Math.max(0, body.length - 1 - Math.floor(rnd() * body.length)))]); framing = 'none'; break;
      case 'cl-long': headers.push(['Content-Length', String(body.length + 1 + Math.floor(rnd() * 100))]); framing = 'none'; halfClose = true; break;
      case 'cl-negative': headers.push(['Content-Length', '-1']); framing = 'none'; break;
      case 'cl-junk': headers.push(['Content-Length', pick(rnd, ['abc', '1e3', '0x10', '', ' 5', '99999999999999999999'])]); framing = 'none'; break;
      case 'cl-duplicate': headers.push(['Content-Length', String(body.length)], ['Content-Length', String(body.length + 3)]); framing = 'none'; break;
      case 'chunked': framing = 'chunked'; break;
      case 'chunked-bad': headers.push(['Transfer-Encoding', 'chunked']); body = Buffer.from(pick(rnd, ['zz\r\n{}\r\n0\r\n\r\n', '2\r\n{}\r\n', 'ffffffffffffffff\r\n{}\r\n0\r\n\r\n', '2;ext=1\r\n{}\r\n0\r\n\r\n', '-1\r\n\r\n'])); framing = 'none'; halfClose = true; break;
      case 'te-and-cl': headers.push(['Content-Length', String(body.length)], ['Transfer-Encoding', 'chunked']); body = Buffer.from(`${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`); framing = 'none'; break;
      case 'te-junk': headers.push(['Transfer-Encoding', pick(rnd, ['gzip', 'chunked, gzip', 'gzip, chunked', 'identity', 'chunked ', 'x'])]); framing = 'none'; halfClose = true; break;
      default: framing = 'none'; halfClose = true;
    }
  }
  if (framing === 'length' && body) headers.push(['Content-Length', String(body.length)]);
  if (framing === 'chunked' && body) {
    headers.push(['Transfer-Encoding', 'chunked']);
    body = Buffer.from(`${body.length.toString(16)}\r\n${body.toString('latin1')}\r\n0\r\n\r\n`, 'latin1');
  }
  if (!headers.some(([k]) => k.toLowerCase() === 'connection')) headers.push(['Connection', 'close']);
  const version = chance(rnd, 0.03) ? pick(rnd, ['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 ', 'http/1.1', 'HTTP/9']) : 'HTTP/1.1';
  if (version !== 'HTTP/1.1') mutations.push('version');
  const head = `${method} ${target} ${version}\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
  return {
    bytes: Buffer.concat([Buffer.from(head, 'utf8'), body ?? Buffer.alloc(0)]),
    method,
    target,
    tls: chance(rnd, 0.3),
    halfClose,
    unauthenticated,
    mutations,
  };
}
