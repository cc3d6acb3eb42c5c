// The technician's first visit, in a real browser (Debian's Chromium driven by playwright-core):
// the box redirects to the sign-in page, which asks for the setup code; a wrong code shows the
// agent's message, the right one makes the account and lands on the UI; sign out, sign in again.
// allow_local_admin is off, so the browser on loopback is just another client.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startAgent, type Agent } from '../../kit/agent.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';

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

  // The password typed twice: a mismatch is said by the page, and nothing is sent.
  const sent: string[] = [];
  page.on('request', (r) => { if (r.method() === 'POST') sent.push(new URL(r.url()).pathname); });
  await page.fill('input[name=setup_code]', 'AAAA-BBBB-CCCC');
  await page.fill('input[name=password]', 'browser password');
  await page.fill('input[data-confirms=password]', 'browser passwrod');
  await page.click('button');
  await page.waitForFunction(() => document.getElementById('error')?.textContent !== '');
  assert.equal(await page.textContent('#error'), 'The two passwords differ: type the same password twice.');
  assert.deepEqual(sent, [], 'nothing sent while the passwords differ');
  // Show password shows both, and hides them again.
  await page.check('[data-show-password]');
  assert.deepEqual(await page.$$eval('input[name=password], input[data-confirms]', (els) => els.map((e) => (e as HTMLInputElement).type)), ['text', 'text']);
  await page.uncheck('[data-show-password]');
  assert.deepEqual(await page.$$eval('input[name=password], input[data-confirms]', (els) => els.map((e) => (e as HTMLInputElement).type)), ['password', 'password']);
  await page.fill('input[data-confirms=password]', 'browser password');
  await page.click('button');
  await page.waitForFunction(() => document.getElementById('error')?.textContent !== 'The two passwords differ: type the same password twice.');
  assert.equal(await page.textContent('#error'), 'invalid setup code');
  assert.deepEqual(sent, ['/api/v1/auth/setup'], 'only the matching passwords were sent');

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

test('the sign-in page on a phone (390 px): no sideways scroll, fields and button a finger can hit (44 px)', { skip }, async () => {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  try {
    const page = await ctx.newPage();
    await page.goto(`https://127.0.0.1:${agent.httpsPort}/login`);
    await page.waitForSelector('form#login');
    const scroll = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(scroll, 0, 'no horizontal scroll');
    const heights = await page.$$eval('input[name], button, label.check', (els) => els.map((e) => [e.tagName + (e.getAttribute('name') ? '[' + e.getAttribute('name') + ']' : ''), e.getBoundingClientRect().height] as const));
    for (const [what, px] of heights) assert.ok(px >= 44, `${what} is ${px} px high`);
    if (process.env.PRINTBOX_SCREENSHOTS) await page.screenshot({ path: join(process.env.PRINTBOX_SCREENSHOTS, 'signin-phone.png') });
  } finally {
    await ctx.close();
  }
});
