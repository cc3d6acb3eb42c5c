// HTTP fuzzer of the agent's own: N requests (default 100,000) over every route of a real
// agent, each a plausible request with mutated method, path, query string, headers, framing or body
// (fuzz-cases.ts), sent raw on a fresh connection (raw-request.ts), 70 % over the plain HTTP
// listener (serving the API: redirect off) and 30 % over HTTPS. Two agents: four requests in five
// go to one in local mode with the local admin on, so they reach the handlers (loopback is the
// admin); the fifth to one in password mode without the local admin, where they meet the auth
// gate, the login and the account routes unauthenticated.
// Counted: crashes (the agent process exited; it is restarted and the run goes on), answers by
// status, requests without an answer, and every 5xx with the request that caused it. Expected 5xx:
// 504 "device ... did not answer" from POST /devices/metrics/collect and "no SNMP answer from ..."
// from POST /devices/preview (nothing listens here), and 503
// "too many event streams" from GET /events (the fuzzer opens many), and 501 "updates need RAUC"
// from /api/autoupdate/check and force where the agent runs without A/B slots (not on the appliance);
// any other is unexpected.
// Requests can set the scan ranges, allowed ranges and server URL to anything, so the run happens
// in a network namespace of its own with only lo (isolate.ts): main starts itself again there.
//   npm run build && node dist/scripts/soak/fuzz.js [--requests 100000] [--seed N] [--concurrency 8]
//   node dist/scripts/soak/fuzz.js --seed N --only I     # send request number I of that seed again
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgent, type Agent } from '../../test/kit/agent.js';
import type { OpenApiDoc } from '../../test/kit/openapi.js';
import { device, metrics, ndjson, lcg, HOUR } from '../../test/kit/seed.js';
import { routeTable } from '../../src/api/app.js';
import { fuzzRequest, fuzzRoutes, type FuzzRequest } from './fuzz-cases.js';
import { sendRaw, type RawAnswer } from './raw-request.js';
import { isMain, machineLine, numberArg, flagArg } from './cli.js';
import { isolated, runIsolated, startedIsolated } from './isolate.js';

const here = dirname(fileURLToPath(import.meta.url));
const SERIALS = ['FUZZ0001', 'FUZZ0002', 'FUZZ0003', 'NOSUCHSERIAL', ''];
const ANSWER_TIMEOUT_MS = 10_000;

export interface FuzzOptions {
  requests: number;
  seed?: number;
  concurrency?: number;
  /** Send only request number `only` of the seed (reproduce a finding). */
  only?: number;
  log?: (line: string) => void;
}

export interface FuzzFinding {
  index: number;
  status: number;
  method: string;
  target: string;
  mutations: string[];
  tls: boolean;
  answer: string;
  /** The exact bytes sent, base64. */
  request: string;
}

export interface FuzzResult {
  seed: number;
  requests: number;
  routes: number;
  unauthenticated: number;
  byStatus: Record<string, number>;
  noAnswer: number;
  /** Requests without an answer, by what happened (closed, timeout, the socket error). */
  noAnswerBy: Record<string, number>;
  /** The first requests that got no answer at all within the time limit. */
  unanswered: FuzzFinding[];
  crashes: number;
  crashRequests: FuzzFinding[];
  expected5xx: number;
  unexpected5xx: FuzzFinding[];
  seconds: number;
}

/** Devices with history, so that serial and period parameters reach real rows. */
function seedData(now: number): string {
  const lines: object[] = [];
  for (const serial of SERIALS.slice(0, 3)) {
    lines.push(device(serial, '127.0.0.9', now, { is_saved: serial !== 'FUZZ0003', location: 'fuzz' }));
    for (let h = 1; h <= 48; h++) lines.push(metrics(serial, 'raw', now - h * HOUR, { page_count: 1000 + h, toner_levels: { black: 50 } }));
  }
  return ndjson(lines);
}

// Told apart by the agent's own message: the route may be spelt many ways (/EVENTS, absolute form).
// A HEAD answer has no body: there the path tells (case-insensitive, as the router matches).
const expected5xx = (r: FuzzRequest, a: RawAnswer) =>
  (a.status === 504 && /^(device .* did not answer at |no SNMP answer from )/.test(a.bodyStart)) ||
  (a.status === 501 && a.bodyStart.startsWith('updates need RAUC (')) ||
  (a.status === 503 && (a.bodyStart.startsWith('too many event streams open from ') || (r.method === 'HEAD' && /^(https?:\/\/[^/]*)?\/events(\?|$)/i.test(r.target))));

function finding(index: number, r: FuzzRequest, a: RawAnswer): FuzzFinding {
  return {
    index,
    status: a.status,
    method: r.method.slice(0, 40),
    target: r.target.length > 200 ? `${r.target.slice(0, 200)}... (${r.target.length} chars)` : r.target,
    mutations: r.mutations,
    tls: r.tls,
    answer: `${a.head.split('\r\n')[0]} ${a.bodyStart.slice(0, 200)}${a.error ? ` (${a.error})` : ''}`,
    request: r.bytes.toString('base64'),
  };
}

/** Runs the fuzzer against a fresh agent. Must run isolated (see main). */
export async function runFuzz(opts: FuzzOptions): Promise<FuzzResult> {
  if (!isolated()) throw new Error('the fuzzer runs only in a network namespace of its own (node dist/scripts/soak/fuzz.js does that)');
  const log = opts.log ?? (() => {});
  const seed = opts.seed ?? 21;
  const t0 = Date.now();
  const doc = JSON.parse(readFileSync(join(here, '../../src/api/openapi.json'), 'utf8')) as OpenApiDoc;
  const routes = fuzzRoutes(doc, routeTable());
  const result: FuzzResult = {
    seed, requests: 0, routes: routes.length, unauthenticated: 0, byStatus: {}, noAnswer: 0, noAnswerBy: {}, unanswered: [], crashes: 0,
    crashRequests: [], expected5xx: 0, unexpected5xx: [], seconds: 0,
  };
  const admin: Agent = await startAgent({ seed: seedData(Date.now()), redirectHttpToHttps: false });
  const gate: Agent = await startAgent({ seed: seedData(Date.now()), redirectHttpToHttps: false, authMode: 'password', allowLocalAdmin: false });
  const inFlight = new Map<number, FuzzRequest>();
  let restarting: Promise<void> | undefined;
  // Each request comes from its own index (not from the order the workers take them), so request
  // I of seed S is the same whatever the concurrency, and --only can send it again.
  const requestNumber = (i: number) => {
    const rnd = lcg((Math.imul(seed, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0);
    rnd();
    return fuzzRequest(doc, routes[Math.floor(rnd() * routes.length)], rnd, SERIALS);
  };
  const indexes = opts.only !== undefined ? [opts.only] : Array.from({ length: opts.requests }, (_, i) => i);
  let next = 0;
  const worker = async () => {
    while (next < indexes.length) {
      const i = indexes[next++];
      const req = requestNumber(i);
      if (restarting) await restarting;
      inFlight.set(i, req);
      const agent = req.unauthenticated ? gate : admin;
      const port = req.tls ? agent.httpsPort : agent.httpPort;
      const answer = await sendRaw({ host: '127.0.0.1', port, tls: req.tls }, req.bytes, {
        timeoutMs: ANSWER_TIMEOUT_MS,
        halfClose: req.halfClose,
        headOnly: req.method === 'HEAD',
      });
      result.requests++;
      if (req.unauthenticated) result.unauthenticated++;
      if (answer.status === 0) {
        result.noAnswer++;
        const why = (answer.error ?? 'closed').replace(/\d+/g, 'N');
        result.noAnswerBy[why] = (result.noAnswerBy[why] ?? 0) + 1;
        if (why === 'timeout' && result.unanswered.length < 20) result.unanswered.push(finding(i, req, answer));
      }
      else result.byStatus[answer.status] = (result.byStatus[answer.status] ?? 0) + 1;
      if (answer.status >= 500) {
        if (expected5xx(req, answer)) result.expected5xx++;
        else {
          result.unexpected5xx.push(finding(i, req, answer));
          log(`5xx: #${i} ${req.method.slice(0, 20)} ${req.target.slice(0, 120)} -> ${answer.head.split('\r\n')[0]} ${answer.bodyStart.slice(0, 120)}`);
        }
      }
      if (!admin.alive() || !gate.alive()) {
        restarting ??= (async () => {
          for (const dead of [admin, gate].filter((a) => !a.alive())) {
            result.crashes++;
            // Any request in flight to it may be the one: keep them all.
            for (const [j, r] of inFlight) {
              if ((r.unauthenticated ? gate : admin) === dead) result.crashRequests.push(finding(j, r, { status: 0, head: '', bodyStart: '', error: 'agent exited' }));
            }
            log(`CRASH after #${i} (exit ${dead.proc.exitCode ?? dead.proc.signalCode}); stderr tail: ${dead.stderr().slice(-2000)}`);
            await dead.restart();
          }
          restarting = undefined;
        })();
        await restarting;
      }
      inFlight.delete(i);
      if (result.requests % 10_000 === 0) log(`${result.requests} requests, ${((Date.now() - t0) / 1000).toFixed(0)} s, crashes ${result.crashes}, unexpected 5xx ${result.unexpected5xx.length}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
    // The last answers may have come just before an exit.
    await new Promise((r) => setTimeout(r, 500));
    result.crashes += [admin, gate].filter((a) => !a.alive()).length;
  } finally {
    await admin.stop();
    await gate.stop();
  }
  result.seconds = (Date.now() - t0) / 1000;
  return result;
}

export function formatFuzz(r: FuzzResult): string {
  const statuses = Object.entries(r.byStatus).sort(([a], [b]) => Number(a) - Number(b)).map(([s, n]) => `${s}: ${n}`).join(', ');
  const show = (f: FuzzFinding) =>
    `  #${f.index} ${f.tls ? 'https' : 'http'} ${f.method} ${f.target} [${f.mutations.join(' ')}] -> ${f.answer}\n    bytes (base64): ${f.request.slice(0, 600)}${f.request.length > 600 ? '...' : ''}`;
  return [
    `fuzz: ${machineLine()}`,
    `requests:         ${r.requests} over ${r.routes} routes (seed ${r.seed}); ${r.unauthenticated} unauthenticated (password-mode agent)`,
    `answers:          ${statuses}`,
    `no answer:        ${r.noAnswer} (${Object.entries(r.noAnswerBy).map(([k, n]) => `${k}: ${n}`).join(', ') || 'none'}; timeout = none in ${ANSWER_TIMEOUT_MS / 1000} s)`,
    `crashes:          ${r.crashes}`,
    `expected 5xx:     ${r.expected5xx} (504 collect or preview of a silent device, 503 too many event streams, 501 no RAUC here)`,
    `unexpected 5xx:   ${r.unexpected5xx.length}`,
    `time:             ${r.seconds.toFixed(0)} s`,
    ...(r.crashRequests.length ? ['requests in flight at a crash:', ...r.crashRequests.slice(0, 20).map(show)] : []),
    ...(r.unexpected5xx.length ? ['unexpected 5xx:', ...r.unexpected5xx.slice(0, 50).map(show)] : []),
    ...(r.unanswered.length ? [`no answer within ${ANSWER_TIMEOUT_MS / 1000} s (first ${r.unanswered.length}):`, ...r.unanswered.map(show)] : []),
  ].join('\n');
}

/** The fuzzer as a child in its own network namespace (what tests call): resolves its result. */
export async function runFuzzIsolated(opts: { requests: number; seed?: number }): Promise<FuzzResult> {
  const r = await runIsolated(fileURLToPath(import.meta.url), ['--requests', String(opts.requests), '--seed', String(opts.seed ?? 21), '--json']);
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (!last.startsWith('{')) throw new Error(`fuzzer exited ${r.code} without a result:\n${r.stdout.slice(-3000)}`);
  return JSON.parse(last) as FuzzResult;
}

if (isMain(import.meta.url)) {
  const json = flagArg('json');
  if (!isolated() && !startedIsolated()) {
    const r = await runIsolated(fileURLToPath(import.meta.url), process.argv.slice(2), true);
    process.exit(r.code ?? 1);
  }
  const only = process.argv.includes('--only') ? numberArg('only', 0) : undefined;
  const result = await runFuzz({
    requests: numberArg('requests', 100_000),
    seed: numberArg('seed', 21),
    concurrency: numberArg('concurrency', 8),
    only,
    log: json ? () => {} : (line) => console.log(line),
  });
  if (json) console.log(JSON.stringify(result));
  else {
    console.log(formatFuzz(result));
    if (result.unexpected5xx.length || result.crashRequests.length) {
      const file = `/tmp/printbox-fuzz-findings-seed${result.seed}.json`;
      writeFileSync(file, JSON.stringify({ crashes: result.crashRequests, unexpected5xx: result.unexpected5xx }, null, 2));
      console.log(`findings with the full requests: ${file}`);
    }
  }
  process.exitCode = result.crashes === 0 && result.unexpected5xx.length === 0 ? 0 : 1;
}
