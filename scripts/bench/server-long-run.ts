// A long run against PrintMaster's own central server, the scenario of
// test/agent/server/long-run.test.ts (test/kit/pm-long-run.ts): three printers served by snmpsim,
// a 1-minute polling interval, the server stopped for `--outage-rounds` of the box's rounds and
// started again. Measured: readings per hour of each printer on the server against what the
// interval asks (60), the server's Last Seen age (largest while the server is up), and the time
// from the server's return to its first answered heartbeat and to the WebSocket channel's.
// Everything on loopback.
//   npm run build && node dist/scripts/bench/server-long-run.js [--minutes 30] [--outage-rounds 3] [--rounds-before 2]
import { printmasterUnavailable } from '../../test/kit/printmaster.js';
import { ensureSnmpsim } from '../../test/kit/snmpsim.js';
import { INTERVAL_MS, LONG_RUN_PRINTERS, longRun, within } from '../../test/kit/pm-long-run.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const MINUTES = arg('minutes', 30);

const why = printmasterUnavailable() ?? ensureSnmpsim();
if (why) {
  console.error(`cannot run: ${why}`);
  process.exit(2);
}

const run = await longRun({ minutes: MINUTES, outageRounds: arg('outage-rounds', 3), roundsBefore: arg('rounds-before', 2), log: (l) => console.log(`# ${l}`) });
const hours = (run.end - run.start) / 3_600_000;
console.log(`window ${MINUTES} min at a ${INTERVAL_MS / 60_000}-min interval (asked: ${Math.round(3_600_000 / INTERVAL_MS)} readings per hour)`);
for (const { serial } of LONG_RUN_PRINTERS) {
  const server = within(run.server[serial], run.start, run.end);
  const gaps = server.slice(1).map((t, i) => t - server[i]);
  console.log(
    `${serial}: ${server.length} readings on the server = ${(server.length / hours).toFixed(1)} per hour; ` +
      `gaps between them ${Math.min(...gaps) / 1000}-${Math.max(...gaps) / 1000} s; distinct times ${new Set(server).size}`,
  );
}
const up = run.samples.filter((s) => s.phase === 'up');
const age = (f: (s: (typeof up)[number]) => number) => Math.max(...up.map(f)) / 1000;
console.log(`Last Seen age while up (${up.length} samples): box ${age((s) => s.at - s.agentSeen)} s; printers ${age((s) => Math.max(...LONG_RUN_PRINTERS.map((p) => s.at - (s.deviceSeen[p.serial] ?? 0))))} s`);
console.log(`outage ${((run.startedAt - run.stoppedAt) / 1000).toFixed(1)} s; server back -> first heartbeat ${((run.heartbeatAt - run.startedAt) / 1000).toFixed(1)} s -> channel ${((run.channelAt - run.heartbeatAt) / 1000).toFixed(1)} s (server back -> channel ${((run.channelAt - run.startedAt) / 1000).toFixed(1)} s)`);
