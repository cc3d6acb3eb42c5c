// printbox-agent install-allowed VERSION: whether an update bundle of VERSION may be installed over
// this build (exit 0), or would take the box back to an older release (exit 1). RAUC's pre-install
// handler asks it, so the rule holds for every caller of RAUC's installer, not only the agent
// (which refuses older offers itself: src/update/service.ts). The same version is allowed: a slot
// may be written again with what runs.
import { compareVersions, ManifestError } from '../update/manifest.js';
import { versionInfo } from '../shared/version.js';

export async function run(args: string[]): Promise<number> {
  const [wanted] = args;
  const running = versionInfo().version;
  if (args.length !== 1 || !wanted) {
    process.stderr.write('usage: printbox-agent install-allowed VERSION\n');
    return 2;
  }
  let order: number;
  try {
    order = compareVersions(wanted, running);
  } catch (err) {
    if (!(err instanceof ManifestError)) throw err;
    process.stderr.write(`printbox-agent: the bundle's version ${JSON.stringify(wanted).slice(0, 80)} is not a version such as 1.2.3\n`);
    return 2;
  }
  if (order < 0) {
    process.stderr.write(`printbox-agent: the bundle's version ${wanted} is older than the running ${running}: not installed\n`);
    return 1;
  }
  return 0;
}
