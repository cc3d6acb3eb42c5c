// CSV exports: the printers list of 2,000 saved printers and a year of one printer's
// daily history, downloaded from one agent over HTTPS with `format=csv`, each by a fast reader
// and by a slow one (10 ms after each chunk it is given, a phone on a poor link). Time to the last byte, the body's
// size, and the agent's RSS sampled every 10 ms during the download against its RSS before it
// (the export's own memory: streamed, it must not grow with the file or with a slow reader).
//   npm run build && node dist/scripts/bench/csv-export.js [--devices 2000] [--rounds 3] [--flags unit|none]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DAY, device, metrics, ndjson } from '../../test/kit/seed.js';
import { freePort, unitEnvironment, unitNodeFlags } from './process.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const DEVICES = Number(option('devices') ?? 2000);
const ROUNDS = Number(option('rounds') ?? 3);
const UNIT_FLAGS = (option('flags') ?? 'unit') === 'unit';
const nodeFlags = UNIT_FLAGS ? unitNodeFlags() : [];
const env = { ...process.env, ...(UNIT_FLAGS ? unitEnvironment() : {}) };
const serialOf = (i: number) => `BENCH${String(i).padStart(5, '0')}`;

/** DEVICES saved printers with a newest reading each; the first has a year of daily rows too. */
function fleet(now: number): string {
  const lines: object[] = [];
  for (let i = 0; i < DEVICES; i++) {
    const serial = serialOf(i);
    const ip = `127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    lines.push(device(serial, ip, now, {
      manufacturer: 'Kyocera', model: 'ECOSYS M5526cdw', hostname: serial.toLowerCase(), source_type: 'snmp', is_saved: true,
      location: `Floor ${i % 5}, room "${i % 40}"`, asset_number: `A-${i}`, mac_address: '00:11:22:33:44:55',
    }));
    lines.push(metrics(serial, 'raw', now - 60_000, {
      page_count: 7000 + i, mono_pages: 5000 + i, color_pages: 2000, scan_count: 300, toner_levels: { black: 50, cyan: 40, magenta: 30, yellow: 20 },
    }));
  }
  for (let d = 31; d <= 365; d++) {
    lines.push(metrics(serialOf(0), 'daily', Math.floor((now - d * DAY) / DAY) * DAY, { page_count: 100_000 - d * 50, toner_levels: { black: d % 100 } }));
  }
  return ndjson(lines);
}

function rssKiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

/** Downloads `path`; a slow reader pauses 10 ms after each chunk it is given. */
function download(port: number, path: string, slow: boolean): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    https.get({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`${path}: ${res.statusCode}`));
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (slow) {
          res.pause();
          setTimeout(() => res.resume(), 10);
        }
      });
      res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, bytes }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function waitReady(port: number, deadline: number): Promise<void> {
  for (;;) {
    const ok = await download(port, '/api/version', false).then(() => true, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error('the agent did not answer');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'printbox-csv-bench-'));
let agent: ChildProcess | undefined;
try {
  const port = await freePort();
  const config = join(dir, 'agent.toml');
  writeFileSync(config, `data_dir = "${dir}/data"\n[discovery]\nmdns_enabled = false\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${port}\nhttp_port = 0\n[web.auth]\nmode = "local"\nallow_local_admin = true\n[log]\nlevel = "warn"\n`);
  const now = Date.now();
  writeFileSync(join(dir, 'fleet.ndjson'), fleet(now));
  const imp = spawnSync(process.execPath, [cli, 'import', join(dir, 'fleet.ndjson'), '--config', config]);
  if (imp.status !== 0) throw new Error(`import failed: ${imp.stderr}`);
  agent = spawn(process.execPath, [...nodeFlags, cli, 'serve', '--config', config], { stdio: 'ignore', env });
  await waitReady(port, Date.now() + 60_000);
  const since = new Date(now - 366 * DAY).toISOString();
  const exports: [string, string][] = [
    [`printers list, ${DEVICES} printers`, '/api/printers?filter=all&format=csv'],
    ['one printer, a year of daily rows', `/api/devices/meter-history?serial=${serialOf(0)}&tier=daily&since=${since}&format=csv`],
  ];
  for (const [, path] of exports) await download(port, path, false); // warm-up: JIT, page cache
  console.log(`node ${process.version} ${nodeFlags.join(' ') || '(no flags)'}; ${ROUNDS} rounds; RSS sampled every 10 ms`);
  console.log('| export | reader | ms (median) | KiB | agent RSS before, MiB | peak during, MiB |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, path] of exports) {
    for (const slow of [false, true]) {
      const ms: number[] = [];
      let bytes = 0;
      let before = 0;
      let peak = 0;
      for (let r = 0; r < ROUNDS; r++) {
        global.gc?.();
        before = Math.max(before, rssKiB(agent.pid!));
        const timer = setInterval(() => (peak = Math.max(peak, rssKiB(agent!.pid!))), 10);
        const d = await download(port, path, slow);
        clearInterval(timer);
        ms.push(d.ms);
        bytes = d.bytes;
      }
      ms.sort((a, b) => a - b);
      console.log(`| ${name} | ${slow ? 'slow (10 ms a chunk)' : 'fast'} | ${ms[ms.length >> 1].toFixed(0)} | ${(bytes / 1024).toFixed(0)} | ${(before / 1024).toFixed(1)} | ${(peak / 1024).toFixed(1)} |`);
    }
  }
} finally {
  agent?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
