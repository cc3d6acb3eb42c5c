// The parts of printbox.toml that belong to the operating system, not the agent: a static IPv4
// address (systemd-networkd) and time servers (systemd-timesyncd). Each file is written when the
// provisioning file asks for it and removed when it no longer does, so the file is the truth.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../store/atomic-file.js';
import type { Provision } from './file.js';

// 10- sorts before the image's 20-wired.network: networkd uses the first file that matches.
export const NETWORK_FILE = 'systemd/network/10-printbox-provisioned.network';
export const TIME_FILE = 'systemd/timesyncd.conf.d/60-printbox-provisioned.conf';

function networkUnit(p: NonNullable<Provision['network']>): string {
  return [
    '# Written by printbox-provision from printbox.toml on the boot partition; edit that file instead.',
    '[Match]',
    'Type=ether',
    'Name=en* eth*',
    '',
    '[Network]',
    `Address=${p.address}`,
    ...(p.gateway ? [`Gateway=${p.gateway}`] : []),
    ...p.dns.map((d) => `DNS=${d}`),
    'MulticastDNS=yes',
    'LLMNR=no',
    '',
  ].join('\n');
}

function timeConf(servers: string[]): string {
  return ['# Written by printbox-provision from printbox.toml on the boot partition.', '[Time]', `NTP=${servers.join(' ')}`, ''].join('\n');
}

/** Writes or removes the file; true when that changed it. */
function put(etcDir: string, rel: string, text: string | undefined): boolean {
  const file = join(etcDir, rel);
  const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (before === text) return false;
  if (text === undefined) {
    rmSync(file, { force: true });
  } else {
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
    writeFileAtomic(file, text, 0o644);
  }
  return true;
}

/** Writes the files; returns the services whose files changed, which must read them again. */
export function writeSystemFiles(etcDir: string, p: Provision): string[] {
  const changed: string[] = [];
  if (put(etcDir, NETWORK_FILE, p.network && networkUnit(p.network))) changed.push('systemd-networkd.service');
  if (put(etcDir, TIME_FILE, p.timeServers?.length ? timeConf(p.timeServers) : undefined)) changed.push('systemd-timesyncd.service');
  return changed;
}
