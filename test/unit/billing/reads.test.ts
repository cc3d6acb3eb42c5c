// Billing meter reads on a simulated clock against a real SQLite file: the due time of
// each period from the settings (month ends, February, a leap year, a billing zone and a change of
// it), reads taken at the first check at or after it, silent printers retried within the billing
// day and then given their nearest stored reading. The poll is a stand-in (FAKE POLL below: it
// answers for the printers a test says answer, as the ordinary poll path would with a snapshot);
// test/agent/api/billing-exports.test.ts runs the schedule in a real agent polling a simulated printer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { currentPeriod, nextPeriod, periodOf, zonedInstant } from '../../../src/model/billing-time.js';
import { BillingSchedule, RETRY_MS, RETRY_WINDOW_MS, type BillingSettings } from '../../../src/billing/schedule.js';
import { MeterReadStore, type ListedRead } from '../../../src/store/meter-reads.js';
import { MetricsStore } from '../../../src/store/metrics.js';
import type { Snapshot } from '../../../src/model/device.js';
import { openTemp, MIN, HOUR, DAY } from '../../kit/rollup-db.js';

const iso = (t: number) => new Date(t).toISOString();
const at = (text: string) => Date.parse(text);

test('due times: day 31 is the month\'s last day, February 28 or 29 (leap year), in the billing zone', () => {
  const utc = { day: 31, time: '23:30', time_zone: 'UTC' };
  assert.equal(iso(periodOf(2027, 4, utc).due), '2027-04-30T23:30:00.000Z');
  assert.equal(iso(periodOf(2027, 2, utc).due), '2027-02-28T23:30:00.000Z');
  assert.equal(iso(periodOf(2028, 2, utc).due), '2028-02-29T23:30:00.000Z');
  assert.equal(iso(periodOf(2100, 2, utc).due), '2100-02-28T23:30:00.000Z'); // not a leap year
  assert.equal(iso(periodOf(2027, 12, { ...utc, day: 30 }).due), '2027-12-30T23:30:00.000Z');
  // Berlin: a month start is 23:00 UTC in winter, 22:00 in summer.
  const berlin = { day: 1, time: '00:00', time_zone: 'Europe/Berlin' };
  assert.equal(iso(periodOf(2026, 12, berlin).due), '2026-11-30T23:00:00.000Z');
  assert.equal(iso(periodOf(2026, 7, berlin).due), '2026-06-30T22:00:00.000Z');
  // 02:30 on the spring-forward day does not exist in Berlin: the same wall time after the gap.
  assert.equal(iso(zonedInstant(2027, 3, 28, 2, 30, 'Europe/Berlin')), '2027-03-28T01:30:00.000Z');
  // 02:30 on the autumn day exists twice: the first.
  assert.equal(iso(zonedInstant(2026, 10, 25, 2, 30, 'Europe/Berlin')), '2026-10-25T00:30:00.000Z');
  // The current period is the newest due at or before now; the next is after it.
  const p = currentPeriod(at('2027-03-01T00:00:00Z'), utc);
  assert.deepEqual([p.period, iso(p.due)], ['2027-02', '2027-02-28T23:30:00.000Z']);
  assert.equal(currentPeriod(at('2027-02-28T23:29:59Z'), utc).period, '2027-01');
  assert.equal(nextPeriod(at('2027-02-28T23:29:59Z'), utc).period, '2027-02');
  assert.equal(nextPeriod(at('2027-02-28T23:30:00Z'), utc).period, '2027-03');
});

interface Rig {
  clock: { t: number };
  settings: BillingSettings;
  answering: Set<string>;
  polls: { t: number; serials: string[]; first: boolean }[];
  schedule: BillingSchedule;
  reads: MeterReadStore;
  metrics: MetricsStore;
  /** Runs checks every `step` (plus a little jitter) until `end`. */
  run(end: number, step?: number): Promise<void>;
  readsOf(period: string): ListedRead[];
}

/** A printer's page counter at time t: grows 100 pages a day, distinct per printer. */
const pages = (serial: string, t: number) => serial.charCodeAt(serial.length - 1) * 1000 + Math.floor(t / DAY) * 100;

function rig(start: number, settings: BillingSettings, printers: { serial: string; created_at: number }[]): Rig {
  const { db } = openTemp('billing-');
  const reads = new MeterReadStore(db);
  const metrics = new MetricsStore(db);
  const clock = { t: start };
  const answering = new Set(printers.map((p) => p.serial));
  const polls: Rig['polls'] = [];
  const schedule = new BillingSchedule({
    settings: () => settings,
    reads,
    savedPrinters: () => printers,
    // FAKE POLL: the printers that answer give a snapshot at the poll's own time, stored as a poll stores it.
    async poll(serials, first) {
      polls.push({ t: clock.t, serials: [...serials], first });
      return serials.filter((s) => answering.has(s)).map((serial): Snapshot => {
        const s = { serial, ts: clock.t + 1500, page_count: pages(serial, clock.t), mono_pages: 10 };
        return { ...s, id: metrics.insertRaw(s) };
      });
    },
    nearest: (serial, t, max) => metrics.nearestReading(serial, t, max, clock.t),
    now: () => clock.t,
    log: { info() {}, warn() {} },
  });
  return {
    clock, settings, answering, polls, schedule, reads, metrics,
    async run(end, step = 10 * MIN) {
      let i = 0;
      while (clock.t < end) {
        clock.t += step + ((i++ * 7919) % 400) - 3; // a tick a little late or early, as node-cron's
        await schedule.check();
      }
    },
    readsOf: (period) => [...reads.iterate(period)],
  };
}

test('across month ends (billing day 31 at 23:30 UTC): one read a month, taken at the first check after its due time', async () => {
  const r = rig(at('2027-01-15T00:00:00Z'), { enabled: true, day: 31, time: '23:30', time_zone: 'UTC' }, [{ serial: 'P-1', created_at: at('2027-01-15T00:00:00Z') }]);
  await r.run(at('2027-05-10T00:00:00Z'));
  const periods = r.reads.periods().map((p) => [p.period, iso(p.due_at)]);
  assert.deepEqual(periods, [
    ['2027-04', '2027-04-30T23:30:00.000Z'],
    ['2027-03', '2027-03-31T23:30:00.000Z'],
    ['2027-02', '2027-02-28T23:30:00.000Z'],
    ['2027-01', '2027-01-31T23:30:00.000Z'],
  ]);
  for (const [period] of periods) {
    const [read] = r.readsOf(period);
    assert.equal(read.source, 'poll');
    assert.equal(read.attempts, 1);
    assert.ok(read.read_at! >= read.due_at && read.read_at! - read.due_at < 11 * MIN, `${period} read ${iso(read.read_at!)}`);
    assert.equal(read.counters.page_count, pages('P-1', read.read_at! - 1500));
  }
  // The delta against the previous month: 100 pages a day, 28 days from January's read to February's.
  const [feb] = r.readsOf('2027-02');
  assert.equal(feb.previous?.period, '2027-01');
  assert.equal(feb.counters.page_count! - feb.previous!.counters.page_count!, 28 * 100);
  // Four whole rounds, no more: a period read is never polled again.
  assert.equal(r.polls.length, 4);
  assert.ok(r.polls.every((p) => p.first));
});

test('a leap year: billing day 30 in February 2028 is the 29th', async () => {
  const r = rig(at('2028-02-20T00:00:00Z'), { enabled: true, day: 30, time: '12:00', time_zone: 'UTC' }, [{ serial: 'P-2', created_at: 0 }]);
  await r.run(at('2028-03-05T00:00:00Z'));
  const [read] = r.readsOf('2028-02');
  assert.equal(iso(read.due_at), '2028-02-29T12:00:00.000Z');
  assert.ok(read.read_at! >= read.due_at && read.read_at! < at('2028-02-29T12:11:00Z'));
});

test('a silent printer is retried within the billing day; one silent all day gets its nearest reading, one never read is missing', async () => {
  const settings: BillingSettings = { enabled: true, day: 1, time: '06:00', time_zone: 'UTC' };
  const due = at('2027-06-01T06:00:00Z');
  const r = rig(due - 30 * MIN, settings, [
    { serial: 'LATE-1', created_at: 0 }, { serial: 'OFF-2', created_at: 0 }, { serial: 'NEVER-3', created_at: 0 },
    { serial: 'NEW-4', created_at: due + HOUR }, // saved after the billing time: owes no read this period
  ]);
  r.answering.delete('LATE-1');
  r.answering.delete('OFF-2');
  r.answering.delete('NEVER-3');
  // OFF-2 last answered 3 hours before the billing time, then again 20 hours after: the nearer one counts.
  r.metrics.insertRaw({ serial: 'OFF-2', ts: due - 3 * HOUR, page_count: 5000 });
  r.metrics.insertRaw({ serial: 'OFF-2', ts: due + 20 * HOUR, page_count: 5100 });
  r.metrics.insertRaw({ serial: 'NEVER-3', ts: due - 30 * DAY, page_count: 1 }); // too far to count
  await r.run(due + 80 * MIN, MIN);
  r.answering.add('LATE-1'); // answers from the 4th attempt on (06:00, 06:30, 07:00 silent; 07:30 heard)
  await r.run(due + RETRY_WINDOW_MS + 5 * MIN, MIN);
  const reads = new Map(r.readsOf('2027-06').map((x) => [x.serial, x]));
  assert.deepEqual([...reads.keys()], ['LATE-1', 'NEVER-3', 'OFF-2']);
  const late = reads.get('LATE-1')!;
  assert.equal(late.source, 'poll');
  assert.equal(late.attempts, 4);
  assert.ok(late.read_at! - due >= 3 * RETRY_MS && late.read_at! - due < 3 * RETRY_MS + 2 * MIN, `read ${(late.read_at! - due) / MIN} min after`);
  const off = reads.get('OFF-2')!;
  assert.deepEqual([off.source, off.read_at! - due, off.counters.page_count], ['nearest', -3 * HOUR, 5000]);
  assert.equal(off.attempts, 48, 'polled every 30 minutes all day');
  const never = reads.get('NEVER-3')!;
  assert.deepEqual([never.source, never.read_at, never.counters], ['missing', null, {}]);
  // Retries read only the printers still owed, from targets every 30 minutes.
  const retries = r.polls.filter((p) => !p.first);
  assert.ok(retries.every((p) => !p.serials.includes('NEW-4') && !(p.t > due + 3 * RETRY_MS + MIN && p.serials.includes('LATE-1'))));
  for (let i = 1; i < retries.length; i++) assert.ok(Math.abs(retries[i].t - retries[i - 1].t - RETRY_MS) <= MIN, `retry ${i}`);
});

test('a time-zone change moves the due time of the period not yet read; a period read is not read again', async () => {
  // Day 1 at 00:00: in New York that is 04:00 UTC on November 1st, in Tokyo 15:00 UTC on October 31st.
  const settings: BillingSettings = { enabled: true, day: 1, time: '00:00', time_zone: 'America/New_York' };
  const r = rig(at('2026-10-31T12:00:00Z'), settings, [{ serial: 'TZ-1', created_at: 0 }]);
  await r.run(at('2026-10-31T14:30:00Z'), MIN);
  assert.deepEqual(r.readsOf('2026-11'), []);
  settings.time_zone = 'Asia/Tokyo';
  await r.run(at('2026-10-31T16:00:00Z'), MIN);
  const [read] = r.readsOf('2026-11');
  assert.equal(iso(read.due_at), '2026-10-31T15:00:00.000Z');
  assert.ok(read.read_at! >= read.due_at && read.read_at! - read.due_at < 2 * MIN);
  settings.time_zone = 'America/New_York';
  await r.run(at('2026-11-02T00:00:00Z'), 5 * MIN);
  assert.equal(r.readsOf('2026-11').length, 1);
  assert.equal(r.polls.length, 1, 'no second read of November after the zone went back');
  // Switched off: nothing is read, however long the clock runs.
  settings.enabled = false;
  await r.run(at('2026-12-03T00:00:00Z'), HOUR);
  assert.equal(r.polls.length, 1);
});
