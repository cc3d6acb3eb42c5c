// The agent's memory limits per board: the systemd generator
// rootfs-overlay/usr/lib/systemd/system-generators/printbox-agent-memory, run as PID 1 runs it
// (an output directory) on made-up /proc/meminfo files of the boards the card boots, and its
// drop-in read together with systemd/printbox-agent.service by systemd-analyze.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { repoRoot } from '../kit/agent.js';

const generator = join(repoRoot, 'rootfs-overlay/usr/lib/systemd/system-generators/printbox-agent-memory');
const unitFile = join(repoRoot, 'systemd/printbox-agent.service');
const dir = mkdtempSync(join(tmpdir(), 'printbox-memory-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Limits { high: number; max: number; heap: number; dropIn: string }
const mib = (v: string) => {
  const m = /^(\d+)M$/.exec(v);
  assert.ok(m, `${v} in MiB`);
  return Number(m[1]);
};

let n = 0;
/** Runs the generator on a meminfo with this MemTotal (kB); the drop-in it wrote, or undefined. */
function generate(meminfo: string): { limits?: Limits; stderr: string; status: number | null; out: string } {
  const work = join(dir, String(n++));
  mkdirSync(work);
  writeFileSync(join(work, 'meminfo'), meminfo);
  const out = join(work, 'normal');
  const r = spawnSync('sh', [generator, out, join(work, 'early'), join(work, 'late')], { env: { ...process.env, PRINTBOX_MEMINFO: join(work, 'meminfo') }, encoding: 'utf8' });
  const file = join(out, 'printbox-agent.service.d/50-printbox-memory.conf');
  if (!existsSync(file)) return { stderr: r.stderr, status: r.status, out };
  const dropIn = readFileSync(file, 'utf8');
  const get = (key: string) => new RegExp(`^${key}=(\\S+)$`, 'm').exec(dropIn)?.[1] ?? '';
  return {
    limits: { high: mib(get('MemoryHigh')), max: mib(get('MemoryMax')), heap: Number(get('Environment=PRINTBOX_HEAP_MB')), dropIn },
    stderr: r.stderr,
    status: r.status,
    out,
  };
}
const meminfo = (kib: number) => `MemTotal:       ${kib} kB\nMemFree:        ${Math.floor(kib / 3)} kB\nMemAvailable:   ${Math.floor(kib / 2)} kB\n`;

// MemTotal as the kernel reports it: the RAM less the firmware's GPU memory and the kernel's own.
const BOARDS: [string, number, Omit<Limits, 'dropIn'>][] = [
  ['Zero 2 W (512 MB)', 437_000, { high: 168, max: 192, heap: 64 }],
  ['a 512 MB board with little GPU memory', 500_000, { high: 168, max: 192, heap: 64 }],
  ['just under 768 MiB', 786_431, { high: 168, max: 192, heap: 64 }],
  ['at 768 MiB', 786_432, { high: 224, max: 256, heap: 96 }],
  ['Pi 3 B (1 GB)', 948_000, { high: 224, max: 256, heap: 96 }],
  ['the boot test VM (1,024 MiB)', 1_003_000, { high: 224, max: 256, heap: 96 }],
  ['Pi 4 / Pi 5, 2 GB', 1_900_000, { high: 448, max: 512, heap: 128 }],
  ['Pi 4 / Pi 5, 4 GB', 3_900_000, { high: 896, max: 1024, heap: 256 }],
  ['Pi 4 / Pi 5, 8 GB', 8_000_000, { high: 896, max: 1024, heap: 256 }],
  ['Pi 5, 16 GB', 16_300_000, { high: 896, max: 1024, heap: 256 }],
];

test('the limits follow the board: 512 MB, 1 GB, 2 GB, 4 GB and more', () => {
  let last: Limits | undefined;
  for (const [board, kib, want] of BOARDS) {
    const g = generate(meminfo(kib));
    assert.equal(g.status, 0, g.stderr);
    assert.ok(g.limits, `${board}: a drop-in`);
    const { dropIn, ...got } = g.limits;
    assert.deepEqual(got, want, board);
    assert.match(dropIn, new RegExp(`^# MemTotal ${Math.floor(kib / 1024)} MiB`, 'm'), `${board}: says what it read`);
    // What must hold for any board: the kernel reclaims before it kills, the heap fits well
    // inside, and at least half the board is left to the rest of the box.
    assert.ok(got.high < got.max, `${board}: MemoryHigh below MemoryMax`);
    assert.ok(got.heap * 2 <= got.high, `${board}: the heap at most half of MemoryHigh`);
    assert.ok(got.max * 1024 <= kib / 2, `${board}: MemoryMax at most half of MemTotal`);
    if (last) assert.ok(got.max >= last.max && got.heap >= last.heap, `${board}: never less than a smaller board`);
    last = g.limits;
  }
});

test('the unit itself carries the 1 GB board\'s figures (the limits where the generator did not run)', () => {
  const unit = readFileSync(unitFile, 'utf8');
  const oneGb = generate(meminfo(948_000)).limits!;
  assert.equal(/^MemoryMax=(\S+)$/m.exec(unit)?.[1], `${oneGb.max}M`);
  assert.equal(/^MemoryHigh=(\S+)$/m.exec(unit)?.[1], `${oneGb.high}M`);
  assert.equal(/^Environment=PRINTBOX_HEAP_MB=(\d+)$/m.exec(unit)?.[1], String(oneGb.heap));
  assert.match(unit, /^ExecStart=\S+\/node .*--max-old-space-size=\$\{PRINTBOX_HEAP_MB\} /m, 'the heap flag takes the variable');
});

test('no MemTotal (or no file): no drop-in, a message, and the boot goes on', () => {
  for (const text of ['MemFree: 1000 kB\n', 'MemTotal: lots\n', '']) {
    const g = generate(text);
    assert.equal(g.status, 0, 'a generator that fails would only be logged, but it need not');
    assert.equal(g.limits, undefined);
    assert.match(g.stderr, /no MemTotal in .*: the agent keeps its unit's limits/);
  }
  const r = spawnSync('sh', [generator, join(dir, 'none')], { env: { ...process.env, PRINTBOX_MEMINFO: join(dir, 'missing') }, encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.ok(!existsSync(join(dir, 'none/printbox-agent.service.d')));
});

test('systemd reads the unit with the drop-in without a complaint; the drop-in sets memory only', () => {
  // A root with the units, the drop-in where PID 1 reads generated ones, and a stand-in for Node.
  const root = join(dir, 'root');
  mkdirSync(join(root, 'usr/lib/systemd/system'), { recursive: true });
  cpSync(join(repoRoot, 'systemd'), join(root, 'usr/lib/systemd/system'), { recursive: true });
  mkdirSync(join(root, 'opt/printbox/node/bin'), { recursive: true });
  copyFileSync('/bin/true', join(root, 'opt/printbox/node/bin/node'));
  const g = generate(meminfo(437_000));
  mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
  cpSync(join(g.out, 'printbox-agent.service.d'), join(root, 'etc/systemd/system/printbox-agent.service.d'), { recursive: true });
  const r = spawnSync('systemd-analyze', ['verify', `--root=${root}`, 'printbox-agent.service'], { cwd: root, encoding: 'utf8', env: { ...process.env, SYSTEMD_LOG_COLOR: '0' } });
  assert.equal(r.error, undefined, 'systemd-analyze runs');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout + r.stderr, '', 'no complaint about the unit or the drop-in');
  const settings = g.limits!.dropIn.split('\n').filter((l) => l && !l.startsWith('#'));
  assert.deepEqual(settings.map((l) => l.split('=')[0]), ['[Service]', 'MemoryHigh', 'MemoryMax', 'Environment'], 'nothing of the hardening touched');
});
