// Types for the UI's JSDoc: the API's shapes come from docs/openapi.yaml, through the declarations
// openapi-typescript makes of it at build time (scripts/build.mjs: dist/ui-types/openapi.d.ts, the
// module `printbox-openapi` in src/ui/assets/tsconfig.json). A path, query, body or field the
// document does not have fails the build. Only tsc reads this file: the browser gets the .js.
import type { components, paths } from 'printbox-openapi';

export type Schemas = components['schemas'];

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : null;
type Operation<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M];
/** The JSON of an operation's success (200, 201 or 202; null for 204). */
type Answer<Op> = Op extends { responses: infer R }
  ? R extends { 200: infer A } ? JsonOf<A>
    : R extends { 201: infer A } ? JsonOf<A>
      : R extends { 202: infer A } ? JsonOf<A>
        : R extends { 204: unknown } ? null : never
  : never;
type Succeeds = { responses: { 200: unknown } | { 201: unknown } | { 202: unknown } | { 204: unknown } };

/** The paths with a GET that answers JSON. */
export type GetPath = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 200: { content: { 'application/json': unknown } } } } } ? P : never;
}[keyof paths];
/** The paths with a POST that can succeed (not the 405 method guards). */
export type PostPath = { [P in keyof paths]: paths[P] extends { post: Succeeds } ? P : never }[keyof paths];

export type GetQuery<P extends GetPath> = Operation<P, 'get'> extends { parameters: { query?: infer Q } } ? Q : never;
export type GetAnswer<P extends GetPath> = Answer<Operation<P, 'get'>>;
export type PostBody<P extends PostPath> = Operation<P, 'post'> extends { requestBody?: { content: { 'application/json': infer B } } }
  ? B
  : Record<string, never>;
export type PostAnswer<P extends PostPath> = Answer<Operation<P, 'post'>>;

/**
 * What the page's listeners hear: the event stream's events the UI uses (their payloads as
 * docs/openapi.yaml's x-events names them) and `poll`, the periodic refresh's "re-read".
 */
export interface Events {
  discovery_update: Schemas['EventDiscoveryUpdate'];
  device_change: Schemas['EventDeviceChange'];
  server_status: Schemas['ServerLinkStatus'];
  storage_status: Schemas['StorageStatus'];
  update_progress: Schemas['EventUpdateProgress'];
  alert: Schemas['EventAlert'];
  poll: Record<string, never>;
}
export type EventName = keyof Events;
/** A listener: called with each event's name and payload (checking the name narrows the payload). */
export type Listener = (...event: { [N in EventName]: [name: N, data: Events[N]] }[EventName]) => void;
/** A listener that needs only the name. */
export type NameListener = (name: EventName) => void;

/** POST /restore's answer (its body is the backup file, not JSON: api.js restore()). */
export type RestoreAnswer = paths['/restore']['post']['responses'][200]['content']['application/json'];
