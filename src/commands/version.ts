// printbox-agent version: what this build is.
import { versionInfo } from '../shared/version.js';

export async function run(): Promise<number> {
  const v = versionInfo();
  process.stdout.write(`printbox-agent ${v.version} (commit ${v.git_commit}, built ${v.build_time}, ${v.build_type}; node ${v.go_version} ${v.os}/${v.arch})\n`);
  return 0;
}
