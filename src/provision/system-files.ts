// The parts of printbox.toml that belong to the operating system, not the agent: a static IPv4
// address (systemd-networkd), time servers (systemd-timesyncd) and the Wi-Fi network
// (wpa_supplicant and networkd: wifi.ts). Each file is written when the provisioning file asks for
// it and removed when it no longer does, so the file is the truth. All of them are worked out
// before anything is written (systemFiles, which may refuse the file), then written.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../shared/atomic-file.js';
import type { Provision } from './file.js';
import { wifiFiles } from './wifi.js';
import type { SystemFile } from './system-file.js';

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

/** A file under /etc as provisioning wants it: its text, or undefined for none. */
/** Writes or removes the file; true when that changed it. */
function put(etcDir: string, f: SystemFile): boolean {
  const file = join(etcDir, f.rel);
  const before = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (before === f.text) return false;
  if (f.text === undefined) {
    rmSync(file, { force: true });
  } else {
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
    // Written with its mode from the start (a temporary file beside it, renamed): a 0600 key is
    // never readable by others, not even for a moment.
    writeFileAtomic(file, f.text, f.mode);
  }
  return true;
}

/**
 * The files the provisioning file asks for, worked out before anything is written: throws
 * ProvisionError when one cannot be (Wi-Fi without its key, or on an image without Wi-Fi).
 */
export function systemFiles(etcDir: string, p: Provision): SystemFile[] {
  return [
    { rel: NETWORK_FILE, text: p.network && networkUnit(p.network), mode: 0o644, service: 'systemd-networkd.service' },
    { rel: TIME_FILE, text: p.timeServers?.length ? timeConf(p.timeServers) : undefined, mode: 0o644, service: 'systemd-timesyncd.service' },
    ...wifiFiles(etcDir, p.wifi),
  ];
}

/** Writes the files; returns the services whose files changed, which must read them again. */
export function writeSystemFiles(etcDir: string, files: SystemFile[]): string[] {
  const changed = new Set<string>();
  for (const f of files) if (put(etcDir, f)) changed.add(f.service);
  return [...changed];
}
