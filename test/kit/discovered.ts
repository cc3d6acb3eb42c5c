// Test helper: the box agent's discovered listing (saved printers included), and a wait for it to
// satisfy a condition. Progress, not a fixed sleep: `ms` is only a guard, and its error shows the
// listing, the agent's log and whatever else `context` says (a test peer's output).
import assert from 'node:assert/strict';
import type { BoxAgent } from './lan.js';

export type Info = Record<string, unknown> & { serial: string; ip: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function discoveredListing(agent: () => BoxAgent, context: () => string = () => '') {
  const discovered = async (): Promise<Info[]> => {
    const r = await agent().request({ path: '/devices/discovered?include_known=true', maxBody: 1 << 20 });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as Info[];
  };
  const until = async (what: string, ok: (list: Info[]) => boolean, ms = 30_000): Promise<Info[]> => {
    const deadline = Date.now() + ms;
    let list: Info[] = [];
    while (Date.now() < deadline) {
      list = await discovered();
      if (ok(list)) return list;
      await sleep(200);
    }
    throw new Error(`${what}: not within ${ms} ms; listing: ${JSON.stringify(list).slice(0, 3000)}\n--- agent log ---\n${agent().stdout().slice(-4000)}${context()}`);
  };
  return { discovered, until };
}
