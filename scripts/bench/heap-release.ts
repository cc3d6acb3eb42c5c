// The memory release that ends every polling round and every scan on the box
// (src/shared/release-memory.ts: one full collection that compacts the heap and gives its pages back),
// run in a bench's servers before `latest` is timed.
//
// Why a bench needs it: that collection also drops the hidden classes (maps) that no live object
// uses, and the request path's objects are all gone while a server is idle. The code V8 then
// rebuilds for the same requests costs about 10 % more CPU a request, in any Node server and for
// good: the minimal server's `latest` went from 0.017 to 0.019 ms after one, the agent's from
// 0.020 to 0.022 ms (docs/performance.md, "The agent against a minimal server").
// A box's agent has been through it at the end of every round since its first, so its capacity is
// measured after one; the minimal server is put through the same, or the ratio measures the
// collection instead of the agent.
import { call } from './https-call.js';

async function expect(port: number, method: string, path: string, status: number, body?: unknown): Promise<unknown> {
  const a = await call(port, method, path, body);
  if (a.status !== status) throw new Error(`${method} ${path}: ${a.status} ${a.text}`);
  return a.text ? JSON.parse(a.text) : undefined;
}

/** Asks `check` every 50 ms until it holds; throws after 60 s. */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 60 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The agent's own release, through its own code: a scan with SNMP and port probes off has no
 * targets, and ends at once with the collection (discovery/service.ts runScan). Resolves once the
 * scan says it has ended (the collection runs in the same turn, before anything else is served).
 */
export async function releaseAgentHeap(port: number): Promise<void> {
  await expect(port, 'POST', '/settings', 200, { discovery: { enable_snmp: false, port_probes_enabled: false } });
  const { scan_id: id } = (await expect(port, 'POST', '/discover', 202)) as { scan_id: number };
  await until('the agent\'s scan without targets', async () => {
    const s = (await expect(port, 'GET', '/discover', 200)) as { scan_id: number; state: string };
    return s.scan_id === id && s.state !== 'running';
  });
}

/** The minimal server's release (minimal-server.ts /release-memory): resolves once it has run. */
export async function releaseMinimalHeap(port: number): Promise<void> {
  const count = async () => ((await expect(port, 'GET', '/release-memory', 200)) as { released: number }).released;
  const before = await count();
  await expect(port, 'POST', '/release-memory', 202);
  await until('the minimal server\'s release', async () => (await count()) > before);
}
