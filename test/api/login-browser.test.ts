// The technician's first visit, in a real browser (Debian's Chromium driven by playwright-core):
// the box redirects to the sign-in page, which asks for the setup code; a wrong code shows the
// agent's message, the right one makes the account and lands on the UI; sign out, sign in again.
// allow_local_admin is off, so the browser on loopback is just another client.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startAgent, type Agent } from '../helpers/agent.js';
import { chromiumMissing, launchChromium } from '../helpers/chromium.js';

const skip = chromiumMissing;
if (skip) console.log(`# browser sign-in test skipped: ${skip}`);

let agent: Agent;
let browser: import('playwright-core').Browser;

before(async () => {
  if (skip) return;
  agent = await startAgent({ authMode: 'password', allowLocalAdmin: false });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await agent?.stop();
});

test('onboarding with the setup code, then sign-out and sign-in', { skip }, async () => {
  const page = await browser.newPage({ ignoreHTTPSErrors: true });
  const base = `https://127.0.0.1:${agent.httpsPort}`;
  await page.goto(`${base}/`);
  assert.equal(new URL(page.url()).pathname, '/login', 'redirected to the sign-in page');
  assert.equal(new URL(page.url()).searchParams.get('return_to'), '/');

  await page.fill('input[name=setup_code]', 'AAAA-BBBB-CCCC');
  await page.fill('input[name=password]', 'browser password');
  await page.click('button');
  await page.waitForFunction(() => document.getElementById('error')?.textContent !== '');
  assert.equal(await page.textContent('#error'), 'invalid setup code');

  if (process.env.PRINTBOX_SCREENSHOTS) await page.screenshot({ path: join(process.env.PRINTBOX_SCREENSHOTS, 'setup.png') });
  const code = readFileSync(join(agent.dataDir, 'setup-code'), 'utf8').trim();
  await page.fill('input[name=setup_code]', code);
  await Promise.all([page.waitForURL(`${base}/`), page.click('button')]);
  await page.waitForSelector('#saved');
  assert.equal(await page.textContent('header h1'), 'PrintBox');

  await Promise.all([page.waitForURL(/\/login$/), page.click('#logout')]);
  await page.goto(`${base}/`);
  assert.equal(new URL(page.url()).pathname, '/login', 'signed out: back to the sign-in page');
  await page.fill('input[name=username]', 'admin');
  await page.fill('input[name=password]', 'browser password');
  await Promise.all([page.waitForURL(`${base}/`), page.click('button')]);
  await page.waitForSelector('#saved');
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'pm_agent_session');
  assert.ok(session?.httpOnly && session.secure && session.sameSite === 'Lax', JSON.stringify(session));
  if (process.env.PRINTBOX_SCREENSHOTS) await page.screenshot({ path: join(process.env.PRINTBOX_SCREENSHOTS, 'signed-in.png') });
});
