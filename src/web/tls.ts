// The HTTPS certificate: the configured pair, or <data_dir>/tls/agent.{crt,key}, generated
// (self-signed, key mode 0600) when that default pair is missing. Changes on disk are picked up
// without a restart: the appliance renews the certificate in place.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, watch } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../shared/atomic-file.js';
import type { Config } from '../config/config.js';
import { storageProblem } from '../store/storage-guard.js';
import type { Logger } from '../log/logger.js';
import { errorText } from '../shared/error-text.js';

export interface TlsPaths {
  cert: string;
  key: string;
  /** True for the default pair, which the agent may create. An operator's pair is never written. */
  managed: boolean;
}

export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

export function tlsPaths(cfg: Config): TlsPaths {
  const { cert_file, key_file } = cfg.web.tls;
  if (cert_file) return { cert: cert_file, key: key_file, managed: false };
  const dir = join(cfg.data_dir, 'tls');
  return { cert: join(dir, 'agent.crt'), key: join(dir, 'agent.key'), managed: true };
}

/** Creates the default self-signed pair when it does not exist yet. */
/**
 * The certificate and key, made first when they do not exist. A card that cannot take them (full,
 * read-only) does not stop the agent: the pair made is served from memory for this run, and the
 * next start tries to store one again.
 */
export async function ensureCertificate(paths: TlsPaths, log: Logger): Promise<TlsPair> {
  if (existsSync(paths.cert) && existsSync(paths.key)) return loadPair(paths);
  if (!paths.managed) throw new Error(`TLS certificate ${paths.cert} or key ${paths.key} not found`);
  const name = hostname();
  const notBefore = new Date(Date.now() - 3600_000);
  const pems = await generateOutOfProcess([{ name: 'commonName', value: name }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: notBefore,
    notAfterDate: new Date(notBefore.getTime() + 825 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      // An EC key signs; it cannot encipher a key (RFC 5480 3), so keyEncipherment is not claimed.
      { name: 'keyUsage', critical: true, digitalSignature: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: name },
          { type: 2, value: `${name}.local` },
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  const pair = { cert: Buffer.from(pems.cert), key: Buffer.from(pems.private) };
  try {
    mkdirSync(dirname(paths.key), { recursive: true, mode: 0o700 });
    // Write to temporary names, then rename: a power cut never leaves half a key behind.
    writeFileAtomic(paths.key, pems.private, 0o600);
    writeFileAtomic(paths.cert, pems.cert, 0o644);
  } catch (err) {
    if (!storageProblem(err)) throw err;
    log.warn({ cert: paths.cert, err: errorText(err) }, 'generated TLS certificate not stored (the card takes no writes): served from memory until the next start');
    return pair;
  }
  log.info({ cert: paths.cert }, 'generated self-signed TLS certificate');
  return pair;
}

// `selfsigned` (with @peculiar/x509 and pkijs) is needed once in a box's life. Loaded into the
// agent, it would stay there for good: some 4-5 MiB of RSS (its code and sources; a worker thread
// leaves about as much behind in malloc arenas). So it runs in a short-lived child process (this
// same Node: 0.11 s against 76 ms in process), which hands back the two PEM strings
// (memory figures: docs/performance.md).
const GENERATE = `
const [module, attrs, options] = JSON.parse(process.argv[1]);
options.notBeforeDate = new Date(options.notBeforeDate);
options.notAfterDate = new Date(options.notAfterDate);
const p = await (await import(module)).generate(attrs, options);
process.stdout.write(JSON.stringify({ cert: p.cert, private: p.private }));
`;

type Generate = (typeof import('selfsigned'))['generate'];

function generateOutOfProcess(...[attrs, options]: Parameters<Generate>): Promise<{ cert: string; private: string }> {
  const args = JSON.stringify([import.meta.resolve('selfsigned'), attrs, options]);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', GENERATE, args], { maxBuffer: 1 << 20, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`certificate generation failed: ${stderr.trim() || err.message}`));
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`certificate generation gave no certificate: ${stderr.trim()}`));
      }
    });
  });
}

export function loadPair(paths: TlsPaths): TlsPair {
  return { cert: readFileSync(paths.cert), key: readFileSync(paths.key) };
}

/** What identifies the pair's files on disk now (time, size, inode of each), or 'missing'. */
export function pairStamp(paths: TlsPaths): string {
  try {
    const c = statSync(paths.cert);
    const k = statSync(paths.key);
    return `${c.mtimeMs}:${c.size}:${c.ino}|${k.mtimeMs}:${k.size}:${k.ino}`;
  } catch {
    return 'missing';
  }
}

/**
 * Calls onChange with the new pair whenever either file changes. fs.watch on the directory sees
 * atomic replacements; a slow poll covers file systems where watch events are lost. `since` is
 * the stamp taken before the served pair was read: a change between that read and this watch
 * (on a first boot, printbox-cert-address renewing the certificate for the DHCP address while
 * the agent starts) is picked up at once instead of never.
 */
export function watchPair(paths: TlsPaths, onChange: (pair: TlsPair) => void, log: Logger, since?: string): () => void {
  const stamp = () => pairStamp(paths);
  let last = since ?? stamp();
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    timer = undefined;
    const now = stamp();
    if (now === last || now === 'missing') return;
    try {
      const pair = loadPair(paths);
      onChange(pair);
      last = now;
      log.info({ cert: paths.cert }, 'TLS certificate reloaded');
    } catch (err) {
      // A half-written pair (cert renewed, key not yet): keep serving the old one, retry later.
      log.warn({ err: errorText(err) }, 'TLS certificate change not usable yet');
    }
  };
  const soon = () => {
    if (!timer) timer = setTimeout(check, 200);
  };
  const watchers = [...new Set([dirname(paths.cert), dirname(paths.key)])].map((dir) => {
    try {
      return watch(dir, { persistent: false }, soon);
    } catch {
      return undefined;
    }
  });
  const poll = setInterval(soon, 30_000);
  poll.unref();
  if (since !== undefined) soon();
  return () => {
    clearInterval(poll);
    if (timer) clearTimeout(timer);
    for (const w of watchers) w?.close();
  };
}
