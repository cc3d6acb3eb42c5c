// Update sources (docs/updates.md): a manifest URL set by `update.url` (a static file on any web
// server is enough), or, when none is set, the central server the box is linked to.
import http from 'node:http';
import https from 'node:https';
import { parseOffer, ManifestError } from './manifest.js';
import type { UpdateSource } from './service.js';
import { versionInfo } from '../shared/version.js';

const MAX_MANIFEST_BYTES = 64 * 1024;
const TIMEOUT_MS = 15_000;

/** What the box tells a source about itself (a dynamic source may answer per architecture). */
export function askingFor(): Record<string, string> {
  const v = versionInfo();
  return { current_version: v.version, arch: v.arch, platform: v.os, format: 'raucb' };
}

/** A manifest fetched with GET from a configured URL. */
export function urlSource(manifestUrl: string, maxBundleBytes: number): UpdateSource {
  return {
    name: manifestUrl,
    async offer(signal) {
      const url = new URL(manifestUrl);
      for (const [k, v] of Object.entries(askingFor())) url.searchParams.set(k, v);
      const text = await getText(url, signal);
      if (!text.trim()) return undefined;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new ManifestError('the update manifest is not JSON');
      }
      return parseOffer(json, manifestUrl, maxBundleBytes);
    },
  };
}

function getText(url: URL, signal: AbortSignal): Promise<string> {
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.get(url, { agent: false, signal, timeout: TIMEOUT_MS, headers: { Accept: 'application/json' } }, (res) => {
      if (res.statusCode === 204 || res.statusCode === 404) {
        // Nothing published (yet) for this box.
        res.resume();
        return resolve('');
      }
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`answered ${res.statusCode}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_MANIFEST_BYTES) return req.destroy(new ManifestError(`the update manifest is larger than ${MAX_MANIFEST_BYTES} bytes`));
        chunks.push(c);
      });
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
  });
}
