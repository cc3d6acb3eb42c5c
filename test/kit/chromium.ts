// Test helper: the system's Chromium through playwright-core, with the flags that keep it from
// reaching out to the network (playwright gives it a fresh empty profile). `chromiumMissing` is
// a test's skip reason when it is not installed.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing: string | false = !existsSync(CHROMIUM) ? `no ${CHROMIUM} (scripts/setup-test-deps.sh installs it as root)` : false;
const OFFLINE_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Chromium, in network namespace `netns` when given (a browser on a laptop of test/kit/lan.ts):
 * playwright drives it over a pipe, which no namespace stands in the way of.
 */
export async function launchChromium(opts: { netns?: string } = {}): Promise<import('playwright-core').Browser> {
  const { chromium } = await import('playwright-core');
  if (!opts.netns) return chromium.launch({ executablePath: CHROMIUM, args: OFFLINE_FLAGS });
  const dir = mkdtempSync(join(tmpdir(), 'pbx-chromium-'));
  const wrapper = join(dir, 'chromium');
  writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec '${opts.netns}' ${CHROMIUM} "$@"\n`, { mode: 0o755 });
  const browser = await chromium.launch({ executablePath: wrapper, args: OFFLINE_FLAGS });
  browser.on('disconnected', () => rmSync(dir, { recursive: true, force: true }));
  return browser;
}

/**
 * `page.goto(url)`, asked once more when Chromium answers net::ERR_NETWORK_CHANGED: its network
 * change notifier aborts a navigation in flight whenever an address or link of its namespace
 * changes, which says nothing about the agent. A second change in a row is a failure.
 */
export async function gotoPage(page: import('playwright-core').Page, url: string): Promise<void> {
  try {
    await page.goto(url);
  } catch (err) {
    if (!/ERR_NETWORK_CHANGED/.test(String(err))) throw err;
    await page.goto(url);
  }
}
