// The Wi-Fi network from printbox.toml ([network] wifi_ssid, wifi_psk, wifi_country): the Zero 2 W
// has no Ethernet, and a Pi 3, 4 or 5 may be placed where no cable reaches. Two files:
// wpa_supplicant@wlan0's configuration (root, 0600: it holds the key) and a networkd file taking
// DHCP on the wireless interface. wpa_supplicant@wlan0 starts when wlan0 appears and only when its
// configuration exists (the Pi layer's drop-in, image/layers/arm64.overlay);
// printbox-system-reload.service restarts it when provisioning changed the file.
// Only WPA2-Personal (and WPA2/WPA3 transition networks, through their WPA2 side): the key is
// stored derived from the passphrase, as wpa_passphrase does, so the passphrase itself is kept
// nowhere on the box; WPA3's SAE would need it in clear.
import { pbkdf2Sync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProvisionError, type Wifi } from './file.js';
import type { SystemFile } from './system-file.js';

export const WIFI_INTERFACE = 'wlan0';
export const WPA_DIR = 'wpa_supplicant';
export const WPA_FILE = `${WPA_DIR}/wpa_supplicant-${WIFI_INTERFACE}.conf`;
export const WPA_SERVICE = `wpa_supplicant@${WIFI_INTERFACE}.service`;
// 30-: after the wired files (10-printbox-provisioned, 20-wired), which match Ethernet only.
export const WIFI_NETWORK_FILE = 'systemd/network/30-printbox-wifi.network';

/** WPA2's key for a passphrase (IEEE 802.11i: PBKDF2-HMAC-SHA1, the SSID as salt, 4,096 rounds, 256 bits). */
export function wpaKey(passphrase: string, ssid: string): string {
  return pbkdf2Sync(Buffer.from(passphrase, 'utf8'), Buffer.from(ssid, 'utf8'), 4096, 32, 'sha1').toString('hex');
}

const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** The key stored at an earlier boot for this same network (the SSID is the key's salt), if any. */
function storedKey(etcDir: string, ssid: string): string | undefined {
  const file = join(etcDir, WPA_FILE);
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  if (/^\s*ssid=([0-9a-f]+)$/m.exec(text)?.[1] !== hex(ssid)) return undefined;
  return /^\s*psk=([0-9a-f]{64})$/m.exec(text)?.[1];
}

function wpaConf(w: Wifi, key: string): string {
  return [
    '# Written by printbox-provision from printbox.toml on the boot partition ([network] wifi_*);',
    '# edit that file instead. The key is kept here only: its line is removed from printbox.toml.',
    // The regulatory domain: wpa_supplicant sets it in the kernel (cfg80211, wireless-regdb) as it starts.
    `country=${w.country}`,
    'p2p_disabled=1',
    '',
    'network={',
    // The name as hex: any bytes, nothing in it can end the line or the block.
    `\tssid=${hex(w.ssid)}`,
    // Hidden networks too (probe requests name it).
    '\tscan_ssid=1',
    '\tkey_mgmt=WPA-PSK WPA-PSK-SHA256',
    `\tpsk=${key}`,
    '}',
    '',
  ].join('\n');
}

const wifiNetwork = [
  '# Written by printbox-provision from printbox.toml on the boot partition ([network] wifi_*).',
  '# DHCP on the Wi-Fi, as on the wired interfaces (20-wired.network).',
  '[Match]',
  'Type=wlan',
  '',
  '[Network]',
  'DHCP=yes',
  'MulticastDNS=yes',
  'LLMNR=no',
  'IPv6AcceptRA=yes',
  '',
  '[DHCPv4]',
  'SendHostname=yes',
  'UseDomains=yes',
  '',
].join('\n');

/** The two files for the network asked for, or none (removed) without one. Throws ProvisionError. */
export function wifiFiles(etcDir: string, w: Wifi | undefined): SystemFile[] {
  const files = (conf: string | undefined, network: string | undefined): SystemFile[] => [
    { rel: WPA_FILE, text: conf, mode: 0o600, service: WPA_SERVICE },
    { rel: WIFI_NETWORK_FILE, text: network, mode: 0o644, service: 'systemd-networkd.service' },
  ];
  if (!w) return files(undefined, undefined);
  if (!existsSync(join(etcDir, WPA_DIR))) {
    throw new ProvisionError('network.wifi_ssid: this image has no Wi-Fi (wpa_supplicant is not installed); remove the wifi_ keys');
  }
  let key: string | undefined;
  if (w.psk === undefined) key = storedKey(etcDir, w.ssid);
  else key = /^[0-9a-fA-F]{64}$/.test(w.psk) ? w.psk.toLowerCase() : wpaKey(w.psk, w.ssid);
  if (key === undefined) {
    throw new ProvisionError(
      'network.wifi_psk is required: no key is stored for this network yet (the line is removed from printbox.toml once the key is stored; write it again to join another network)',
    );
  }
  return files(wpaConf(w, key), wifiNetwork);
}
