// Settings a person can move through, in Chromium at 1280 px and 390 px against a real
// agent in password mode, signed in as an admin: the parts of Settings (#/settings/<part>), a
// refused value said in plain words next to its field, the unsaved-edits question when switching
// part, and trust from the UI: a CA certificate uploaded for the mail server (the real SMTP server
// of test/kit/smtp.ts, STARTTLS with a certificate from a private CA) and for the central
// server (PrintMaster's own server, serving a certificate from another private CA in its custom
// TLS mode). Before the upload the box says in plain words who failed and what to do; after it,
// the message is delivered and the box is online, without a restart.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli, startAgent, type Agent } from '../../kit/agent.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';
import { issueServerCert, makeCa, type Pems } from '../../kit/private-ca.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { startSmtp, type SmtpServer } from '../../kit/smtp.js';
import { accessible, fitsWidth } from '../../kit/page-checks.js';

type Page = import('playwright-core').Page;
const skip = chromiumMissing || printmasterUnavailable();
if (skip) console.log(`# settings parts UI tests skipped: ${skip}`);

const USER = 'tech';
const PASSWORD = 'correct horse battery';
const OPS = 'ops@example.test';
const WIDTHS = [
  { name: 'desktop', viewport: { width: 1280, height: 860 }, mobile: false },
  { name: 'phone', viewport: { width: 390, height: 844 }, mobile: true },
] as const;
const PARTS = ['Discovery', 'SNMP', 'Polling and alerts', 'Notifications', 'Central server', 'Accounts', 'Billing and order list', 'Updates', 'Box', 'Backup'];

describe('settings in parts', { skip: skip || false }, () => {
  let agent: Agent;
  let pm: PmServer;
  let smtp: SmtpServer;
  let mailCa: Pems;
  let pmCa: Pems;
  let browser: import('playwright-core').Browser;
  let base: string;
  const problems: string[] = [];

  before(async () => {
    mailCa = await makeCa('Site Mail CA');
    pmCa = await makeCa('Site Server CA');
    const mailCert = await issueServerCert(mailCa, ['127.0.0.1']);
    const pmCert = await issueServerCert(pmCa, ['127.0.0.1']);
    smtp = await startSmtp({ cert: mailCert.cert, key: mailCert.key, users: { box: 'mail-secret-1' } });
    pm = await startPrintmaster({ tls: { ...pmCert, ca: pmCa.cert } });
    agent = await startAgent({ authMode: 'password', allowLocalAdmin: false });
    const made = await runCli(['passwd', USER], { configPath: agent.configPath, input: `${PASSWORD}\n` });
    assert.equal(made.code, 0, made.stderr);
    browser = await launchChromium();
    base = `https://127.0.0.1:${agent.httpsPort}`;
  });
  after(async () => {
    await browser?.close();
    await agent?.stop();
    await smtp?.stop();
    await pm?.kill();
  });

  /** A page signed in as the admin, at a width; every leave question answered by `answer`. */
  async function signIn(w: (typeof WIDTHS)[number], answer: (message: string) => boolean): Promise<Page> {
    const page = await browser.newPage({ ignoreHTTPSErrors: true, viewport: w.viewport, isMobile: w.mobile, hasTouch: w.mobile });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) problems.push(m.text()); });
    page.on('dialog', (d) => void (answer(d.message()) ? d.accept() : d.dismiss()));
    await page.goto(`${base}/login?return_to=${encodeURIComponent('/#/settings')}`);
    await page.fill('input[name=username]', USER);
    await page.fill('input[name=password]', PASSWORD);
    await Promise.all([page.waitForURL(`${base}/#/settings`), page.press('input[name=password]', 'Enter')]);
    await page.waitForSelector('#settings-part[data-part="discovery"]');
    return page;
  }
  /** The settings as the box has them (asked by the signed-in page). */
  const settingsNow = (page: Page) => page.evaluate(() => fetch('./settings', { headers: { Accept: 'application/json' } }).then((r) => r.json()));
  const errorOf = (page: Page, id: string) =>
    page.waitForFunction((i) => (document.getElementById(i)?.textContent ?? '') !== '', id).then(() => page.textContent(`#${id}`));

  for (const w of WIDTHS) {
    test(`${w.name} (${w.viewport.width} px): the parts, a refusal in plain words next to its field, and the question when switching part with unsaved edits`, async () => {
      const asked: string[] = [];
      let leave = false;
      const page = await signIn(w, (m) => (asked.push(m), leave));
      try {
        // One part at a time; the list names them all, the one shown marked current.
        assert.deepEqual((await page.$$eval('nav.settings-parts a', (as) => as.map((a) => a.textContent))), PARTS);
        assert.equal(await page.getAttribute('#settings-part-discovery', 'aria-current'), 'page');
        assert.equal(await page.locator('#settings-snmp').count(), 0, 'only the part chosen is on the page');
        await fitsWidth(page, 'settings');
        await accessible(page, 'settings, discovery');
        const height = (await page.evaluate('document.documentElement.scrollHeight')) as number;
        assert.ok(height < 5191, `one part, not the whole page: ${height} px`);
        // Each link a touch target of at least 44 px.
        for (const box of await page.$$eval('nav.settings-parts a', (as) => as.map((a) => a.getBoundingClientRect().height))) assert.ok(box >= 44, `${box} px`);

        await page.click('#settings-part-snmp');
        await page.waitForSelector('#settings-part[data-part="snmp"]');
        assert.equal(new URL(page.url()).hash, '#/settings/snmp');
        assert.equal(await page.getAttribute('#settings-part-snmp', 'aria-current'), 'page');
        assert.equal(await page.locator('#settings-discovery').count(), 0);

        // A key too short: the box's plain words under that field, no internal key; nothing saved.
        const before = await settingsNow(page);
        await page.click('button:text("Add an SNMPv3 user")');
        await page.fill('#s-snmp-v3-0--user', 'tech');
        await page.fill('#s-snmp-v3-0--auth_key', 'short');
        await page.fill('#s-snmp-v3-0--priv_key', 'privsecret');
        await page.click('#settings-snmp button[type=submit]');
        assert.equal(await errorOf(page, 's-snmp-v3-0--auth_key-err'), 'SNMPv3 user 1: the authentication key needs at least 8 characters');
        assert.equal(await page.getAttribute('#s-snmp-v3-0--auth_key', 'aria-invalid'), 'true');
        assert.equal(await page.textContent('#settings-snmp-msg'), 'Not saved: see the field marked above. Nothing was changed.');
        assert.doesNotMatch((await page.textContent('#settings-snmp')) ?? '', /snmp\.v3|auth_key/);
        assert.deepEqual(await settingsNow(page), before, 'nothing changed');
        await fitsWidth(page, 'settings, SNMP with an error');
        await accessible(page, 'settings, SNMP with an error');

        // Switching part with those edits unsaved asks; staying keeps them, where they were.
        await page.click('#settings-part-polling');
        await page.waitForFunction(() => location.hash === '#/settings/snmp');
        assert.deepEqual(asked, ['The SNMP section has changes that are not saved. Leave this page without saving?']);
        assert.equal(await page.inputValue('#s-snmp-v3-0--auth_key'), 'short', 'staying keeps the edits');
        assert.equal(await page.getAttribute('#settings-part-snmp', 'aria-current'), 'page');
        leave = true;
        await page.click('#settings-part-polling');
        await page.waitForSelector('#settings-part[data-part="polling"]');
        assert.equal(asked.length, 2);
        assert.deepEqual(await settingsNow(page), before, 'leaving saved nothing');

        // Another refusal in its own words; then nothing edited: switching asks nothing.
        await page.fill('#s-collection-interval_minutes', '0');
        await page.click('#settings-polling button[type=submit]');
        assert.equal(await errorOf(page, 's-collection-interval_minutes-err'), 'The polling interval (minutes) needs a whole number from 1 to 1440');
        await page.fill('#s-collection-interval_minutes', '20');
        await page.click('#settings-polling button[type=submit]');
        await page.waitForFunction(() => document.getElementById('settings-polling-msg')?.textContent === 'Saved.');
        assert.equal(((await settingsNow(page)) as any).collection.interval_minutes, 20);
        await page.click('#settings-part-backup');
        await page.waitForSelector('#backup');
        assert.equal(asked.length, 2, 'no question after saving');
        // A part's own address opens it.
        await page.goto(`${base}/#/settings/accounts`);
        await page.waitForSelector('#settings-part[data-part="accounts"] #settings-account');
        await fitsWidth(page, 'settings, accounts');
      } finally {
        await page.close();
      }
      assert.deepEqual(problems, []);
    });
  }

  test('desktop: the mail server\'s encryption choice sets its port and hint; its CA uploaded from a file: refused in plain words before, delivered after', async () => {
    const page = await signIn(WIDTHS[0], () => true);
    try {
      await page.click('#settings-part-notifications');
      await page.waitForSelector('#settings-notifications');
      // None (plain text): no word of a certificate, no CA to give; the port follows the choice.
      await page.selectOption('#s-notifications-smtp_security', 'none');
      assert.equal(await page.inputValue('#s-notifications-smtp_port'), '25');
      const plainHint = (await page.textContent('#s-notifications-smtp_security-hint')) ?? '';
      assert.match(plainHint, /^Plain text: /);
      assert.doesNotMatch(plainHint, /certificate/i);
      assert.equal(await page.isHidden('#s-notifications-ca_pem'), true);
      await page.selectOption('#s-notifications-smtp_security', 'tls');
      assert.equal(await page.inputValue('#s-notifications-smtp_port'), '465');
      await page.selectOption('#s-notifications-smtp_security', 'starttls');
      assert.equal(await page.inputValue('#s-notifications-smtp_port'), '587');
      assert.match((await page.textContent('#s-notifications-smtp_security-hint')) ?? '', /certificate is verified/);
      assert.equal(await page.isVisible('#s-notifications-ca_pem'), true);

      await page.fill('#s-notifications-smtp_host', '127.0.0.1');
      await page.fill('#s-notifications-smtp_port', String(smtp.port));
      await page.fill('#s-notifications-smtp_user', 'box');
      await page.fill('#s-notifications-smtp_password', 'mail-secret-1');
      await page.fill('#s-notifications-smtp_from', 'box@example.test');
      await page.click('#notify-add-rule');
      await page.fill('#s-notifications-recipients-0--emails', OPS);
      await page.click('#settings-notifications button[type=submit]');
      await page.waitForFunction(() => document.getElementById('settings-notifications-msg')?.textContent === 'Saved.');
      // Before the CA: who, what failed and what to do; not OpenSSL's words.
      await page.click('#notify-test');
      await page.waitForSelector('#notify-test-result li');
      const refused = (await page.textContent('#notify-test-result li')) ?? '';
      assert.equal(refused, `Not delivered to ${OPS}: the mail server at 127.0.0.1:${smtp.port}: its certificate comes from a CA this box does not know: upload its CA certificate in Settings → Notifications (Trusted CA certificate)`);
      assert.doesNotMatch(refused, /use-system-ca|unable to/);
      assert.equal(smtp.received.length, 0);

      // The server's own certificate is not a CA: refused next to the field, saying so.
      const leafFile = { name: 'mail-server.crt', mimeType: 'application/x-x509-ca-cert', buffer: Buffer.from((await issueServerCert(mailCa, ['127.0.0.1'])).cert) };
      await page.setInputFiles('#s-notifications-ca_pem-file', leafFile);
      await page.waitForFunction(() => /^Read mail-server\.crt/.test(document.getElementById('s-notifications-ca_pem-file-msg')?.textContent ?? ''));
      assert.match(await page.inputValue('#s-notifications-ca_pem'), /^-----BEGIN CERTIFICATE-----/);
      await page.click('#settings-notifications button[type=submit]');
      assert.equal(await errorOf(page, 's-notifications-ca_pem-err'),
        "The mail server's CA certificate: the certificate for 127.0.0.1 is a server's own certificate issued by Site Mail CA, not a CA: give the CA certificate that issued it");
      assert.equal(((await settingsNow(page)) as any).notifications.ca_pem, '', 'nothing changed');
      await accessible(page, 'notifications, a refused certificate');

      // The CA's file: saved (the mail password goes to a new trust: the account's password asked).
      await page.setInputFiles('#s-notifications-ca_pem-file', { name: 'site-mail-ca.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from(mailCa.cert) });
      await page.waitForFunction(() => /^Read site-mail-ca\.pem/.test(document.getElementById('s-notifications-ca_pem-file-msg')?.textContent ?? ''));
      await page.click('#settings-notifications button[type=submit]');
      const prompt = '#settings-notifications .confirm-password';
      await page.waitForSelector(prompt);
      await page.fill(`${prompt} input[type=password]`, PASSWORD);
      await page.click(`${prompt} button.primary`);
      await page.waitForFunction(() => document.getElementById('settings-notifications-msg')?.textContent === 'Saved.');
      assert.equal(((await settingsNow(page)) as any).notifications.ca_pem, mailCa.cert.trim());
      await page.click('#notify-test');
      await page.waitForSelector(`#notify-test-result li.okmsg`);
      assert.equal(await page.textContent('#notify-test-result li'), `Delivered to ${OPS}`);
      assert.equal(smtp.received.length, 1);
      assert.equal(smtp.received[0].secure, true);
    } finally {
      await page.close();
    }
  });

  test('phone: the central server (PrintMaster, a private CA): its certificate refused in plain words in the link\'s state, online once its CA is uploaded', async () => {
    const page = await signIn(WIDTHS[1], () => true);
    try {
      await page.click('#settings-part-server');
      await page.waitForSelector('#settings-server');
      await page.fill('#s-server-url', pm.url);
      await page.fill('#s-server-enrollment_token', pm.token);
      await page.click('#settings-server button[type=submit]');
      await page.waitForFunction(() => document.getElementById('settings-server-msg')?.textContent === 'Saved.');
      const port = new URL(pm.url).port;
      await page.waitForFunction(() => /certificate/.test(document.getElementById('server-link')?.textContent ?? ''), undefined, { timeout: 60_000 });
      const state = (await page.textContent('#server-link')) ?? '';
      assert.match(state, new RegExp(`registration failed: the central server at 127\\.0\\.0\\.1:${port}: its certificate comes from a CA this box does not know: upload its CA certificate in Settings → Central server`));
      assert.doesNotMatch(state, /use-system-ca|unable to/);
      await fitsWidth(page, 'central server, not trusted');

      await page.setInputFiles('#s-server-ca_pem-file', { name: 'site-server-ca.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from(pmCa.cert) });
      await page.waitForFunction(() => /^Read site-server-ca\.pem: save to trust it/.test(document.getElementById('s-server-ca_pem-file-msg')?.textContent ?? ''));
      assert.equal(await page.inputValue('#s-server-ca_pem'), pmCa.cert.trim());
      await page.click('#settings-server button[type=submit]');
      // The enrollment token would now go where the new CA lets someone be the server: asked first.
      const prompt = '#settings-server .confirm-password';
      await page.waitForSelector(prompt);
      await page.fill(`${prompt} input[type=password]`, PASSWORD);
      await page.click(`${prompt} button.primary`);
      await page.waitForFunction(() => document.getElementById('settings-server-msg')?.textContent === 'Saved.');
      await page.waitForFunction(() => document.querySelector('#server-link .badge')?.textContent === 'online', undefined, { timeout: 120_000 });
      assert.doesNotMatch((await page.textContent('#server-link')) ?? '', /Last error/);
      assert.equal(pm.query('SELECT agent_id FROM agents').length, 1, 'PrintMaster has the box');
      await fitsWidth(page, 'central server, online');
      await accessible(page, 'central server, online');
    } finally {
      await page.close();
    }
    assert.deepEqual(problems, []);
  });
});
