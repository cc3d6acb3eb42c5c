// Takes the screenshots of the sign-in pages in docs/ui/: the first visit's setup form (password
// mode, no account yet: the setup code) and the sign-in form, each at desktop and phone size.
// Runs the built agent (npm run build first) the way the tests start it (test/kit/agent.ts:
// loopback only, no discovery that leaves the machine) and Debian's Chromium through
// playwright-core, with the tests' flags: nothing leaves the machine.
//   npm run build && node scripts/docs/screenshots.mjs
// The UI's own pages are taken by test/agent/ui/ui.test.ts (PRINTBOX_UI_DOCS=1).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) throw new Error(`no ${CHROMIUM} (scripts/setup-test-deps.sh installs it as root)`);
const helpers = join(root, 'dist/test/kit/agent.js');
if (!existsSync(helpers)) throw new Error('no dist/test/kit/agent.js: run npm run build first');
const { startAgent } = await import(helpers);
const { chromium } = await import('playwright-core');

const SIZES = { desktop: { width: 800, height: 560 }, phone: { width: 360, height: 640 } };
const out = join(root, 'docs/ui');
mkdirSync(out, { recursive: true });

const agent = await startAgent({ authMode: 'password', allowLocalAdmin: false });
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const base = `https://127.0.0.1:${agent.httpsPort}`;
  /** Each size: open `/` (the box sends the browser to its sign-in page), let `fill` type, take it. */
  async function take(name, ready, fill) {
    for (const [size, viewport] of Object.entries(SIZES)) {
      const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport, deviceScaleFactor: 1 });
      const page = await ctx.newPage();
      await page.goto(`${base}/`);
      await page.waitForSelector(ready);
      await fill(page);
      await page.screenshot({ path: join(out, `${name}-${size}.png`) });
      console.log(`docs/ui/${name}-${size}.png`);
      await ctx.close();
    }
  }
  // The first visit: no account, so the setup form (the code is on the box's screen and card).
  await take('setup', 'input[name=setup_code]', async (page) => {
    await page.fill('input[name=setup_code]', 'K7QF-2M9D-XW4P');
    await page.fill('input[name=password]', 'a new password');
  });
  const code = readFileSync(join(agent.dataDir, 'setup-code'), 'utf8').trim();
  const made = await agent.request('/api/v1/auth/setup', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ setup_code: code, username: 'admin', password: 'a new password' }),
  });
  if (made.status !== 201) throw new Error(`setup answered ${made.status}: ${made.body}`);
  // Then the sign-in form, with a wrong password's answer shown as the agent words it.
  await take('signin', 'input[name=username]:not([value])', async (page) => {
    await page.fill('input[name=username]', 'admin');
    await page.fill('input[name=password]', 'not the password');
    await page.click('button');
    await page.waitForFunction(() => document.getElementById('error')?.textContent !== '');
  });
} finally {
  await browser.close();
  await agent.stop();
}
