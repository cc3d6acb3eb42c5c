// The Printers page's list: GET /api/printers beside the contract's /devices/list, on one
// agent with 2,000 saved printers (recorded printers' PrinterInfo, a newest reading each), in one
// run, interleaved. Requests are sent one at a time on one keep-alive connection (what a page does,
// and light on a shared machine): p50/p99 latency, the agent's CPU per request (from /proc) and the
// body's size, for each request the page could make.
//   npm run build && node dist/scripts/bench/printers-list.js [--devices 2000] [--requests 100] [--rounds 3] [--flags unit|none]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { device, metrics, ndjson } from '../../test/kit/seed.js';
import { readSnmprec } from '../../test/kit/snmprec.js';
import { parsePrinter } from '../../src/snmp/parse/printer.js';
import { cpuMs, freePort, unitEnvironment, unitNodeFlags } from './process.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const DEVICES = Number(option('devices') ?? 2000);
const REQUESTS = Number(option('requests') ?? 100);
const ROUNDS = Number(option('rounds') ?? 3);
const UNIT_FLAGS = (option('flags') ?? 'unit') === 'unit';
const nodeFlags = UNIT_FLAGS ? unitNodeFlags() : [];
const env = { ...process.env, ...(UNIT_FLAGS ? unitEnvironment() : {}) };
const serialOf = (i: number) => `BENCH${String(i).padStart(5, '0')}`;

/** DEVICES saved printers, each a recorded printer's PrinterInfo (test/fixtures/snmp) and a newest reading. */
function fleet(now: number): string {
  const root = join(here, '../../../test/fixtures/snmp');
  const printers = readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(root, d.name)).filter((f) => f.endsWith('.snmprec')).map((f) => join(root, d.name, f)))
    .sort()
    .map((file) => parsePrinter(readSnmprec(file), '127.0.0.1', new Date(now)));
  const lines: object[] = [];
  for (let i = 0; i < DEVICES; i++) {
    const p = printers[i % printers.length];
    const serial = serialOf(i);
    const ip = `127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    const info = { ...p.info, ip, serial };
    lines.push(device(serial, ip, now, {
      manufacturer: info.manufacturer, model: info.model, hostname: serial.toLowerCase(), source_type: 'snmp', is_saved: true,
      location: `Floor ${i % 5}`, asset_number: `A-${i}`, consumables: info.consumables, status_messages: info.status_messages, printer_info: info,
    }));
    lines.push(metrics(serial, 'raw', now - 60_000, { page_count: 7000 + i, toner_levels: p.metrics.toner_levels }));
  }
  return ndjson(lines);
}

const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
function get(port: number, path: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port, path, agent: keepAlive, headers: { Accept: 'application/json' } }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function waitReady(port: number, deadline: number): Promise<void> {
  for (;;) {
    const ok = await get(port, '/api/version').then((r) => r.status === 200, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error('the agent did not answer');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

const dir = mkdtempSync(join(tmpdir(), 'printbox-list-bench-'));
let agent: ChildProcess | undefined;
try {
  const port = await freePort();
  const config = join(dir, 'agent.toml');
  writeFileSync(config, `data_dir = "${dir}/data"\n[discovery]\nmdns_enabled = false\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${port}\nhttp_port = 0\n[web.auth]\nmode = "local"\nallow_local_admin = true\n[log]\nlevel = "warn"\n`);
  writeFileSync(join(dir, 'fleet.ndjson'), fleet(Date.now()));
  const imp = spawnSync(process.execPath, [cli, 'import', join(dir, 'fleet.ndjson'), '--config', config]);
  if (imp.status !== 0) throw new Error(`import failed: ${imp.stderr}`);
  agent = spawn(process.execPath, [...nodeFlags, cli, 'serve', '--config', config], { stdio: 'ignore', env });
  await waitReady(port, Date.now() + 60_000);

  const last = serialOf(DEVICES - 1);
  const endpoints: [string, string][] = [
    ['/api/printers (first page, 200)', '/api/printers'],
    ['/api/printers?limit=50&forecast=true (the UI\'s first page)', '/api/printers?limit=50&forecast=true'],
    ['/api/printers?search=<last serial>', `/api/printers?search=${last}`],
    ['/api/printers?filter=alerts', '/api/printers?filter=alerts'],
    ['/devices/list (all, the contract\'s)', '/devices/list'],
  ];
  const samples = new Map(endpoints.map(([name]) => [name, { ms: [] as number[], cpu: 0, n: 0, bytes: 0 }]));
  // Warm-up (JIT, page cache), not counted.
  for (const [, path] of endpoints) for (let i = 0; i < 10; i++) await get(port, path);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, path] of endpoints) {
      const s = samples.get(name)!;
      const cpu0 = cpuMs(agent.pid!);
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = process.hrtime.bigint();
        const res = await get(port, path);
        s.ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
        s.bytes = res.bytes;
      }
      s.cpu += cpuMs(agent.pid!) - cpu0;
      s.n += REQUESTS;
    }
  }
  console.log(`node ${process.version} ${nodeFlags.join(' ') || '(no flags)'}; ${DEVICES} saved printers; ${ROUNDS} rounds of ${REQUESTS} requests each, one at a time, endpoints interleaved`);
  console.log('| request | p50 ms | p99 ms | agent CPU ms/request | KiB |');
  console.log('|---|---|---|---|---|');
  for (const [name] of endpoints) {
    const s = samples.get(name)!;
    const sorted = [...s.ms].sort((a, b) => a - b);
    console.log(`| ${name} | ${pct(sorted, 50).toFixed(1)} | ${pct(sorted, 99).toFixed(1)} | ${(s.cpu / s.n).toFixed(2)} | ${(s.bytes / 1024).toFixed(1)} |`);
  }
} finally {
  agent?.kill('SIGTERM');
  keepAlive.destroy();
  rmSync(dir, { recursive: true, force: true });
}
