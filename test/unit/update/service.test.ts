// The agent's side of updates (update/service.ts, download.ts, manifest.ts, source.ts) against a
// real loopback HTTP update source and a real SQLite file. RAUC itself needs an A/B disk: here a
// stand-in (StandInRauc, below) plays its part, and the boot test (scripts/boot-test.sh) runs the
// same code against the real RAUC in the VM.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { openDatabase } from '../../../src/store/db.js';
import { createLogger, LogRing } from '../../../src/log/logger.js';
import { EventBus } from '../../../src/events/bus.js';
import { UpdateService, REBOOT_REQUEST, type UpdateServiceOptions } from '../../../src/update/service.js';
import type { UpdateProgress } from '../../../src/events/payloads.js';
import { urlSource } from '../../../src/update/source.js';
import { compareVersions, parseOffer } from '../../../src/update/manifest.js';
import type { BundleInfo, SystemStatus, UpdateSystem } from '../../../src/update/rauc.js';
import { versionInfo } from '../../../src/shared/version.js';

const running = versionInfo().version;
const newer = (() => {
  const [a, b, c] = running.split(/[.+-]/).map(Number);
  return `${a}.${b}.${c + 1}`;
})();

/** Stands in for RAUC (which needs the appliance's A/B disk): records what the agent asks of it. */
class StandInRauc implements UpdateSystem {
  booted = 'A';
  installed: string[] = [];
  inspected: string[] = [];
  refuse?: string;
  bundleInfo?: BundleInfo;
  unsupported() {
    return undefined;
  }
  async status(): Promise<SystemStatus> {
    return {
      compatible: 'printbox-amd64',
      booted: this.booted,
      slots: [
        { name: 'rootfs.0', bootname: 'A', state: this.booted === 'A' ? 'booted' : 'inactive' },
        { name: 'rootfs.1', bootname: 'B', state: this.booted === 'B' ? 'booted' : 'inactive' },
      ],
    };
  }
  async inspect(bundle: string): Promise<BundleInfo> {
    this.inspected.push(readFileSync(bundle).subarray(0, 16).toString('hex'));
    if (this.refuse) throw new Error(this.refuse);
    return this.bundleInfo ?? { compatible: 'printbox-amd64', version: newer };
  }
  async install(bundle: string, onProgress: (p: number, m: string) => void) {
    onProgress(0, 'Installing');
    this.installed.push(createHash('sha256').update(readFileSync(bundle)).digest('hex'));
    onProgress(100, 'Installing done.');
  }
}

/** A loopback update source: a manifest and a bundle, with Range support and faults on demand. */
async function startSource(bundle: Buffer) {
  const state = {
    manifest: {} as Record<string, unknown>,
    cutAfter: 0, // > 0: the next bundle response stops after this many bytes
    extra: 0, // bytes sent beyond the bundle (a source that sends too much)
    ranges: [] as string[],
    served: 0,
  };
  const server = http.createServer((req, res) => {
    if (req.url!.startsWith('/manifest.json')) {
      res.setHeader('Content-Type', 'application/json');
      return res.end(JSON.stringify(state.manifest));
    }
    if (req.url !== '/bundle.raucb') return res.writeHead(404).end();
    const range = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''));
    state.ranges.push(String(req.headers.range ?? ''));
    const start = range ? Number(range[1]) : 0;
    let body = Buffer.concat([bundle.subarray(start), Buffer.alloc(state.extra, 1)]);
    if (range) res.writeHead(206, { 'Content-Range': `bytes ${start}-${bundle.length - 1}/${bundle.length}`, 'Content-Length': body.length });
    else res.writeHead(200, { 'Content-Length': body.length });
    if (state.cutAfter) {
      body = body.subarray(0, state.cutAfter);
      state.cutAfter = 0;
      state.served += body.length;
      res.write(body, () => res.socket?.end()); // a clean close after these bytes: the client gets all of them
      return;
    }
    state.served += body.length;
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  after(() => server.close());
  return { state, base };
}

function setUp(opts: { keepFreeBytes?: number; manifestUrl?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-update-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(join(dir, 'printbox.db'));
  const events = new EventBus();
  const seen: UpdateProgress[] = [];
  events.subscribe((name, data) => name === 'update_progress' && seen.push(data as UpdateProgress));
  const system = new StandInRauc();
  const make = (sys: UpdateSystem = system, more: Partial<UpdateServiceOptions> = {}) =>
    new UpdateService({
      db,
      system: sys,
      source: () => (opts.manifestUrl ? urlSource(opts.manifestUrl, 64 * 1024 * 1024) : undefined),
      dir: join(dir, 'update'),
      maxBundleBytes: 64 * 1024 * 1024,
      keepFreeBytes: opts.keepFreeBytes ?? 0,
      events,
      log: createLogger('silent' as 'error', new LogRing()),
      now: Date.now,
      ...more,
    });
  return { dir, db, system, seen, make, updateDir: join(dir, 'update') };
}

/** Waits for the forced update to end (idle again, or asking for the reboot). */
async function settled(seen: UpdateProgress[]): Promise<UpdateProgress> {
  for (let i = 0; i < 500; i++) {
    const last = seen.at(-1);
    if (last && (last.state === 'rebooting' || (last.state === 'idle' && seen.length > 1))) return last;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the update did not end: ${JSON.stringify(seen.at(-1))}`);
}

test('versions order as semver does; manifests are checked field by field', () => {
  assert.ok(compareVersions('1.2.10', '1.2.9') > 0);
  assert.ok(compareVersions('1.0.0-rc.1', '1.0.0') < 0);
  assert.equal(compareVersions('2.0.0+build.5', '2.0.0'), 0);
  assert.throws(() => compareVersions('1.2', '1.2.0'), /not a version/);
  const base = 'https://updates.example/amd64/manifest.json';
  assert.deepEqual(parseOffer({ version: '1.0.1', url: 'b.raucb', size: 10 }, base, 100), { version: '1.0.1', url: 'https://updates.example/amd64/b.raucb', size: 10 });
  assert.equal(parseOffer({}, base, 100), undefined);
  assert.throws(() => parseOffer({ version: '1.0.1', url: 'b.raucb', size: 1000 }, base, 100), /more than this box takes/);
  assert.throws(() => parseOffer({ version: 'latest', url: 'b.raucb', size: 10 }, base, 100), /not a version/);
  assert.throws(() => parseOffer({ version: '1.0.1', url: 'file:///etc/shadow', size: 10 }, base, 100), /http or https/);
  assert.throws(() => parseOffer({ version: '1.0.1', url: 'b.raucb', size: 10, sha256: 'abc' }, base, 100), /64 hex/);
});

test('check, then force: a download cut halfway resumes with a Range request; RAUC installs it; the reboot is asked for', async () => {
  const bundle = randomBytes(3 * 1024 * 1024 + 17);
  const src = await startSource(bundle);
  const t = setUp({ manifestUrl: `${src.base}/manifest.json` });
  src.state.manifest = { version: newer, url: 'bundle.raucb', size: bundle.length, sha256: createHash('sha256').update(bundle).digest('hex') };
  const svc = t.make();
  await svc.start();
  const checked = await svc.check();
  assert.equal(checked.available_version, newer);
  assert.equal(checked.current_slot, 'A');

  src.state.cutAfter = 1024 * 1024;
  await svc.force('test');
  const first = await settled(t.seen);
  assert.equal(first.state, 'idle');
  // What had been written when the connection ended (the last chunks in flight may be lost with it).
  const kept = Number(/stopped at (\d+) of/.exec(first.error ?? '')?.[1]);
  assert.ok(kept > 0 && kept <= 1024 * 1024, first.error);
  assert.equal(t.system.installed.length, 0, 'nothing installed from a part');
  assert.match(String(svc.status().last_error), /a later attempt resumes/);

  t.seen.length = 0;
  await svc.force('test again');
  const second = await settled(t.seen);
  assert.equal(second.state, 'rebooting', JSON.stringify(t.seen.at(-1)));
  assert.deepEqual(src.state.ranges.slice(-1), [`bytes=${kept}-`], 'the second attempt asks only for the rest');
  assert.equal(src.state.served, 1024 * 1024 + bundle.length - kept, 'nothing before the kept bytes was sent again');
  assert.deepEqual(t.system.installed, [createHash('sha256').update(bundle).digest('hex')]);
  assert.equal(readFileSync(join(t.updateDir, REBOOT_REQUEST), 'utf8'), `${newer}\n`);
  assert.deepEqual(readdirSync(t.updateDir), [REBOOT_REQUEST], 'the bundle is removed once installed');
  const downloads = t.seen.filter((p) => p.state === 'downloading');
  assert.ok(downloads.length >= 2 && downloads.length <= 110, `progress per percent, not per packet: ${downloads.length}`);
  assert.ok(t.seen.some((p) => p.state === 'installing' && p.message === 'Installing done.'));

  // The next start on the other slot: the update came up. On the same slot: it did not.
  t.system.booted = 'B';
  const later = t.make();
  await later.start();
  assert.equal(existsSync(join(t.updateDir, REBOOT_REQUEST)), false, 'the request is gone after the reboot');
  // This process runs `running`, not `newer`: the agent reports the slot it expected the new version in.
  assert.match(String(later.status().last_error), new RegExp(`update to ${newer.replace(/\./g, '\\.')} ended in slot B`));
});

/** An update installed into slot B and the reboot asked for: the box's state before it reboots. */
async function installedAwaitingReboot() {
  const bundle = randomBytes(64 * 1024);
  const src = await startSource(bundle);
  const t = setUp({ manifestUrl: `${src.base}/manifest.json` });
  src.state.manifest = { version: newer, url: `${src.base}/bundle.raucb`, size: bundle.length };
  const svc = t.make();
  await svc.start();
  await svc.force('test');
  assert.equal((await settled(t.seen)).state, 'rebooting');
  return t;
}

test('an install that did not come up: the next start on the old slot says so, once', async () => {
  const t = await installedAwaitingReboot();
  const back = t.make(); // booted A again: the new slot never served
  await back.start();
  const s = back.status();
  assert.match(String(s.last_error), new RegExp(`the update to ${newer.replace(/\./g, '\\.')} did not come up in slot B.*slot A`));
  assert.equal(s.current_slot, 'A');
  const again = t.make();
  await again.start();
  assert.equal(again.status().last_error, s.last_error, 'kept, not made again');
});

/** RAUC before D-Bus is up on a booting box: `rauc status` fails the first `down` times it is asked. */
class RaucNotYetUp extends StandInRauc {
  asked = 0;
  constructor(public down: number) {
    super();
  }
  override async status(): Promise<SystemStatus> {
    this.asked++;
    if (this.down-- > 0) throw new Error('rauc status: Error retrieving slot status via D-Bus: error creating proxy: Could not connect: No such file or directory');
    return super.status();
  }
}

test('RAUC not answering at start (D-Bus not up yet): the slots are asked again, and the interrupted install is reported once it answers', async () => {
  const t = await installedAwaitingReboot();
  // Power cut during the install: the box comes up in slot A again, before D-Bus.
  const rauc = new RaucNotYetUp(2);
  const back = t.make(rauc, { slotsRetryMs: [20, 40] });
  await back.start();
  assert.equal(back.status().current_slot, null, 'not read yet');
  assert.equal(back.status().last_error, null, 'nothing judged before RAUC answered');
  for (let i = 0; back.status().current_slot === null; i++) {
    assert.ok(i < 1000, `the slots were never read again (asked ${rauc.asked} times)`);
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(rauc.asked, 3);
  assert.match(String(back.status().last_error), new RegExp(`the update to ${newer.replace(/\./g, '\\.')} did not come up in slot B.*slot A`));

  // Never answering: asked on the waits' schedule, the last repeating, and said twice: at the first
  // failure and when the waits reach their longest.
  const warns: string[] = [];
  const broken = new RaucNotYetUp(Infinity);
  const log = Object.assign(createLogger('silent' as 'error', new LogRing()), { warn: (_o: object, msg: string) => void warns.push(msg) });
  const waiting = t.make(broken, { slotsRetryMs: [5, 5, 5, 30], log });
  await waiting.start();
  for (let i = 0; broken.asked < 7; i++) {
    assert.ok(i < 1000, `asked only ${broken.asked} times`);
    await new Promise((r) => setTimeout(r, 10));
  }
  waiting.stop();
  assert.deepEqual(warns, ['update slots not read: asking again', 'update slots still not read: RAUC does not answer; asking less often']);

  // Stopped (the agent shutting down): not asked again.
  const never = new RaucNotYetUp(Infinity);
  const stopped = t.make(never, { slotsRetryMs: [5] });
  await stopped.start();
  stopped.stop();
  const asked = never.asked;
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(never.asked, asked);
});

test('refusals change nothing: older version, wrong compatible, RAUC refusing the signature, a source sending too much, no room', async () => {
  const bundle = randomBytes(256 * 1024);
  const src = await startSource(bundle);
  const t = setUp({ manifestUrl: `${src.base}/manifest.json` });
  const svc = t.make();
  await svc.start();
  const attempt = async () => {
    t.seen.length = 0;
    await svc.force('test');
    return settled(t.seen);
  };

  src.state.manifest = { version: '0.0.1', url: 'bundle.raucb', size: bundle.length };
  assert.match((await attempt()).error ?? '', /older than the running/);
  assert.equal(src.state.served, 0, 'nothing downloaded for an older version');

  src.state.manifest = { version: newer, url: 'bundle.raucb', size: bundle.length };
  t.system.bundleInfo = { compatible: 'printbox-arm64', version: newer };
  assert.match((await attempt()).error ?? '', /the bundle is for printbox-arm64, this box is printbox-amd64: refused/);

  t.system.bundleInfo = undefined;
  t.system.refuse = 'RAUC refused the bundle: signature verification failed';
  assert.match((await attempt()).error ?? '', /signature verification failed/);
  assert.deepEqual(readdirSync(t.updateDir), [], 'a bundle RAUC refuses is removed');
  t.system.refuse = undefined;

  src.state.extra = 10;
  src.state.manifest = { version: newer, url: 'bundle.raucb', size: bundle.length - 5 };
  assert.match((await attempt()).error ?? '', /sent more than the manifest's/);
  src.state.extra = 0;

  const tight = setUp({ manifestUrl: `${src.base}/manifest.json`, keepFreeBytes: Number.MAX_SAFE_INTEGER });
  const svc2 = tight.make();
  await svc2.start();
  src.state.manifest = { version: newer, url: 'bundle.raucb', size: bundle.length };
  await svc2.force('test');
  assert.match((await settled(tight.seen)).error ?? '', /not enough space for the bundle/);

  assert.equal(t.system.installed.length + tight.system.installed.length, 0, 'nothing installed');
  assert.equal(existsSync(join(t.updateDir, REBOOT_REQUEST)), false);
});

test('no source, a bad manifest, a second force while one runs: clear errors with status codes', async () => {
  const none = setUp();
  const svc = none.make();
  await svc.start();
  await assert.rejects(svc.check(), (e: { status?: number; message: string }) => e.status === 409 && /no update source/.test(e.message));

  const bundle = randomBytes(1024);
  const src = await startSource(bundle);
  const t = setUp({ manifestUrl: `${src.base}/manifest.json` });
  const s2 = t.make();
  await s2.start();
  src.state.manifest = { version: newer, size: 3 } as Record<string, unknown>;
  await assert.rejects(s2.check(), (e: { status?: number; message: string }) => e.status === 502 && /has no bundle url/.test(e.message));
  assert.match(String(s2.status().last_error), /has no bundle url/);

  src.state.manifest = { version: newer, url: 'bundle.raucb', size: bundle.length };
  await s2.force('first');
  await assert.rejects(s2.force('second'), (e: { status?: number }) => e.status === 409);
  await settled(t.seen);

  const off = setUp({ manifestUrl: `${src.base}/manifest.json` });
  const unsupported = off.make(Object.assign(new StandInRauc(), { unsupported: () => 'updates need RAUC' }));
  await unsupported.start();
  await assert.rejects(unsupported.force('x'), (e: { status?: number }) => e.status === 501);
  assert.equal(unsupported.status().supported, false);
});
