// Start-up failures name their object: a database the agent cannot open names the file and
// what was attempted, a taken port names the address and the port; the agent exits by itself with
// a non-zero code and the message on stderr (systemd's journal), never hangs half-started.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cliPath, runCli, writeConfig, type CliResult, type TestConfig } from '../../kit/agent.js';

const made: TestConfig[] = [];
after(() => {
  for (const c of made) rmSync(c.dir, { recursive: true, force: true });
});

async function config(): Promise<TestConfig> {
  const c = await writeConfig();
  made.push(c);
  return c;
}

/** Points data_dir of `cfg` at `dataDir`. */
function setDataDir(cfg: TestConfig, dataDir: string) {
  writeFileSync(cfg.configPath, readFileSync(cfg.configPath, 'utf8').replace(/^data_dir = .*$/m, `data_dir = ${JSON.stringify(dataDir)}`));
}

/** `serve` must exit by itself, non-zero, with every one of `needles` on stderr. */
function expectFailedStart(r: CliResult, needles: string[]) {
  assert.notEqual(r.code, -1, `serve must exit by itself (it was killed after the time limit); stderr: ${r.stderr}`);
  assert.notEqual(r.code, 0, `serve must fail; stderr: ${r.stderr}`);
  for (const n of needles) assert.ok(r.stderr.includes(n), `stderr must contain ${JSON.stringify(n)}: ${JSON.stringify(r.stderr)}`);
}

const serve = (cfg: TestConfig) => runCli(['serve'], { configPath: cfg.configPath, timeoutMs: 20_000 });

describe('a data directory the agent cannot write', () => {
  test('data_dir under a regular file (a file where a directory is expected): the database path, and what failed', async () => {
    const cfg = await config();
    writeFileSync(join(cfg.dir, 'not-a-dir'), 'x');
    const dataDir = join(cfg.dir, 'not-a-dir', 'data');
    setDataDir(cfg, dataDir);
    expectFailedStart(await serve(cfg), [
      `cannot open database ${join(dataDir, 'printbox.db')}: creating its directory ${dataDir}: not a directory`,
      'a file is where a directory is expected',
    ]);
  });

  test('<data_dir>/printbox.db is a directory: "unable to open database file" with the path', async () => {
    const cfg = await config();
    mkdirSync(join(cfg.dataDir, 'printbox.db'), { recursive: true });
    expectFailedStart(await serve(cfg), [
      `cannot open database ${join(cfg.dataDir, 'printbox.db')}: unable to open database file (it is a directory, not a file)`,
    ]);
  });

  test('a read-only data directory (a read-only bind mount when root, mode 0555 otherwise): the path and the directory', async (t) => {
    const cfg = await config();
    mkdirSync(cfg.dataDir, { recursive: true });
    let r: CliResult;
    if (process.getuid?.() === 0) {
      // Root ignores permission bits: mount the directory over itself read-only, in a private mount
      // namespace of the agent's own (nothing to undo, nothing leaks if the test dies).
      const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'mount --bind -o ro "$0" "$0" && ! touch "$0/probe" 2>/dev/null', cfg.dataDir]);
      if (probe.status !== 0) return t.skip(`root without a private read-only bind mount (unshare -m, mount --bind): ${probe.stderr}`);
      r = await runInReadOnlyMount(cfg);
    } else {
      chmodSync(cfg.dataDir, 0o555);
      try {
        r = await serve(cfg);
      } finally {
        chmodSync(cfg.dataDir, 0o755);
      }
    }
    expectFailedStart(r, [
      `cannot open database ${join(cfg.dataDir, 'printbox.db')}: unable to open database file (is the directory ${cfg.dataDir} writable`,
    ]);
  });
});

/** `serve` in a private mount namespace where cfg.dataDir is a read-only bind mount of itself. */
function runInReadOnlyMount(cfg: TestConfig): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const script = 'd="$1"; shift; mount --bind -o ro "$d" "$d" && exec "$@"';
    const p = spawn('unshare', ['-m', 'sh', '-c', script, 'sh', cfg.dataDir, process.execPath, cliPath, 'serve', '--config', cfg.configPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PRINTBOX_CONFIG: '' },
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), 20_000);
    p.on('error', reject);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? -1 : null), stdout, stderr });
    });
  });
}

describe('a port that is taken', () => {
  /** A listener holding a free loopback port for the duration of `fn`. */
  async function holding<T>(fn: (port: number) => Promise<T>): Promise<T> {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    try {
      return await fn((blocker.address() as net.AddressInfo).port);
    } finally {
      blocker.close();
    }
  }
  function setPort(cfg: TestConfig, key: 'https_port' | 'http_port', port: number) {
    writeFileSync(cfg.configPath, readFileSync(cfg.configPath, 'utf8').replace(new RegExp(`^${key} = \\d+$`, 'm'), `${key} = ${port}`));
  }

  test('web.https_port taken: the address, the port and the key', async () => {
    const cfg = await config();
    await holding(async (port) => {
      setPort(cfg, 'https_port', port);
      expectFailedStart(await serve(cfg), [
        `cannot listen on 127.0.0.1:${port} (web.listen_address = "127.0.0.1", web.https_port = ${port}): the port is already in use`,
      ]);
    });
  });

  test('web.http_port taken while HTTPS started: named too, and the agent exits instead of serving HTTPS alone', async () => {
    const cfg = await config();
    await holding(async (port) => {
      setPort(cfg, 'http_port', port);
      expectFailedStart(await serve(cfg), [
        `cannot listen on 127.0.0.1:${port} (web.listen_address = "127.0.0.1", web.http_port = ${port}): the port is already in use`,
      ]);
    });
  });

  test('the stand-alone redirect (printbox-agent redirect) names its port the same way', async () => {
    const cfg = await config();
    await holding(async (port) => {
      setPort(cfg, 'http_port', port);
      const viaKey = await runCli(['redirect'], { configPath: cfg.configPath, timeoutMs: 20_000 });
      expectFailedStart(viaKey, [`cannot listen on 127.0.0.1:${port} (web.listen_address = "127.0.0.1", web.http_port = ${port}): the port is already in use`]);
      const viaFlag = await runCli(['redirect', '--port', String(port)], { configPath: cfg.configPath, timeoutMs: 20_000 });
      expectFailedStart(viaFlag, [`cannot listen on 127.0.0.1:${port} (web.listen_address = "127.0.0.1", --port = ${port}): the port is already in use`]);
    });
  });
});
