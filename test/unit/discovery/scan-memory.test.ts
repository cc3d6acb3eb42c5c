// A scan ends with the collection that gives back the pages its garbage took, as a polling round
// does (shared/release-memory.ts; the unit's --expose-gc): five scans of 50 printers left the agent at
// 106 MiB without it, 93-94 with it (docs/performance.md). A real DiscoveryService in a child
// process, on a real SQLite file, scanning nothing: gc() is wrapped to count its calls.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const module = (path: string) => JSON.stringify(new URL(path, import.meta.url).href);

function scanInChild(flags: string[], dir: string): { releases: number; state: string } {
  const script = `
    const { pino } = await import('pino');
    const { openDatabase } = await import(${module('../../../src/store/db.js')});
    const { DeviceStore } = await import(${module('../../../src/store/devices.js')});
    const { SettingsStore } = await import(${module('../../../src/settings/store.js')});
    const { EventBus } = await import(${module('../../../src/events/bus.js')});
    const { DiscoveryService } = await import(${module('../../../src/discovery/service.js')});
    let releases = 0;
    const gc = globalThis.gc;
    if (gc) globalThis.gc = (options) => { if (options?.flavor === 'last-resort') releases++; return gc(options); };
    const db = openDatabase(${JSON.stringify(join(dir, 'printbox.db'))});
    const settings = new SettingsStore(db, { subnet_scan: false, auto_discover: false, allowed_ranges: [] });
    const discovery = new DiscoveryService({ devices: new DeviceStore(db), settings, events: new EventBus(), log: pino({ level: 'silent' }), now: Date.now });
    const { state } = discovery.start();
    await discovery.settle();
    await discovery.stop();
    db.close();
    console.log(JSON.stringify({ releases, state: state.state }));`;
  const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8', cwd: process.cwd() });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { releases: number; state: string };
}

test("a scan's end gives back the heap pages its garbage took (the unit's --expose-gc)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-scan-memory-'));
  try {
    const withGc = scanInChild(['--expose-gc'], dir);
    assert.deepEqual(withGc, { releases: 1, state: 'done' });
    rmSync(join(dir, 'printbox.db'), { force: true });
    const without = scanInChild([], dir);
    assert.deepEqual(without, { releases: 0, state: 'done' }, 'without the flag the scan runs and nothing is collected');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
