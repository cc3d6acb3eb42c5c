// A bundle download that survives a dropped link or a power cut: bytes go to a .part file on the
// data partition, synced as they come, and a later attempt asks only for the rest (HTTP Range).
// It never takes more than the offer's size, and refuses to start without room for it.
import http from 'node:http';
import https from 'node:https';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, readdirSync, renameSync, rmSync, statSync, statfsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { UpdateOffer } from './manifest.js';
import { errorText } from '../shared/error-text.js';

export class DownloadError extends Error {}

export interface DownloadOptions {
  dir: string;
  /** Free space to leave beside the bundle (the database's own reserve). */
  keepFreeBytes: number;
  signal: AbortSignal;
  onProgress(bytes: number, total: number): void;
  /** Trusted CA for an https source (the central server's private CA), else the system's. */
  ca?: import('../net/http-client.js').TrustedCas;
  /** Authorization header value, for the central server's download endpoint... */
  authorization?: string;
  /** ...sent only to this origin (a bundle elsewhere never sees the agent's token). */
  authorizedOrigin?: string;
  /** No byte for this long: the attempt fails (a later one resumes). */
  idleMs?: number;
}

const SYNC_EVERY = 8 * 1024 * 1024;

/** The finished file's name for an offer: a .part of another offer is never resumed into it. */
export function bundleFileName(offer: UpdateOffer): string {
  return `printbox-${offer.version.replace(/[^0-9A-Za-z.-]/g, '_')}-${offer.size}.raucb`;
}

/** Downloads (or resumes) the offer's bundle; returns the finished file's path. */
export async function downloadBundle(offer: UpdateOffer, o: DownloadOptions): Promise<string> {
  mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  const name = bundleFileName(offer);
  const done = join(o.dir, name);
  const part = `${done}.part`;
  // Only this offer's files stay: an older offer's bundle or part would only take room.
  for (const f of readdirSync(o.dir)) if (f !== name && f !== `${name}.part` && /\.raucb(\.part)?$/.test(f)) rmSync(join(o.dir, f), { force: true });
  if (sizeOf(done) === offer.size) return checked(done, offer);

  let have = sizeOf(part) ?? 0;
  if (have > offer.size) have = 0; // not this offer's bytes
  const free = freeBytes(o.dir);
  const need = offer.size - have + o.keepFreeBytes;
  if (free < need) {
    throw new DownloadError(`not enough space for the bundle: ${offer.size - have} bytes still to download and ${o.keepFreeBytes} to keep free, ${free} free on the data partition`);
  }
  o.onProgress(have, offer.size);
  await fetchInto(offer, part, have, o);
  renameSync(part, done);
  return checked(done, offer);
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

async function checked(file: string, offer: UpdateOffer): Promise<string> {
  if (!offer.sha256) return file;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  const got = hash.digest('hex');
  if (got !== offer.sha256) {
    rmSync(file, { force: true });
    throw new DownloadError(`the downloaded bundle's SHA-256 is ${got}, the manifest says ${offer.sha256}: removed`);
  }
  return file;
}

async function fetchInto(offer: UpdateOffer, part: string, start: number, o: DownloadOptions): Promise<void> {
  const url = new URL(offer.url);
  const headers: Record<string, string> = { Accept: 'application/octet-stream' };
  if (start > 0) headers.Range = `bytes=${start}-`;
  if (o.authorization && url.origin === o.authorizedOrigin) headers.Authorization = o.authorization;
  const mod = url.protocol === 'https:' ? https : http;
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = mod.request(url, { headers, ca: o.ca, agent: false, signal: o.signal, timeout: o.idleMs ?? 30_000 }, resolve);
    req.on('timeout', () => req.destroy(new DownloadError(`the update source sent nothing for ${(o.idleMs ?? 30_000) / 1000} s`)));
    req.on('error', reject);
    req.end();
  });
  let offset = start;
  if (res.statusCode === 416 && start === offer.size) return void res.resume();
  if (res.statusCode === 200) offset = 0; // the source ignores ranges: start again
  else if (res.statusCode === 206) {
    const from = /^bytes (\d+)-/.exec(String(res.headers['content-range'] ?? ''));
    if (!from || Number(from[1]) !== start) {
      res.resume();
      throw new DownloadError(`the update source answered range ${JSON.stringify(res.headers['content-range'] ?? '')} for bytes ${start}-`);
    }
  } else {
    res.resume();
    throw new DownloadError(`the update source answered ${res.statusCode} for ${url.pathname}`);
  }
  const fh = await open(part, offset === 0 ? 'w' : 'a', 0o600);
  try {
    let unsynced = 0;
    for await (const chunk of res as AsyncIterable<Buffer>) {
      if (offset + chunk.length > offer.size) throw new DownloadError(`the update source sent more than the manifest's ${offer.size} bytes: stopped`);
      await fh.write(chunk);
      offset += chunk.length;
      unsynced += chunk.length;
      if (unsynced >= SYNC_EVERY) {
        await fh.datasync();
        unsynced = 0;
      }
      o.onProgress(offset, offer.size);
    }
    await fh.datasync();
  } catch (err) {
    if (err instanceof DownloadError || o.signal.aborted) throw err;
    await fh.datasync().catch(() => {});
    throw new DownloadError(`the download stopped at ${offset} of ${offer.size} bytes (${errorText(err)}); a later attempt resumes`);
  } finally {
    await fh.close();
  }
  if (offset !== offer.size) throw new DownloadError(`the download stopped at ${offset} of ${offer.size} bytes (the source closed it); a later attempt resumes`);
}
