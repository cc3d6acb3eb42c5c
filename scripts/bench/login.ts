// Sign-in costs: the scrypt hash alone, and over HTTPS against a real agent in password
// mode: a successful sign-in (hash + session), a refused request (no credential: the gate's 401),
// a refused path form (`//x`: 400 before the gate) and the public /api/version, for comparison.
//   npm run build && node dist/scripts/bench/login.js [--iterations N]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashPassword } from '../../src/auth/passwords.js';
import { freePort } from './process.js';

const cli = join(dirname(fileURLToPath(import.meta.url)), '../../src/cli.js');
const arg = process.argv.indexOf('--iterations');
const N = arg > 0 ? Number(process.argv[arg + 1]) : 100;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const report = (name: string, ms: number[]) =>
  console.log(`${name.padEnd(34)} p50 ${pct(ms, 50).toFixed(2).padStart(7)} ms   p99 ${pct(ms, 99).toFixed(2).padStart(7)} ms   (n=${ms.length})`);

async function timeIt(fn: () => Promise<unknown>, n = N): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}


function request(port: number, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path, method: body ? 'POST' : 'GET', rejectUnauthorized: false, agent: false,
        headers: body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {} },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'printbox-login-bench-'));
const port = await freePort();
const config = join(dir, 'agent.toml');
writeFileSync(config, `data_dir = "${dir}/data"\n[discovery]\nmdns_enabled = false\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${port}\nhttp_port = 0\n[web.auth]\nmode = "password"\nallow_local_admin = false\n`);
const pw = spawnSync(process.execPath, [cli, 'passwd', 'bench', '--config', config], { input: 'bench password\n' });
if (pw.status !== 0) throw new Error(`passwd failed: ${pw.stderr}`);
const agent = spawn(process.execPath, [cli, 'serve', '--config', config], { stdio: 'ignore' });
try {
  for (let i = 0; i < 100; i++) {
    if (await request(port, '/api/version').catch(() => 0)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(`node ${process.version}, ${N} iterations each, one HTTPS connection per request`);
  report('scrypt hash (in process)', await timeIt(() => hashPassword('bench password'), Math.min(N, 50)));
  const login = JSON.stringify({ username: 'bench', password: 'bench password' });
  report('POST /api/v1/auth/login (200)', await timeIt(async () => {
    if ((await request(port, '/api/v1/auth/login', login)) !== 200) throw new Error('login failed');
  }));
  report('GET /devices/list, no cookie (401)', await timeIt(() => request(port, '/devices/list')));
  report('GET //devices/list (400)', await timeIt(() => request(port, '//devices/list')));
  report('GET /api/version (200)', await timeIt(() => request(port, '/api/version')));
} finally {
  agent.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
