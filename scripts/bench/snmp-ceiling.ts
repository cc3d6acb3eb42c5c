// The simulators' own ceiling, measured beside a bench's figures: `inFlight` sessions spread over
// `hosts`, each sending one single-OID GET (sysUpTime) as soon as the previous one returns, for
// `seconds`. Answers per second.
import { openSession } from '../../src/snmp/client.js';

export async function simulatorCeiling(hosts: string[], port: number, seconds: number, inFlight: number, allowedRanges: string[]): Promise<number> {
  const end = Date.now() + seconds * 1000;
  let done = 0;
  const loop = async (i: number) => {
    const s = openSession({ version: 'v2c', community: 'public' }, { host: hosts[(i * 37) % hosts.length], port, timeoutMs: 2000, retries: 0, allowedRanges });
    try {
      while (Date.now() < end) {
        await s.get(['1.3.6.1.2.1.1.3.0']);
        done++;
      }
    } finally {
      s.close();
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: inFlight }, (_, i) => loop(i)));
  return done / ((Date.now() - t0) / 1000);
}
