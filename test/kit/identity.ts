// Reads every recording under test/fixtures/snmp over real UDP (snmpsim, one loopback address
// each) the way discovery does (readHost with the vendor read plan, then parsePrinter), and sets
// the identity found beside the identity expected (test/fixtures/snmp/expected.json). Used by
// test/unit/snmp/identity-scan.test.ts (which asserts) and scripts/bench/scan.ts (which reports).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHost } from '../../src/snmp/scan.js';
import { parsePrinter, readPlan } from '../../src/snmp/parse/printer.js';
import { fixturePath, startSnmpSim } from './snmpsim.js';

export interface IdentityRow {
  recording: string;
  expected: { manufacturer: string; model: string; serial: string | null };
  found: { manufacturer?: string; model?: string; serial?: string };
}

export function fixtureRecordings(): string[] {
  const root = fixturePath('');
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(root, d.name)).filter((f) => f.endsWith('.snmprec')).map((f) => `${d.name}/${f}`))
    .sort();
}

/** Every recording read over UDP from 127.<subnet>.N; addresses stay on loopback. */
export async function identityOverUdp(subnet = '127.79.3'): Promise<IdentityRow[]> {
  const expected = JSON.parse(readFileSync(fixturePath('expected.json'), 'utf8')) as Record<string, IdentityRow['expected']>;
  const recordings = fixtureRecordings();
  const addresses = recordings.map((_, i) => `${subnet}.${i + 1}`);
  const sim = await startSnmpSim({ endpoints: recordings.map((r, i) => ({ address: addresses[i], recording: fixturePath(r) })) });
  try {
    return await Promise.all(
      recordings.map(async (recording, i) => {
        const read = await readHost(addresses[i], {
          credentials: [{ version: 'v2c', community: 'public' }],
          port: sim.port,
          timeoutMs: 3000,
          allowedRanges: [`${subnet}.0/24`],
          planRead: readPlan,
        });
        const p = read ? parsePrinter(read.values, addresses[i], new Date()) : undefined;
        const e = expected[recording];
        return {
          recording,
          expected: { manufacturer: e?.manufacturer, model: e?.model, serial: e?.serial ?? null },
          found: { manufacturer: p?.info.manufacturer, model: p?.info.model, serial: p?.serial },
        };
      }),
    );
  } finally {
    await sim.stop();
  }
}
