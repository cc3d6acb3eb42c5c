// The parts of printbox.toml that belong to the operating system, not the agent: a static IPv4
// address (systemd-networkd) and time servers (systemd-timesyncd). Each file is written when the
// provisioning file asks for it and removed when it no longer does, so the file is the truth.
import { mkdirSync, rmSync } from 'node:fs';
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

function put(etcDir: string, rel: string, text: string | undefined): void {
  const file = join(etcDir, rel);
  if (text === undefined) return rmSync(file, { force: true });
  mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
  writeFileAtomic(file, text, 0o644);
}

export function writeSystemFiles(etcDir: string, p: Provision): void {
  put(etcDir, NETWORK_FILE, p.network && networkUnit(p.network));
  put(etcDir, TIME_FILE, p.timeServers?.length ? timeConf(p.timeServers) : undefined);
}
