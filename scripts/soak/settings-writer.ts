// Numbered settings writes to an agent from outside, for the VM power-cut soak (power-cut.sh).
// Signs in with a password account (the box is reached as a LAN client), then:
//   write FROM:  POST /settings with snmp.communities ["public", "soak-<n>"], n = FROM, FROM+1, ...
//                one at a time, printing each n once its 200 arrived (acknowledged), until killed;
//   read:        prints the n the agent serves now (-1 when none was written).
// An acknowledged n must survive a power cut: after the next boot the agent serves n or a later
// one (the write in flight at the cut may have committed without its answer getting out).
//   node dist/scripts/soak/settings-writer.js URL USER PASSWORD (write FROM | read)
// The box's certificate is self-signed: it is not checked (loopback forward to a test VM).
import https from 'node:https';
import { isMain } from './cli.js';

const agent = new https.Agent({ rejectUnauthorized: false, keepAlive: true });

function request(url: string, method: string, body: unknown, cookie = ''): Promise<{ status: number; body: string; cookie?: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(url, {
      method,
      agent,
      timeout: 20_000,
      headers: { Accept: 'application/json', ...(data ? { 'Content-Type': 'application/json' } : {}), ...(cookie ? { Cookie: cookie } : {}) },
    }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, cookie: res.headers['set-cookie']?.[0]?.split(';')[0] }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(data);
  });
}

export const communityNumber = (communities: unknown): number =>
  Array.isArray(communities) ? Number(/^soak-(\d+)$/.exec(String(communities[1]))?.[1] ?? -1) : -1;

async function signIn(base: string, user: string, password: string): Promise<string> {
  const r = await request(`${base}/api/v1/auth/login`, 'POST', { username: user, password });
  if (r.status !== 200 || !r.cookie) throw new Error(`sign-in: ${r.status} ${r.body}`);
  return r.cookie;
}

if (isMain(import.meta.url)) {
  const [base, user, password, mode, from] = process.argv.slice(2);
  const cookie = await signIn(base, user, password);
  if (mode === 'read') {
    const r = await request(`${base}/settings`, 'GET', undefined, cookie);
    if (r.status !== 200) throw new Error(`GET /settings: ${r.status} ${r.body}`);
    console.log(communityNumber((JSON.parse(r.body) as { snmp: { communities: string[] } }).snmp.communities));
  } else {
    for (let n = Number(from); ; n++) {
      const r = await request(`${base}/settings`, 'POST', { snmp: { communities: ['public', `soak-${n}`] } }, cookie).catch(() => undefined);
      if (r?.status === 200) console.log(n);
      else {
        process.stderr.write(`write ${n}: ${r ? `${r.status} ${r.body}` : 'no answer'}\n`);
        await new Promise((resolve) => setTimeout(resolve, 200)); // the box is down or refusing: do not spin
      }
    }
  }
}
