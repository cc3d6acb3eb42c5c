// The agent's memory under repeated scans: a real agent process scans 50 simulated
// printers (snmpsim, real recordings) plus 50 silent addresses on loopback, several times in a
// row; its RSS and V8 heap figures are read after each scan. Run once with the unit's Node flags
// and once without, to show what the flags buy. Everything on 127.89.0.0/24.
//   npm run build && node dist/scripts/bench/memory.js [--scans 5]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixturePath, startSnmpSim } from '../../test/kit/snmpsim.js';
import { freePort, rssMiB, unitEnvironment, unitNodeFlags } from './process.js';
import { call } from './https-call.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const unitFlags = unitNodeFlags();
const f = process.argv.indexOf('--flags');
const AGENT_NODE_FLAGS = f > 0 ? process.argv[f + 1].split(/\s+/).filter(Boolean) : unitFlags;
const i = process.argv.indexOf('--scans');
const SCANS = i > 0 ? Number(process.argv[i + 1]) : 5;
const RECORDINGS = ['brother', 'epson_cw', 'epson_sc', 'kyocera_cs4053', 'kyocera_p2040'].map((n) => fixturePath(`printmaster/${n}.snmprec`));
const printers = Array.from({ length: 50 }, (_, k) => `127.89.0.${k + 1}`);

async function run(label: string, nodeFlags: string[], simPort: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-mem-bench-'));
  const port = await freePort();
  const config = join(dir, 'agent.toml');
  writeFileSync(config, `data_dir = "${dir}/data"\n[discovery]\nmdns_enabled = false\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${port}\nhttp_port = 0\n[web.auth]\nmode = "local"\n[log]\nlevel = "warn"\n`);
  const agent: ChildProcess = spawn(process.execPath, [...nodeFlags, cli, 'serve', '--config', config], { stdio: 'ignore', env: { ...process.env, ...(nodeFlags.length ? unitEnvironment() : {}) } });
  try {
    for (let k = 0; k < 200 && (await call(port, 'GET', '/api/version').catch(() => ({ status: 0 }))).status !== 200; k++) await new Promise((r) => setTimeout(r, 100));
    const s = await call(port, 'POST', '/settings', {
      discovery: { manual_ranges: true, ranges_text: '127.89.0.1-100', allowed_ranges: ['127.89.0.0/24'], snmp_timeout_ms: 1000, discover_concurrency: 64 },
      snmp: { port: simPort, communities: ['public'] },
    });
    if (s.status !== 200) throw new Error(`settings: ${s.status} ${s.text}`);
    const rss: string[] = [`start ${rssMiB(agent.pid!).toFixed(0)}`];
    for (let n = 1; n <= SCANS; n++) {
      const started = await call(port, 'POST', '/discover');
      if (started.status !== 202) throw new Error(`discover: ${started.status} ${started.text}`);
      for (;;) {
        await new Promise((r) => setTimeout(r, 250));
        const st = JSON.parse((await call(port, 'GET', '/discover')).text || '{}') as { state?: string };
        if (st.state !== 'running') break;
      }
      rss.push(`${n}: ${rssMiB(agent.pid!).toFixed(0)}`);
    }
    const found = (JSON.parse((await call(port, 'GET', '/devices/discovered')).text) as unknown[]).length;
    console.log(`| ${label} | ${found} | ${rss.join(', ')} |`);
  } finally {
    agent.kill('SIGTERM');
    await new Promise((r) => agent.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

const sim = await startSnmpSim({ endpoints: printers.map((address, k) => ({ address, recording: RECORDINGS[k % RECORDINGS.length] })) });
try {
  console.log(`node ${process.version}; ${SCANS} scans of 50 printers + 50 silent addresses; RSS in MiB after each`);
  console.log('| node flags | devices found (distinct serials) | RSS (MiB) |');
  console.log('|---|---|---|');
  await run('none', [], sim.port);
  if (AGENT_NODE_FLAGS.length) await run(AGENT_NODE_FLAGS.join(' '), AGENT_NODE_FLAGS, sim.port);
} finally {
  await sim.stop();
}
