// /events slots (docs/decisions/0013-event-stream.md: one client must not take them all): at most 4
// open streams per client address; when all 32 are open, a newcomer closes the oldest stream of the
// client holding the most instead of being answered 503. Clients are distinct loopback addresses.
import assert from 'node:assert/strict';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { after, before, test } from 'node:test';
import { startAgent, type Agent } from '../../kit/agent.js';

let agent: Agent;
const open: IncomingMessage[] = [];

/** Opens an event stream from `localAddress`; resolves at the response's head (the stream stays open). */
function stream(localAddress: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      { host: '127.0.0.1', port: agent.httpsPort, path: '/events', localAddress, rejectUnauthorized: false, agent: false },
      (res) => {
        open.push(res);
        resolve(res);
      },
    );
    req.on('error', reject);
  });
}
const closed = (res: IncomingMessage) => new Promise<void>((r) => (res.destroyed ? r() : res.once('close', () => r())));

before(async () => {
  agent = await startAgent({ authMode: 'local', allowLocalAdmin: true });
});
after(async () => {
  for (const r of open) r.destroy();
  await agent?.stop();
});

test('a fifth stream from one client is refused; other clients are not affected', async () => {
  const mine = await Promise.all([1, 2, 3, 4].map(() => stream('127.0.0.2')));
  assert.deepEqual(mine.map((r) => r.statusCode), [200, 200, 200, 200]);
  const fifth = await stream('127.0.0.2');
  assert.equal(fifth.statusCode, 503);
  assert.equal((await stream('127.0.0.3')).statusCode, 200);
  mine[0].destroy();
  await closed(mine[0]);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await stream('127.0.0.2')).statusCode, 200, 'a closed stream frees its slot');
});

test('with every slot taken, a newcomer gets one: the heaviest client loses its oldest stream', async () => {
  for (const r of open) r.destroy();
  await Promise.all(open.map(closed));
  open.length = 0;
  await new Promise((r) => setTimeout(r, 100));
  const all: IncomingMessage[] = [];
  for (let c = 10; c < 18; c++) for (let i = 0; i < 4; i++) all.push(await stream(`127.0.0.${c}`)); // 8 clients x 4 = 32
  assert.ok(all.every((r) => r.statusCode === 200));
  const newcomer = await stream('127.0.0.40');
  assert.equal(newcomer.statusCode, 200, 'never 503 because of others');
  await closed(all[0]);
  assert.equal(all.filter((r) => r.destroyed).length, 1, 'exactly one stream closed for it');
});
