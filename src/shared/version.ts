// What /api/version and `printbox-agent version` report (docs/decisions/0016-version-report.md).
import { readFileSync } from 'node:fs';

const GO_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386' };

export interface VersionInfo {
  version: string;
  build_time: string;
  git_commit: string;
  build_type: string;
  go_version: string;
  os: string;
  arch: string;
}

let cached: VersionInfo | undefined;

function readJson(relative: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8'));
  } catch {
    return {};
  }
}

export function versionInfo(): VersionInfo {
  if (cached) return cached;
  // This file runs as dist/src/shared/version.js: the package root is three levels up.
  const pkg = readJson('../../../package.json');
  const build = readJson('../../build-info.json');
  cached = {
    version: pkg.version ?? '0.0.0',
    build_time: build.build_time ?? 'unknown',
    git_commit: build.git_commit ?? 'unknown',
    build_type: build.build_type ?? 'dev',
    go_version: process.version, // the runtime the agent runs on, under the contract's field name
    os: process.platform === 'win32' ? 'windows' : process.platform,
    arch: GO_ARCH[process.arch] ?? process.arch,
  };
  return cached;
}
