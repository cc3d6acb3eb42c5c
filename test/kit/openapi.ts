// Checks responses from a real agent against docs/openapi.yaml. The test helpers call
// `responseProblem` on every HTTPS response they receive (agent.ts, lan.ts) and fail the request
// when the document does not describe it, so the document and the code cannot drift apart.
//
// What "described" means:
// - a path the document has, with a method it has: the status is declared (or `default`), the
//   media type is one the status declares (no body when it declares none), and a JSON body
//   matches its schema (JSON Schema 2020-12, as OpenAPI 3.1 uses it), a text body its string schema;
// - a path the document has, with a method it does not: the status is 405, or one of the answers
//   every path gets before routing (below);
// - a path the document does not have: only those answers. They come from the request-target
//   check (400), the auth gate (401, or 302 to the login page for a browser) and the router (404),
//   and are described once under `components/responses` (x-before-routing); 408 and 431 come
//   from the HTTP server before any of them.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// dist/test/kit -> the repository (agent.ts imports this module, so it cannot import agent.ts).
export const OPENAPI_FILE = join(resolve(dirname(fileURLToPath(import.meta.url)), '../../..'), 'docs/openapi.yaml');
const DOC_ID = 'https://printbox.invalid/openapi.json';
// 408 and 431 come from the HTTP server itself (a request too slow or with headers too large);
// 403 from the same-origin check (auth/same-origin.ts) on any state-changing request.
const BEFORE_ROUTING = new Set([302, 400, 401, 403, 404, 408, 431]);

interface MediaType { schema?: unknown }
interface Response { content?: Record<string, MediaType> }
interface Operation { responses: Record<string, Response | { $ref: string }> }
type PathItem = Record<string, Operation>;
export interface OpenApiDoc {
  openapi: string;
  info: { version: string; description: string };
  paths: Record<string, PathItem>;
  components: { schemas: Record<string, unknown>; responses?: Record<string, Response> };
  [key: string]: unknown;
}

export interface CheckedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body was cut by the client (LAN helper): check status and media type only. */
  truncated?: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let loaded: { doc: OpenApiDoc; ajv: Ajv2020; routes: { re: RegExp; template: string }[] } | undefined;

export function openapiDocument(): OpenApiDoc {
  return load().doc;
}

function load(): NonNullable<typeof loaded> {
  if (loaded) return loaded;
  const doc = parseYaml(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDoc;
  // strict off: the document carries OpenAPI keywords (example, discriminator, x-...) beside JSON Schema.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const routes = Object.keys(doc.paths).map((template) => ({
    template,
    // As tinyhttp routes: case-insensitive, an optional trailing slash.
    // A template ending in `/*` (tinyhttp's wildcard) covers every path below it.
    re: new RegExp('^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+').replace(/\/\\\*$/, '(?:/.*)?') + '/?$', 'i'),
  }));
  loaded = { doc, ajv, routes };
  return loaded;
}

/** A JSON pointer fragment for a document location. */
const pointer = (...parts: string[]) => '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

const validators = new Map<string, ValidateFunction>();
function validatorAt(ref: string): ValidateFunction {
  let v = validators.get(ref);
  if (!v) {
    v = load().ajv.compile({ $ref: DOC_ID + ref });
    validators.set(ref, v);
  }
  return v;
}

function resolveResponse(r: Response | { $ref: string }): { response: Response; at: string[] } | undefined {
  if ('$ref' in r) {
    const name = r.$ref.replace('#/components/responses/', '');
    const response = load().doc.components.responses?.[name];
    return response ? { response, at: ['components', 'responses', name] } : undefined;
  }
  return { response: r, at: [] };
}

const mediaTypeOf = (h: CheckedResponse['headers']) => String(h['content-type'] ?? '').split(';')[0].trim().toLowerCase();

/** Why the document does not describe this response, or null when it does. */
export function responseProblem(method: string, url: string, res: CheckedResponse): string | null {
  const { doc, routes } = load();
  const path = url.split('?')[0];
  const route = routes.find((r) => r.re.test(path));
  const what = `${method} ${path} -> ${res.status} ${mediaTypeOf(res.headers) || '(no content type)'}`;
  if (!route) return BEFORE_ROUTING.has(res.status) ? null : `${what}: the path is not in docs/openapi.yaml`;
  // HEAD is answered as GET without the body (api/app.ts), and described by the GET operation.
  const op = doc.paths[route.template][method === 'HEAD' && !doc.paths[route.template].head ? 'get' : method.toLowerCase()];
  if (!op || !METHODS.includes(method.toLowerCase())) {
    return res.status === 405 || BEFORE_ROUTING.has(res.status) ? null : `${what}: the method is not in docs/openapi.yaml for ${route.template}`;
  }
  const key = String(res.status) in op.responses ? String(res.status) : 'default' in op.responses ? 'default' : undefined;
  if (!key) {
    if (BEFORE_ROUTING.has(res.status) && res.status !== 404) return null;
    return `${what}: status not declared (declared: ${Object.keys(op.responses).join(', ')})`;
  }
  const resolved = resolveResponse(op.responses[key]);
  if (!resolved) return `${what}: unresolvable response reference`;
  const { response, at } = resolved;
  const content = response.content ?? {};
  const media = mediaTypeOf(res.headers);
  if (Object.keys(content).length === 0) {
    return res.body.length === 0 || method === 'HEAD' ? null : `${what}: a body where the document declares none`;
  }
  // `*/*` declares any media type (a printer's own pages, passed through).
  if (!(media in content) && !('*/*' in content)) return `${what}: media type not declared for ${key} (declared: ${Object.keys(content).join(', ')})`;
  if (res.truncated || method === 'HEAD' || media === 'text/event-stream' || content[media]?.schema === undefined) return null;
  const schemaAt = at.length ? pointer(...at, 'content', media, 'schema') : pointer('paths', route.template, method.toLowerCase(), 'responses', key, 'content', media, 'schema');
  let value: unknown = res.body;
  if (media === 'application/json') {
    try {
      value = JSON.parse(res.body);
    } catch {
      return `${what}: body is not JSON`;
    }
  }
  const validate = validatorAt(schemaAt);
  if (validate(value)) return null;
  const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` '${e.params.additionalProperty}'` : ''}`);
  return `${what}: body does not match ${schemaAt}: ${errors.join('; ')}`;
}

/** Why an event of the stream does not match its schema in the document (`x-events`), or null. */
export function eventProblem(event: string, data: unknown): string | null {
  const events = (load().doc.paths['/events']?.get as unknown as { 'x-events'?: Record<string, unknown> })?.['x-events'] ?? {};
  if (!(event in events)) return `event '${event}' is not in /events x-events of docs/openapi.yaml`;
  const validate = validatorAt(pointer('paths', '/events', 'get', 'x-events', event));
  if (validate(data)) return null;
  return `event '${event}' does not match its schema: ${(validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(data)'} ${e.message}`).join('; ')}`;
}
