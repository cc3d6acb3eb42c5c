// What an update source answers (docs/updates.md): the newest bundle for this box's architecture.
// The manifest is only a pointer: what is trusted is the bundle's own signature, which RAUC checks
// against the keyring in the running root filesystem before anything is written.
export interface UpdateOffer {
  version: string;
  /** Absolute http(s) URL of the .raucb bundle (a relative one is resolved against the manifest's). */
  url: string;
  /** The bundle's size in bytes: the download stops at it, and space is checked against it. */
  size: number;
  /** Hex SHA-256 of the bundle, when the source gives one: checked before RAUC is asked. */
  sha256?: string;
}

export class ManifestError extends Error {}

/** Versions as the build writes them (package.json): dotted numbers, an optional -pre-release. */
const VERSION = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** <0, 0, >0 as a is older than, the same as, newer than b (semver precedence, pre-release older). */
export function compareVersions(a: string, b: string): number {
  const pa = VERSION.exec(a);
  const pb = VERSION.exec(b);
  if (!pa || !pb) throw new ManifestError(`not a version: ${JSON.stringify(pa ? b : a).slice(0, 80)}`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d) return d;
  }
  if (pa[4] === pb[4]) return 0;
  if (pa[4] === undefined) return 1;
  if (pb[4] === undefined) return -1;
  return pa[4] < pb[4] ? -1 : 1;
}

/** The source's answer checked field by field; `undefined` for "nothing newer" (an empty answer). */
export function parseOffer(value: unknown, base: string, maxBytes: number): UpdateOffer | undefined {
  if (value === null || (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ManifestError('the update manifest is not a JSON object');
  const m = value as Record<string, unknown>;
  const version = m.version;
  if (typeof version !== 'string' || !VERSION.test(version)) throw new ManifestError(`the update manifest's version ${JSON.stringify(version ?? null).slice(0, 80)} is not a version such as 1.2.3`);
  if (typeof m.url !== 'string' || !m.url) throw new ManifestError("the update manifest has no bundle url");
  let url: URL;
  try {
    url = new URL(m.url, base);
  } catch {
    throw new ManifestError(`the update manifest's url ${JSON.stringify(m.url).slice(0, 200)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ManifestError(`the bundle url must be http or https, not ${url.protocol}`);
  const size = m.size;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size <= 0) throw new ManifestError('the update manifest has no bundle size (a positive number of bytes)');
  if (size > maxBytes) throw new ManifestError(`the bundle is ${size} bytes, more than this box takes (update.max_bundle_mb: ${maxBytes} bytes)`);
  const sha256 = m.sha256;
  if (sha256 !== undefined && (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/i.test(sha256))) throw new ManifestError('the update manifest\'s sha256 is not 64 hex digits');
  return { version, url: url.href, size, ...(sha256 ? { sha256: sha256.toLowerCase() } : {}) };
}
