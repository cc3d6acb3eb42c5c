// Roles in the browser: Chromium on a laptop of a namespace LAN (test/kit/lan.ts),
// not the box's loopback, so no local-admin rights; the agent in password mode. An admin adds a
// viewer from Settings; the viewer signs in, sees the printers and no control that writes, its
// settings read-only, and a write its page sends anyway is refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli, writeConfig } from '../../kit/agent.js';
import { createLan, lanUnavailable, startAgentInBox, type BoxAgent, type Lan } from '../../kit/lan.js';
import { chromiumMissing, gotoPage, launchChromium } from '../../kit/chromium.js';
import { device, ndjson } from '../../kit/seed.js';

const skip = chromiumMissing || lanUnavailable();
if (skip) console.log(`# roles UI tests skipped: ${skip}`);

const SAVED = 'ROLE-UI-1';
const FOUND = 'ROLE-UI-2';
// The buttons a viewer may see in the page's view: reads (the chart's periods and range, the
// pages-per-period choice) and their own password.
const READ_BUTTONS = new Set(['Day', 'Week', 'Month', 'Year', 'Show range', 'Days', 'Weeks', 'Months', 'Change password']);

describe('roles in the browser', { skip: skip || false }, () => {
  let lan: Lan;
  let box: BoxAgent;
  let browser: import('playwright-core').Browser;
  let base: string;

  before(async () => {
    lan = createLan();
    const config = await writeConfig({ authMode: 'password', allowLocalAdmin: true, listenAddress: '0.0.0.0' });
    const pw = await runCli(['passwd', 'tech'], { configPath: config.configPath, input: 'correct horse battery\n' });
    assert.equal(pw.code, 0, pw.stderr);
    box = await startAgentInBox(lan, {
      config,
      seed: ndjson([
        device(SAVED, { ip: '198.18.7.60', is_saved: true, manufacturer: 'Kyocera', model: 'TASKalfa 2554ci', location: 'Floor 3' }),
        device(FOUND, { ip: '198.18.7.61', manufacturer: 'Brother', model: 'HL-L5100DN' }),
      ]),
    });
    browser = await launchChromium({ netns: lan.laptopNs });
    base = `https://${lan.boxAddress}:${box.config.httpsPort}`;
  });
  after(async () => {
    await browser?.close();
    await box?.stop();
    lan?.destroy();
  });

  const signIn = async (user: string, password: string) => {
    const page = await browser.newPage({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 860 } });
    await gotoPage(page, `${base}/login?return_to=${encodeURIComponent('/#/printers')}`);
    await page.fill('input[name=username]', user);
    await page.fill('input[name=password]', password);
    await Promise.all([page.waitForURL(`${base}/#/printers`), page.press('input[name=password]', 'Enter')]);
    await page.waitForSelector(`#saved [data-serial="${SAVED}"]`);
    await page.waitForSelector('body[data-role]', { state: 'attached' }); // the page learned who it is
    return page;
  };
  /** The texts of the buttons a person can see and press in the view. */
  const pressable = (page: import('playwright-core').Page) =>
    // A column's sort button (sortable.js) only reads: not counted.
    page.$$eval('#view button:not(.sort)', (bs) => bs.filter((b) => (b as HTMLElement).offsetParent !== null && !(b as HTMLButtonElement).disabled).map((b) => (b.textContent ?? '').trim()));

  test('an admin adds a viewer from Settings', async () => {
    const page = await signIn('tech', 'correct horse battery');
    await gotoPage(page, `${base}/#/settings/accounts`);
    await page.waitForSelector('#accounts [data-account="tech"]');
    await page.fill('#s-account-username', 'office');
    await page.fill('#s-account-password', 'office staple battery');
    assert.equal(await page.inputValue('#s-account-role'), 'viewer', 'a new account is a viewer unless chosen otherwise');
    await page.click('#account-add button[type=submit]');
    await page.waitForSelector('#accounts [data-account="office"]');
    assert.equal(await page.textContent('#accounts-msg'), 'office was added.');
    const accounts = JSON.parse((await box.request({ path: '/api/v1/accounts', headers: { Accept: 'application/json' } })).body);
    assert.deepEqual(accounts.accounts.map((a: { username: string; role: string }) => `${a.username}:${a.role}`), ['office:viewer', 'tech:admin']);
    // The last admin cannot be made a viewer: the box's message is shown, and the role stays.
    await page.selectOption('#accounts [data-account="tech"] select', 'viewer');
    await page.waitForFunction(() => /last admin/.test(document.getElementById('accounts-msg')?.textContent ?? ''));
    assert.equal(await page.inputValue('#accounts [data-account="tech"] select'), 'admin');
    await page.close();
  });

  test('a viewer sees the printers and no control that writes; a write sent anyway is refused', async () => {
    const page = await signIn('office', 'office staple battery');
    assert.equal(await page.getAttribute('body', 'data-role'), 'viewer');
    assert.match(await page.textContent(`#saved [data-serial="${SAVED}"]`) ?? '', /TASKalfa 2554ci/);
    assert.deepEqual(await pressable(page), [], 'printers');

    await page.goto(`${base}/#/discovered`);
    await page.waitForSelector(`[data-hide="${FOUND}"]`, { state: 'attached' });
    assert.deepEqual(await pressable(page), [], 'discovered');

    await page.goto(`${base}/#/printer/${SAVED}`);
    await page.waitForSelector('#printer-title');
    assert.deepEqual((await pressable(page)).filter((t) => !READ_BUTTONS.has(t)), [], 'a printer');
    assert.equal(await page.$$eval('#edit input', (els) => els.filter((e) => !(e as HTMLInputElement).disabled).length), 0, 'asset fields read-only');
    assert.equal(await page.inputValue('#f-location'), 'Floor 3', 'and still shown');

    // Every part of Settings (#/settings/<part>): read-only but the own password.
    await page.goto(`${base}/#/settings`);
    await page.waitForSelector('#settings-discovery');
    const parts = await page.$$eval('nav.settings-parts a', (as) => as.map((a) => (a.getAttribute('href') ?? '').replace('#/settings/', '')));
    assert.ok(parts.length >= 9, parts.join());
    for (const part of parts) {
      await page.evaluate((p) => { location.hash = `#/settings/${p}`; }, part);
      await page.waitForSelector(`#settings-part[data-part="${part}"]`);
      assert.deepEqual((await pressable(page)).filter((t) => !READ_BUTTONS.has(t)), [], `settings, ${part}`);
      const editable = await page.$$eval('#view input, #view select, #view textarea',
        (els) => els.filter((e) => !(e as HTMLInputElement).disabled && !e.closest('[data-viewer-ok]')).length);
      assert.equal(editable, 0, `every setting read-only but the own password (${part})`);
    }
    assert.equal(await page.$('#accounts'), null, 'no account management');

    // The page's own request, as a script on it could send it: refused, nothing changed.
    const answer = await page.evaluate(async (serial) => {
      const r = await fetch('./devices/delete', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ serial }) });
      return { status: r.status, text: await r.text() };
    }, SAVED);
    assert.equal(answer.status, 403);
    assert.match(answer.text, /this account is a viewer/);
    assert.equal((await box.request({ path: `/api/devices/profile?serial=${SAVED}`, headers: { Accept: 'application/json' } })).status, 200, 'still there');
    await page.close();
  });
});
