// The contract's resource shapes, for the route modules: defined in model/views.ts, which the store
// (NDJSON backup) and the server link use too.
export { deviceJson, printerInfoOf, snapshotJson } from '../model/views.js';
