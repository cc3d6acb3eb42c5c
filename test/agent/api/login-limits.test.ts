// Sign-in limits against hosts on the site network. A real agent in password mode, in
// its own network namespace, attacked from other hosts (addresses of the laptop namespace,
// test/kit/lan.ts): concurrent bursts of guesses get no more password checks than the
// allowance (counted from the 401 and 429 answers) and the right password inside one is refused;
// another user's sign-in during the burst does not wait for the burst's queued password checks
// (the order of the checks in the agent's log, not a time); hosts locking an account
// do not lock out a technician whose browser holds a device cookie (one without is told 429 with
// Retry-After); wrong setup codes from other hosts do not block onboarding; an unknown user name
// costs what a wrong password costs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, writeConfig } from '../../kit/agent.js';
import {
  addLaptopAddresses, createLan, lanBurst, lanRequests, lanUnavailable, startAgentInBox,
  type BoxAgent, type Lan, type LanRequest, type LanResponse,
} from '../../kit/lan.js';

const skip = lanUnavailable();
if (skip) console.log(`# login limit tests skipped: ${skip}`);

const ALLOWANCE = 5; // attempts a key gets before its first lock (src/auth/login-limiter.ts)
const ADMIN_PW = 'technician first pw';
const PW = { burst: 'burst account pw', other: 'other user pw', tech: 'tech account pw' };
const host = (n: number) => `198.18.7.${n}`;
const SETUP_ATTACKERS = [10, 11, 12, 13].map(host);
const TIMING = host(20);
const BURSTER = host(30);
const OTHER_USER = host(31);
/** Hosts guessing names that do not exist beside the burst: 5 checks each (a dummy hash costs what a real one does). */
const QUEUE_FILLERS = [32, 33, 34].map(host);
const TECH = host(40);
const LOCKERS = [41, 42, 43, 44].map(host);

const post = (path: string, value: unknown, from?: string, cookie?: string): LanRequest => ({
  method: 'POST',
  path,
  from,
  headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(cookie ? { Cookie: cookie } : {}) },
  body: JSON.stringify(value),
});
const login = (username: string, password: string, from?: string, cookie?: string) =>
  post('/api/v1/auth/login', { username, password }, from, cookie);
/** `name=value` of the cookie the response sets, and its attributes. */
function cookieOf(r: LanResponse, name: string): { pair: string; attrs: Map<string, string> } | undefined {
  const c = ((r.headers['set-cookie'] ?? []) as string[]).find((v) => v.startsWith(`${name}=`));
  if (!c) return undefined;
  const [pair, ...rest] = c.split(';').map((s) => s.trim());
  return { pair, attrs: new Map(rest.map((a) => [a.split('=')[0].toLowerCase(), a.split('=')[1] ?? ''] as const)) };
}
const show = (r: LanResponse) => `${r.status} ${JSON.stringify(r.body.slice(0, 200))}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const count = (rs: LanResponse[], status: number) => rs.filter((r) => r.status === status).length;

describe('sign-in limits against hosts on the site network', { skip: skip ?? false }, () => {
  let lan: Lan;
  let box: BoxAgent; // its accounts made with the CLI
  let fresh: BoxAgent; // no account yet: onboarding
  const port = () => box.config.httpsPort;
  const from = (address: string, reqs: LanRequest[]) => lanRequests(lan, address, port(), reqs);

  before(async () => {
    lan = createLan();
    addLaptopAddresses(lan, [...SETUP_ATTACKERS, TIMING, BURSTER, OTHER_USER, ...QUEUE_FILLERS, TECH, ...LOCKERS]);
    const config = await writeConfig({ authMode: 'password', allowLocalAdmin: false, listenAddress: '0.0.0.0' });
    for (const [user, pw] of Object.entries({ ...PW, admin: ADMIN_PW })) {
      const r = await runCli(['passwd', user], { configPath: config.configPath, input: pw + '\n' });
      assert.equal(r.code, 0, r.stderr);
    }
    [box, fresh] = await Promise.all([
      startAgentInBox(lan, { config, readyTimeoutMs: 90_000 }),
      startAgentInBox(lan, { authMode: 'password', allowLocalAdmin: false, readyTimeoutMs: 90_000 }),
    ]);
  });
  after(async () => {
    await Promise.all([box?.stop(), fresh?.stop()]);
    lan?.destroy();
  });

  test('onboarding: the right setup code gets in while four other hosts send wrong codes', async () => {
    const code = readFileSync(join(fresh.config.dataDir, 'setup-code'), 'utf8').trim();
    const wrong = (address: string, i: number) =>
      post('/api/v1/auth/setup', { setup_code: `AAAA-BBBB-${String(1000 + i)}`, username: 'admin', password: 'attacker pw 123' }, address);
    const attack = (n: number) => lanBurst(lan, fresh.config.httpsPort, SETUP_ATTACKERS.flatMap((a) => Array.from({ length: n }, (_, i) => wrong(a, i))));
    const first = await attack(12);
    for (const a of SETUP_ATTACKERS) {
      const mine = first.filter((_, i) => SETUP_ATTACKERS[Math.floor(i / 12)] === a);
      assert.ok(mine.every((r) => r.status === 401 || r.status === 429), mine.map(show).join('\n'));
      assert.ok(count(mine, 401) <= ALLOWANCE, `${a}: ${count(mine, 401)} codes checked`);
      assert.match(mine.find((r) => r.status === 429)!.body, /^too many failed attempts from this address: try again in \d+ s\n$/);
    }
    // Every attacker is locked out now; the technician, from another host, is not.
    const [, [made]] = await Promise.all([
      attack(6),
      lanRequests(lan, lan.laptop, fresh.config.httpsPort, [post('/api/v1/auth/setup', { setup_code: code, username: 'admin', password: ADMIN_PW })]),
    ]);
    assert.equal(made.status, 201, show(made));
    assert.ok(cookieOf(made, 'pm_agent_device') && cookieOf(made, 'pm_agent_session'), 'a session and a device cookie');
  });

  test('an unknown user name costs what a wrong password costs (medians within a factor of 2)', async () => {
    const rounds = 7;
    const answers = await from(
      TIMING,
      // A right password after each pair clears this address's count: every attempt is checked.
      Array.from({ length: rounds }, (_, i) => [login('admin', 'wrong password'), login(`nobody-${i}`, 'wrong password'), login('admin', ADMIN_PW)]).flat(),
    );
    const wrongPw: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const [w, u, ok] = answers.slice(3 * i, 3 * i + 3);
      assert.equal(w.status, 401, show(w));
      assert.equal(u.status, 401, show(u));
      assert.equal(ok.status, 200, show(ok));
      wrongPw.push(w.ms!);
      unknown.push(u.ms!);
    }
    const ratio = median(unknown) / median(wrongPw);
    console.log(`# unknown user ${median(unknown)} ms, wrong password ${median(wrongPw)} ms (medians of ${rounds}): ratio ${ratio.toFixed(2)}`);
    assert.ok(ratio > 0.5 && ratio < 2, `unknown ${unknown.join(' ')} ms; wrong password ${wrongPw.join(' ')} ms`);
  });

  test('100 concurrent wrong passwords: at most the allowance checked, the right one in the burst refused, another user not queued behind the burst', async () => {
    const alone = await from(OTHER_USER, Array.from({ length: 3 }, () => login('other', PW.other)));
    assert.ok(alone.every((r) => r.status === 200), alone.map(show).join('\n'));
    // Beside the burst, three more hosts guess unknown names: 15 more password checks queued (the
    // burst alone gets only 5 checked), enough that the queue cannot drain while the other user's
    // request is on its way. Those go first; the other user's request and the burst's 100 start
    // once they are written, the other user's first.
    const fillers = QUEUE_FILLERS.flatMap((a) => Array.from({ length: ALLOWANCE }, (_, i) => login(`nobody-${a}-${i}`, `wrong guess ${i}`, a)));
    const logFrom = box.stdout().length;
    const answers = await lanBurst(lan, port(), [
      ...fillers,
      { ...login('other', PW.other, OTHER_USER), afterFirstWritten: fillers.length },
      ...Array.from({ length: 100 }, (_, i) => ({ ...login('burst', `wrong guess ${i}`, BURSTER), afterFirstWritten: fillers.length })),
      { ...login('burst', PW.burst, BURSTER), afterWritten: true },
    ]);
    const filled = answers.slice(0, fillers.length);
    const other = answers[fillers.length];
    const burst = answers.slice(fillers.length + 1, fillers.length + 101);
    const right = answers[fillers.length + 101];
    assert.ok(filled.every((r) => r.status === 401), filled.map(show).join('\n'));
    assert.ok(burst.every((r) => r.status === 401 || r.status === 429), burst.filter((r) => r.status !== 401 && r.status !== 429).map(show).join('\n'));
    const checked = count(burst, 401);
    // The allowance: 5 at once, then one more at each lock's end (1 s, then 2 s, 4 s ... later)
    // while the burst's requests are still arriving on a slow machine.
    const span = Math.max(...burst.map((r) => r.ms!)) / 1000;
    const allowance = ALLOWANCE + [1, 3, 7, 15, 31].filter((s) => s <= span).length;
    assert.ok(checked >= 1 && checked <= allowance, `${checked} passwords checked in ${span} s (allowance ${allowance})`);
    assert.equal(right.status, 429, `the right password inside the burst: ${show(right)}`);
    assert.ok(Number(right.headers['retry-after']) >= 1);
    assert.equal(cookieOf(right, 'pm_agent_session'), undefined);
    assert.equal(other.status, 200, show(other));

    // The order the agent ended the checks in (its log): the other user's sign-in came before the
    // checks queued ahead of it were done. The hash queue takes the address with nothing running
    // first, so it waited for about one check per guessing address; in arrival order it would
    // have come after all 15 of the fillers' (written before it was even sent), and unqueued (libuv's
    // 4 threads) after all but the last 3 at most.
    const ended = box
      .stdout()
      .slice(logFrom)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; client?: string; user?: string })
      .filter((e) => /failed sign-in attempt/.test(e.msg ?? '') || (e.msg === 'login' && e.user === 'other'));
    const at = ended.findIndex((e) => e.msg === 'login');
    assert.ok(at >= 0, 'the other user\'s sign-in is in the log');
    const fillersAfter = ended.slice(at + 1).filter((e) => QUEUE_FILLERS.includes(e.client ?? '')).length;
    const fillersBefore = ended.slice(0, at).filter((e) => QUEUE_FILLERS.includes(e.client ?? '')).length;
    console.log(
      `# burst of 100: ${checked} passwords checked, ${count(burst, 429)} refused; the other user's sign-in ended after ${at} checks ` +
        `(${fillersBefore} of the fillers' 15, before ${fillersAfter} of them), in ${other.ms} ms (its TLS handshake ${other.tlsMs} ms; alone: ${median(alone.map((r) => r.ms!))} ms)`,
    );
    assert.equal(fillersBefore + fillersAfter, fillers.length, 'every filler check logged');
    assert.ok(fillersAfter > 3, `the other user's sign-in waited for ${fillersBefore} of the ${fillers.length} checks queued before it`);
  });

  test('hosts locking the account out do not lock out a technician whose browser signed in before', async () => {
    const [first, admin] = await from(TECH, [login('tech', PW.tech), login('admin', ADMIN_PW)]);
    assert.equal(first.status, 200, show(first));
    assert.equal(admin.status, 200, show(admin));
    const adminDevice = cookieOf(admin, 'pm_agent_device')?.pair;
    const device = cookieOf(first, 'pm_agent_device')!;
    assert.ok(device, 'a device cookie is given at sign-in');
    assert.equal(device.attrs.get('path'), '/api/v1/auth');
    assert.equal(device.attrs.get('samesite'), 'Strict');
    assert.ok(device.attrs.has('httponly') && device.attrs.has('secure'));
    assert.equal(device.attrs.get('max-age'), String(400 * 86400));

    // Four hosts guess, each retrying as the account's lock ends, until 9 guesses have been checked:
    // the 9th locks the account for 16 s.
    let checked = 0;
    const deadline = Date.now() + 120_000;
    for (let i = 0; checked < 9; i++) {
      assert.ok(Date.now() < deadline, `only ${checked} guesses checked in 2 minutes`);
      const rs = await lanBurst(lan, port(), LOCKERS.map((a, j) => login('tech', `guess ${i}-${j}`, a)));
      assert.ok(rs.every((r) => r.status === 401 || r.status === 429), rs.map(show).join('\n'));
      checked += count(rs, 401);
    }
    assert.ok(checked <= 12);

    const [cookie, plain, forged, foreign] = await from(TECH, [
      login('tech', PW.tech, TECH, device.pair),
      login('tech', PW.tech, TECH),
      login('tech', PW.tech, TECH, device.pair.replace(/.(?=\.[^.]*$)/, (c) => (c === 'A' ? 'B' : 'A'))),
      login('tech', PW.tech, TECH, adminDevice),
    ]);
    assert.equal(cookie.status, 200, `with its device cookie: ${show(cookie)}`);
    assert.equal(plain.status, 429, `without one: ${show(plain)}`);
    assert.match(plain.body, /^too many failed attempts for this account \(a browser that has signed in to it here before is not held back\): try again in \d+ s\n$/);
    assert.ok(Number(plain.headers['retry-after']) >= 1, 'Retry-After');
    assert.equal(forged.status, 429, `a forged device cookie counts for nothing: ${show(forged)}`);
    assert.equal(foreign.status, 429, `another account's device cookie counts for nothing: ${show(foreign)}`);

    // Signed in, the technician can change the password while the account is locked for others.
    const session = cookieOf(cookie, 'pm_agent_session')!.pair;
    const newDevice = cookieOf(cookie, 'pm_agent_device')!.pair;
    const [changed] = await from(TECH, [post('/api/v1/auth/password', { current_password: PW.tech, new_password: 'tech second pw' }, TECH, session)]);
    assert.equal(changed.status, 204, show(changed));

    // The device cookie is limited on its own failures: a burst with it gets the allowance too.
    const own = await lanBurst(lan, port(), [
      ...Array.from({ length: 10 }, (_, i) => login('tech', `typo ${i}`, TECH, newDevice)),
      { ...login('tech', 'tech second pw', TECH, newDevice), afterWritten: true },
    ]);
    assert.equal(count(own.slice(0, 10), 401), ALLOWANCE, own.map(show).join('\n'));
    assert.equal(own[10].status, 429, show(own[10]));
    assert.match(own[10].body, /^too many failed attempts from this browser: try again in \d+ s\n$/);
  });
});
