// The Discovered page as a technician manages it, in Chromium on a laptop of a namespace
// LAN (test/kit/lan.ts: not the box's loopback, no local-admin rights), the agent in password
// mode, at 1280 and 390 px. Printers are real recordings served by snmpsim and found by a real scan:
// - a Dell S5830dn recording without its serial (prtGeneralSerialNumber removed) is listed by the key
//   the API documents for it, `MAC-<its ifPhysAddress>`;
// - the same recording without its serial and its MAC, on the LAN beside the box, is keyed by the MAC
//   the box saw on the wire (its neighbour table); on the box's own loopback (no neighbour entry) it
//   is not stored, and the page says why under "Printers that could not be listed";
// - when those printers later report their serial, the next scan joins the same records: no second
//   record appears.
// Then: hide, find again with "Show hidden" and the search, Unhide; a name given, shown on Discovered
// and on Printers; sorting by a header's button (aria-sort, the order, kept through a live update)
// on both pages; the navigation's count of printers awaiting saving; whole supply names; no
// horizontal scroll at 390 px; axe 0 serious/critical. The API: a viewer's Unhide and rename are 403,
// nothing changed; bad sort parameters are 400 naming the choices.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot, runCli, writeConfig } from '../../kit/agent.js';
import { addLaptopAddresses, createLan, lanRequests, lanUnavailable, startAgentInBox, type BoxAgent, type Lan, type LanRequest } from '../../kit/lan.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';
import { device, ndjson } from '../../kit/seed.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { deriveSnmprec } from '../../kit/snmprec.js';
import { until } from '../../kit/until.js';
import { accessible, fitsWidth } from '../../kit/page-checks.js';

const skip = chromiumMissing || lanUnavailable() || ensureSnmpsim();
if (skip) console.log(`# discovered-manage UI tests skipped: ${skip}`);

const ADMIN = 'tech';
const ADMIN_PASSWORD = 'correct horse battery';
const VIEWER = 'office';
const VIEWER_PASSWORD = 'office staple battery';
const DELL = fixturePath('librenms/dell-laser_s5830dn.snmprec');
const DELL_SERIAL = '7XQ1R92-132-13';
const SERIAL_OID = '1.3.6.1.2.1.43.5.1.1.17.1';
const MAC_OID = '1.3.6.1.2.1.2.2.1.6.2'; // ifPhysAddress of its Ethernet port: 00:21:b7:43:f5:81
const MAC_KEY = 'MAC-0021B743F581';
const LOOP_MAC = '127.0.36.1'; // no serial: keyed by its own MAC
const LOOP_BARE = '127.0.36.2'; // no serial, no MAC, no neighbour entry: not stored
const LAN_BARE = '198.18.7.4'; // no serial, no MAC of its own: keyed by the MAC the box saw
// Seeded discovered printers (addresses on the LAN: numeric order differs from text order).
const HP = 'DM-HP-0001';
const KYO = 'DM-KYO-0002';
const HIDDEN = 'DM-HID-0003';
const SAVED_Z = 'DM-S-0001';
const SAVED_A = 'DM-S-0002';
// Screenshots go to a temporary directory; PRINTBOX_UI_DOCS=1 copies them to docs/ui/.
const shots = mkdtempSync(join(tmpdir(), 'printbox-discovered-manage-shots-'));

type Page = import('playwright-core').Page;
interface Info { serial: string; ip: string; name?: string; hidden?: boolean; model?: string }

describe('the Discovered page: printers without a serial, hidden ones, names, sorting, the count', { skip: skip || false }, () => {
  let lan: Lan;
  let box: BoxAgent;
  let loopSim: SnmpSim;
  let lanSim: SnmpSim;
  let browser: import('playwright-core').Browser;
  let base: string;
  let dir: string;
  let wireKey: string;
  const pageErrors: string[] = [];
  const json = { 'Content-Type': 'application/json', Accept: 'application/json' };

  /** A request from the box's own loopback (the local admin: set-up and checks, not what is tested). */
  const local = async (path: string, body?: unknown) => {
    const r = await box.request(body === undefined ? { path, headers: { Accept: 'application/json' } } : { method: 'POST', path, headers: json, body: JSON.stringify(body) });
    assert.ok(r.status >= 200 && r.status < 300, `${path}: ${r.status} ${r.body}`);
    return JSON.parse(r.body);
  };
  const fromLaptop = (reqs: LanRequest[]) => lanRequests(lan, lan.laptop, box.config.httpsPort, reqs);
  const signInApi = async (username: string, password: string) => {
    const [r] = await fromLaptop([{ method: 'POST', path: '/api/v1/auth/login', headers: json, body: JSON.stringify({ username, password }) }]);
    assert.equal(r.status, 200, r.body);
    return (r.headers['set-cookie'] as string[]).find((c) => c.startsWith('pm_agent_session='))!.split(';')[0];
  };
  const everything = async (): Promise<Info[]> => {
    const r = await box.request({ path: '/devices/discovered?include_known=true&include_hidden=true', headers: { Accept: 'application/json' } });
    return JSON.parse(r.body);
  };
  /** A scan of the ranges, to its end (the scan's own state, not a time). */
  const scan = async () => {
    const started = await local('/discover', {});
    await until('the scan ended', async () => {
      const o = await local('/discover/status');
      return o.scan && o.scan.scan_id === started.scan_id && o.scan.state !== 'running' ? o : undefined;
    }, 120_000);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'printbox-discovered-manage-'));
    const dell = readFileSync(DELL, 'utf8');
    const noSerial = join(dir, 'no-serial.snmprec');
    writeFileSync(noSerial, deriveSnmprec(dell, { [SERIAL_OID]: null }));
    const bare = join(dir, 'bare.snmprec');
    writeFileSync(bare, deriveSnmprec(dell, { [SERIAL_OID]: null, [MAC_OID]: null }));
    const bareLan = join(dir, 'bare-lan.snmprec');
    writeFileSync(bareLan, deriveSnmprec(dell, { [SERIAL_OID]: null, [MAC_OID]: null }));
    lan = createLan();
    addLaptopAddresses(lan, [LAN_BARE]);
    wireKey = 'MAC-' + (JSON.parse(spawnSync('ip', ['-n', lan.laptopNs, '-j', 'link', 'show', 'dev', `pbxl${lan.tag}`], { encoding: 'utf8' }).stdout)[0].address as string).replace(/:/g, '').toUpperCase();
    loopSim = await startSnmpSim({ endpoints: [{ address: LOOP_MAC, recording: noSerial, switchable: true }, { address: LOOP_BARE, recording: bare }], port: 161, netns: lan.boxNs });
    lanSim = await startSnmpSim({ endpoints: [{ address: LAN_BARE, recording: bareLan, switchable: true }], port: 161, netns: lan.laptopNs });
    const config = await writeConfig({ authMode: 'password', allowLocalAdmin: true, listenAddress: '0.0.0.0' });
    for (const [user, password, role] of [[ADMIN, ADMIN_PASSWORD, 'admin'], [VIEWER, VIEWER_PASSWORD, 'viewer']]) {
      const pw = await runCli(['passwd', '--role', role, user], { configPath: config.configPath, input: `${password}\n` });
      assert.equal(pw.code, 0, pw.stderr);
    }
    box = await startAgentInBox(lan, {
      config,
      seed: ndjson([
        device(HP, { ip: '198.18.7.50', manufacturer: 'HP', model: 'LaserJet M404', printer_info: { discovery_methods: ['mdns'], detection_reasons: ['mdns: _ipp._tcp'] } }),
        device(KYO, { ip: '198.18.7.9', manufacturer: 'Kyocera', model: 'ECOSYS P2040dw', printer_info: { discovery_methods: ['wsd'] } }),
        device(HIDDEN, { ip: '198.18.7.51', manufacturer: 'Brother', model: 'HL-L2350DW', visible: false, printer_info: { discovery_methods: ['ssdp'] } }),
        device(SAVED_Z, { ip: '198.18.7.60', is_saved: true, manufacturer: 'Xerox', model: 'VersaLink B400' }),
        device(SAVED_A, { ip: '198.18.7.61', is_saved: true, manufacturer: 'Canon', model: 'imageRUNNER 2630' }),
      ]),
    });
    await local('/settings', {
      discovery: {
        subnet_scan: false, manual_ranges: true, ranges_text: [LOOP_MAC, LOOP_BARE, LAN_BARE].join('\n'),
        allowed_ranges: ['198.18.7.0/24', '127.0.36.0/24'], snmp_timeout_ms: 1500, discover_concurrency: 4,
      },
      snmp: { port: 161, communities: ['public'] },
    });
    await scan();
    browser = await launchChromium({ netns: lan.laptopNs });
    base = `https://${lan.boxAddress}:${box.config.httpsPort}`;
  });

  after(async () => {
    await browser?.close();
    await box?.stop();
    await loopSim?.stop();
    await lanSim?.stop();
    lan?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
    console.log(`# screenshots: ${shots}`);
    if (process.env.PRINTBOX_UI_DOCS) {
      for (const n of ['discovered-manage', 'discovered-manage-phone']) copyFileSync(join(shots, `${n}.png`), join(repoRoot, 'docs/ui', `${n}.png`));
    }
  });

  const signIn = async (width: number) => {
    const mobile = width < 640;
    const context = await browser.newContext({
      ignoreHTTPSErrors: true, locale: 'en-US', viewport: { width, height: 860 }, ...(mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
    });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(`page error: ${e.message}`));
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${base}/login?return_to=${encodeURIComponent('/#/discovered')}`);
    await page.fill('input[name=username]', ADMIN);
    await page.fill('input[name=password]', ADMIN_PASSWORD);
    await Promise.all([page.waitForURL(`${base}/#/discovered`), page.press('input[name=password]', 'Enter')]);
    await page.waitForSelector('#discovered tbody tr[data-serial]');
    return page;
  };
  const rowsOf = (page: Page, table = '#discovered') => page.$$eval(`${table} tbody tr[data-serial]`, (trs) => trs.map((tr) => (tr as HTMLElement).dataset.serial!));
  const navCount = (page: Page) => page.evaluate(() => {
    const c = document.getElementById('discovered-count')!;
    return c.hidden ? 0 : Number.parseInt(c.textContent ?? '', 10);
  });

  test('a printer without a serial is listed by its MAC key (its own, or the one the box saw); one with neither is shown as not stored, with why', async () => {
    const all = await everything();
    const byIp = (ip: string) => all.filter((p) => p.ip === ip);
    assert.deepEqual(byIp(LOOP_MAC).map((p) => p.serial), [MAC_KEY], 'keyed by its ifPhysAddress');
    assert.deepEqual(byIp(LAN_BARE).map((p) => p.serial), [wireKey], 'keyed by the MAC in the box\'s neighbour table');
    assert.deepEqual(byIp(LOOP_BARE), [], 'nothing to key it by: not stored');
    const o = await local('/discover/status');
    const unkeyed = o.unkeyed_printers.find((u: { ip: string }) => u.ip === LOOP_BARE);
    assert.ok(unkeyed, JSON.stringify(o.unkeyed_printers));
    assert.equal(unkeyed.model, 'S5830dn');
    assert.match(unkeyed.why, /without a serial or a MAC address/);
    assert.deepEqual(o.unkeyed_printers.map((u: { ip: string }) => u.ip), [LOOP_BARE], 'the keyed ones are not among them');

    for (const width of [1280, 390]) {
      const page = await signIn(width);
      const row = page.locator(`#discovered tr[data-serial="${MAC_KEY}"]`);
      assert.equal(await row.locator('code.key').textContent(), MAC_KEY);
      assert.equal(await row.locator('.key-note').textContent(), 'no serial reported: listed by its MAC address');
      assert.equal(await page.locator(`#discovered tr[data-serial="${wireKey}"] code.key`).textContent(), wireKey);
      // Status and how it was found.
      assert.equal(await row.locator('.state').textContent(), 'Answering');
      assert.equal(await row.locator('.found-by').textContent(), 'SNMP scan (range)');
      assert.equal(await page.locator(`#discovered tr[data-serial="${HP}"] .found-by`).textContent(), 'mDNS');
      assert.equal(await page.locator(`#discovered tr[data-serial="${KYO}"] .found-by`).textContent(), 'WS-Discovery');
      // Whole supply names, none cut off.
      const supplies = await row.locator('.supply .name').evaluateAll((els) => els.map((e) => ({ text: e.textContent, cut: e.scrollWidth > e.clientWidth })));
      assert.deepEqual(supplies.map((s) => s.text).sort(), ['black', 'drum', 'maintenance kit', 'roller kit']);
      assert.deepEqual(supplies.filter((s) => s.cut), [], `${width} px: no supply name is cut off`);
      // The one not stored, and why.
      await page.waitForSelector('#unkeyed-section:not([hidden])');
      const u = page.locator(`#unkeyed tr[data-unkeyed="${LOOP_BARE}"]`);
      assert.equal(await u.locator('td').nth(1).textContent(), 'Dell S5830dn');
      assert.equal(await u.locator('td').nth(2).textContent(), unkeyed.why);
      await fitsWidth(page, `discovered at ${width} px`);
      await accessible(page, `discovered at ${width} px`);
      await page.screenshot({ path: join(shots, width < 640 ? 'discovered-manage-phone.png' : 'discovered-manage.png'), fullPage: true, scale: 'css' });
      await page.context().close();
    }
    assert.deepEqual(pageErrors, []);
  });

  test('sorting by a header: the order and aria-sort follow, kept through a live update; at 390 px the same buttons sort the cards', async () => {
    for (const width of [1280, 390]) {
      const page = await signIn(width);
      const ipButton = page.locator('#discovered th[data-sort="ip"] button');
      assert.equal(await page.getAttribute('#discovered th[data-sort="ip"]', 'aria-sort'), 'none');
      await ipButton.click();
      assert.equal(await page.getAttribute('#discovered th[data-sort="ip"]', 'aria-sort'), 'ascending');
      const listed = await everything();
      const ipOf = new Map(listed.map((p) => [p.serial, p.ip]));
      const num = (ip: string) => ip.split('.').reduce((n, x) => n * 256 + Number(x), 0);
      const asc = (await rowsOf(page)).map((s) => ipOf.get(s)!);
      assert.deepEqual(asc, [...asc].sort((a, b) => num(a) - num(b)), `${width} px: by address, numerically`);
      assert.ok(asc.indexOf('198.18.7.9') < asc.indexOf('198.18.7.50'), '.9 before .50 (not text order)');
      await ipButton.click();
      assert.equal(await page.getAttribute('#discovered th[data-sort="ip"]', 'aria-sort'), 'descending');
      assert.deepEqual((await rowsOf(page)).map((s) => ipOf.get(s)!), [...asc].reverse());
      // Keyboard: the button is focused and Enter turns the order round again.
      await ipButton.focus();
      await page.keyboard.press('Enter');
      assert.equal(await page.getAttribute('#discovered th[data-sort="ip"]', 'aria-sort'), 'ascending');
      // A live update (a location set elsewhere): the list is drawn again, still sorted.
      const where = `Room ${width}`;
      await local('/devices/update', { serial: KYO, location: where });
      await page.waitForFunction(([s, w]) => document.querySelector(`#discovered tr[data-serial="${s}"]`)?.textContent?.includes(w), [KYO, where] as const);
      assert.equal(await page.getAttribute('#discovered th[data-sort="ip"]', 'aria-sort'), 'ascending');
      assert.deepEqual((await rowsOf(page)).map((s) => ipOf.get(s)!), asc, 'the sort survives the update');
      await fitsWidth(page, `sorted at ${width} px`);
      await accessible(page, `sorted at ${width} px`);
      await page.context().close();
    }
    assert.deepEqual(pageErrors, []);
  });

  test('hide, then find with Show hidden and the search, and Unhide; the navigation counts the printers awaiting saving', async () => {
    for (const width of [1280, 390]) {
      const page = await signIn(width);
      const awaiting = (await local('/discover/status')).awaiting_save as number;
      assert.equal(awaiting, 4, 'HP, Kyocera and the two MAC-keyed printers');
      await until('the navigation counts them', async () => (await navCount(page)) === awaiting || undefined);
      await page.click(`button[data-hide="${HP}"]`);
      await page.waitForSelector(`#discovered tr[data-serial="${HP}"]`, { state: 'detached' });
      await until('the count follows the hide', async () => (await navCount(page)) === awaiting - 1 || undefined);
      await page.fill('#discovered-search', 'M404');
      assert.match((await page.textContent('#discovered td.empty')) ?? '', /tick Show hidden/);
      await page.check('#show-hidden');
      const hp = page.locator(`#discovered tr[data-serial="${HP}"]`);
      await hp.waitFor();
      assert.deepEqual(await rowsOf(page), [HP], 'the search finds it among the hidden');
      assert.equal(await hp.locator('[data-hidden-badge]').textContent(), 'Hidden');
      await page.fill('#discovered-search', '');
      assert.ok((await rowsOf(page)).includes(HIDDEN), 'the one hidden before is there too');
      await hp.locator('button[data-unhide]').click();
      await page.waitForFunction((s) => !document.querySelector(`#discovered tr[data-serial="${s}"] [data-hidden-badge]`) && document.querySelector(`#discovered tr[data-serial="${s}"]`), HP);
      assert.equal((await everything()).find((p) => p.serial === HP)?.hidden, undefined, 'visible again');
      await until('the count follows the unhide', async () => (await navCount(page)) === awaiting || undefined);
      await page.uncheck('#show-hidden');
      await page.waitForSelector(`#discovered tr[data-serial="${HIDDEN}"]`, { state: 'detached' });
      await fitsWidth(page, `hidden at ${width} px`);
      await accessible(page, `hidden at ${width} px`);
      await page.context().close();
    }
    assert.deepEqual(pageErrors, []);
  });

  test('a name is given on Discovered, shown there and on Printers once saved; Printers sorts by a header', async () => {
    const page = await signIn(1280);
    await page.click(`button[data-name-edit="${MAC_KEY}"]`);
    await page.fill(`[data-name-form="${MAC_KEY}"] input`, 'Reception laser');
    await page.click(`[data-name-form="${MAC_KEY}"] button[type=submit]`);
    const row = page.locator(`#discovered tr[data-serial="${MAC_KEY}"]`);
    await page.waitForFunction((s) => document.querySelector(`#discovered tr[data-serial="${s}"] .printer-name`)?.textContent === 'Reception laser', MAC_KEY);
    assert.equal(await row.locator('button[data-name-edit]').getAttribute('aria-label'), 'Rename Reception laser');
    assert.equal((await local(`/api/devices/profile?serial=${MAC_KEY}`)).device.description, 'Reception laser');
    // Sorted by name: the given name counts, not the model.
    await page.click('#discovered th[data-sort="name"] button');
    const names = await page.$$eval('#discovered tbody .printer-name', (els) => els.map((e) => e.textContent ?? ''));
    assert.deepEqual(names, [...names].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' })));
    assert.ok(names.includes('Reception laser'));
    await row.locator('button[data-save]').click();
    await page.waitForSelector(`#discovered tr[data-serial="${MAC_KEY}"]`, { state: 'detached' });
    await until('the count follows the save', async () => (await navCount(page)) === 3 || undefined);
    await page.context().close();

    // On a phone: the same, and the form fits.
    const phone = await signIn(390);
    await phone.click(`button[data-name-edit="${wireKey}"]`);
    await phone.fill(`[data-name-form="${wireKey}"] input`, 'Stock room');
    await fitsWidth(phone, 'the name form at 390 px');
    await accessible(phone, 'the name form at 390 px');
    await phone.click(`[data-name-form="${wireKey}"] button[type=submit]`);
    await phone.waitForFunction((s) => document.querySelector(`#discovered tr[data-serial="${s}"] .printer-name`)?.textContent === 'Stock room', wireKey);
    assert.equal((await local(`/api/devices/profile?serial=${wireKey}`)).device.description, 'Stock room');
    await phone.context().close();

    for (const width of [1280, 390]) {
      const p = await signIn(width);
      await p.goto(`${base}/#/printers`);
      await p.waitForSelector(`#saved tr[data-serial="${MAC_KEY}"]`);
      assert.equal(await p.textContent(`#saved tr[data-serial="${MAC_KEY}"] .printer-name`), 'Reception laser');
      const serials = () => rowsOf(p, '#saved');
      assert.deepEqual(await serials(), [SAVED_Z, SAVED_A, MAC_KEY], 'serial order before a sort');
      await p.click('#saved th[data-sort="name"] button');
      await until('sorted by name', async () => JSON.stringify(await serials()) === JSON.stringify([SAVED_A, MAC_KEY, SAVED_Z]) || undefined);
      assert.equal(await p.getAttribute('#saved th[data-sort="name"]', 'aria-sort'), 'ascending');
      await p.click('#saved th[data-sort="name"] button');
      await until('and the other way', async () => JSON.stringify(await serials()) === JSON.stringify([SAVED_Z, MAC_KEY, SAVED_A]) || undefined);
      assert.equal(await p.getAttribute('#saved th[data-sort="name"]', 'aria-sort'), 'descending');
      assert.equal(await p.getAttribute('#saved th[data-sort="total"]', 'aria-sort'), 'none');
      await fitsWidth(p, `printers at ${width} px`);
      await accessible(p, `printers at ${width} px`);
      await p.context().close();
    }
    assert.deepEqual(pageErrors, []);
  });

  test('the API: hidden ones listed on request; a viewer cannot unhide or rename (403, nothing changed); bad sort parameters are 400', async () => {
    await local('/devices/update', { serial: KYO, description: 'Back office', visible: false });
    const hidden = (await everything()).find((p) => p.serial === KYO)!;
    assert.equal(hidden.hidden, true);
    assert.equal(hidden.name, 'Back office');
    assert.equal((await local('/devices/discovered')).some((p: Info) => p.serial === KYO), false, 'not without include_hidden');
    const viewer = await signInApi(VIEWER, VIEWER_PASSWORD);
    const admin = await signInApi(ADMIN, ADMIN_PASSWORD);
    const update = (cookie: string, body: unknown): LanRequest => ({ method: 'POST', path: '/devices/update', headers: { ...json, Cookie: cookie }, body: JSON.stringify(body) });
    const [unhide, rename, list] = await fromLaptop([
      update(viewer, { serial: KYO, visible: true }), update(viewer, { serial: KYO, description: 'x' }),
      { path: '/devices/discovered?include_hidden=true', headers: { Accept: 'application/json', Cookie: viewer } }]);
    assert.equal(unhide.status, 403, unhide.body);
    assert.equal(rename.status, 403, rename.body);
    assert.match(unhide.body, /viewer/);
    assert.ok((JSON.parse(list.body) as Info[]).some((p) => p.serial === KYO && p.hidden), 'a viewer reads the hidden ones');
    const after = (await everything()).find((p) => p.serial === KYO)!;
    assert.equal(after.hidden, true, 'still hidden');
    assert.equal(after.name, 'Back office', 'name unchanged');
    const [ok, badSort, badOrder, proto] = await fromLaptop(['/api/printers?sort=total&order=desc', '/api/printers?sort=colour_name', '/api/printers?sort=name&order=sideways', '/api/printers?sort=__proto__']
      .map((path) => ({ path, headers: { Accept: 'application/json', Cookie: admin } })));
    assert.equal(ok.status, 200, ok.body);
    assert.equal(badSort.status, 400);
    assert.equal(badSort.body.trim(), 'invalid sort parameter: one of name, last_seen, total, mono, colour');
    assert.equal(badOrder.status, 400);
    assert.equal(badOrder.body.trim(), 'invalid order parameter: one of asc, desc');
    assert.equal(proto.status, 400);
  });

  test('the same printers reporting their serial later join their records: no second record', async () => {
    const before = await everything();
    const withSerial = join(dir, 'with-serial.snmprec');
    writeFileSync(withSerial, readFileSync(DELL, 'utf8'));
    const lanWithSerial = join(dir, 'lan-with-serial.snmprec');
    writeFileSync(lanWithSerial, deriveSnmprec(readFileSync(DELL, 'utf8'), { [MAC_OID]: null }));
    loopSim.switchRecording(LOOP_MAC, withSerial);
    lanSim.switchRecording(LAN_BARE, lanWithSerial);
    await scan();
    const now = await everything();
    assert.deepEqual(now.filter((p) => p.ip === LOOP_MAC).map((p) => p.serial), [MAC_KEY]);
    assert.deepEqual(now.filter((p) => p.ip === LAN_BARE).map((p) => p.serial), [wireKey]);
    assert.equal(now.some((p) => p.serial === DELL_SERIAL), false, 'no record under the serial reported later');
    assert.deepEqual(now.map((p) => p.serial).sort(), before.map((p) => p.serial).sort(), 'the same records, no more');
    assert.equal(now.find((p) => p.serial === MAC_KEY)?.name, 'Reception laser', 'the name stays with the record');
  });
});
