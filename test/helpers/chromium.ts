// Test helper: the system's Chromium through playwright-core, with the flags that keep it from
// reaching out to the network (playwright gives it a fresh empty profile). `chromiumMissing` is
// a test's skip reason when it is not installed.
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing: string | false = !existsSync(CHROMIUM) ? `no ${CHROMIUM} (scripts/setup-test-deps.sh installs it as root)` : false;
const OFFLINE_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launchChromium(): Promise<import('playwright-core').Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: OFFLINE_FLAGS });
}
