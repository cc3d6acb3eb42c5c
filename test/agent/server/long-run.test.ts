// Ten minutes against PrintMaster's own server at a 1-minute interval, three printers
// served by snmpsim, and the server stopped for three of the box's rounds and started again on the
// same data and port during the run (kit/pm-long-run.ts). The run mostly waits (about 12
// minutes of wall-clock); the checks below each read what it observed:
// - 10 ± 1 readings per printer in the ten minutes, every one on the server once, at its own time;
// - no two rounds (nor two readings of one printer) share a time on the server;
// - the server's Last Seen of the box and of each printer never older than the interval plus a
//   minute while the server is up and has what the box read;
// - the WebSocket back within 30 s of the first heartbeat the server answers after its return.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { printmasterUnavailable } from '../../kit/printmaster.js';
import { ensureSnmpsim } from '../../kit/snmpsim.js';
import { assertSameReadings } from '../../kit/pm-checks.js';
import { INTERVAL_MS, LONG_RUN_PRINTERS, longRun, within, type LongRun } from '../../kit/pm-long-run.js';

const why = printmasterUnavailable() ?? ensureSnmpsim();
const MINUTES = 10;
const iso = (t: number) => new Date(t).toISOString();

describe('ten minutes at a one-minute interval against PrintMaster\'s server, with an outage', { skip: why ?? false }, () => {
  let run: LongRun;

  before(async () => {
    run = await longRun({ minutes: MINUTES, roundsBefore: 2, outageRounds: 3, log: (l) => console.log(`# ${l}`) });
  }, { timeout: (MINUTES + 15) * 60_000 });

  test('10 ± 1 readings per printer in ten minutes, every one on the server once, at its own time', () => {
    for (const { serial } of LONG_RUN_PRINTERS) {
      const box = within(run.box[serial], run.start, run.end);
      const server = within(run.server[serial], run.start, run.end);
      assert.ok(box.length >= MINUTES - 1 && box.length <= MINUTES + 1, `${serial}: ${box.length} readings in ${MINUTES} minutes on the box: ${box.map(iso).join(', ')}`);
      assertSameReadings(serial, run.box[serial], run.server[serial]);
      // The outage's readings are among them: taken while the server was down, sent after.
      assert.ok(box.some((t) => t > run.stoppedAt && t < run.startedAt), `${serial}: readings taken during the outage`);
      assert.equal(server.length, box.length);
    }
  });

  test('no two rounds, nor two readings of one printer, share a time on the server', () => {
    // The server's i-th row of a printer is its i-th reading on the box (assertSameReadings above): its round.
    const roundsAt = new Map<number, Set<number | null>>();
    for (const { serial } of LONG_RUN_PRINTERS) {
      const server = run.server[serial];
      for (let i = 1; i < server.length; i++) assert.ok(server[i] > server[i - 1], `${serial}: two readings at ${iso(server[i])} on the server`);
      server.forEach((t, i) => {
        const round = run.rounds[serial].get(run.box[serial][i]);
        assert.notEqual(round, undefined, `${serial}: the reading of ${iso(run.box[serial][i])} has its round on the box`);
        if (!roundsAt.has(t)) roundsAt.set(t, new Set());
        roundsAt.get(t)!.add(round ?? null);
      });
    }
    for (const [t, rounds] of roundsAt) assert.equal(rounds.size, 1, `readings of ${rounds.size} rounds share the time ${iso(t)} on the server`);
    // Each round of the window is its own time on the server (three printers a round, at most).
    const times = [...roundsAt.keys()].filter((t) => t >= run.start && t < run.end);
    assert.ok(times.length >= MINUTES - 1, `${times.length} distinct times in the window`);
  });

  test('the server\'s Last Seen of the box and of each printer is never older than the interval plus a minute', () => {
    const limit = INTERVAL_MS + 60_000;
    const up = run.samples.filter((s) => s.phase === 'up');
    assert.ok(up.some((s) => s.at < run.stoppedAt) && up.some((s) => s.at > run.startedAt), `samples before and after the outage (${up.length})`);
    for (const s of up) {
      assert.ok(s.at - s.agentSeen <= limit, `at ${iso(s.at)} the server's Last Seen of the box was ${iso(s.agentSeen)}`);
      for (const { serial } of LONG_RUN_PRINTERS) {
        const seen = s.deviceSeen[serial];
        assert.ok(seen !== undefined && s.at - seen <= limit, `at ${iso(s.at)} the server's Last Seen of ${serial} was ${seen === undefined ? 'none' : iso(seen)}`);
      }
    }
  });

  test('the WebSocket is back within 30 s of the first heartbeat the server answers after its return', () => {
    console.log(`# server back ${iso(run.startedAt)}, first heartbeat ${iso(run.heartbeatAt)}, channel ${iso(run.channelAt)}`);
    assert.ok(run.heartbeatAt >= run.startedAt);
    assert.ok(run.channelAt - run.heartbeatAt <= 30_000, `the channel came back ${run.channelAt - run.heartbeatAt} ms after the first heartbeat`);
  });
});
