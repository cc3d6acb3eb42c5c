// The channel back promptly: when a heartbeat gets through while the WebSocket is down,
// the link redials at once (server/link.ts serverAnswered), at most once per SERVER_BACK_MS
// (OncePer, shared/backoff.ts) against a server that answers HTTP but drops every socket. The
// bound on a simulated clock; the redial itself against a real WebSocket server on loopback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocketServer } from 'ws';
import { OncePer } from '../../../src/shared/backoff.js';
import { SERVER_BACK_MS } from '../../../src/server/link.js';
import { ServerChannel } from '../../../src/server/channel.js';
import pino from 'pino';
import type { Logger } from '../../../src/log/logger.js';
import { until } from '../../kit/until.js';

test('OncePer: one go, then none until the period has passed', () => {
  let t = 1_000_000;
  const gate = new OncePer(30_000, () => t);
  assert.equal(gate.take(), true);
  t += 29_999;
  assert.equal(gate.take(), false);
  t += 1;
  assert.equal(gate.take(), true);
  assert.equal(gate.take(), false);
});

test('OncePer: a clock stepped back allows a go instead of waiting out the step', () => {
  let t = 1_000_000;
  const gate = new OncePer(30_000, () => t);
  assert.equal(gate.take(), true);
  t -= 3_600_000;
  assert.equal(gate.take(), true);
  t += 1_000;
  assert.equal(gate.take(), false);
});

test('a flapping server: heartbeats every 5 s for ten minutes redial at most once per SERVER_BACK_MS', () => {
  let t = 0;
  const gate = new OncePer(SERVER_BACK_MS, () => t);
  const redials: number[] = [];
  // Every heartbeat gets through and finds the channel down again (the server drops each socket).
  for (; t < 600_000; t += 5_000) if (gate.take()) redials.push(t);
  assert.equal(redials.length, 600_000 / SERVER_BACK_MS);
  for (let i = 1; i < redials.length; i++) assert.ok(redials[i] - redials[i - 1] >= SERVER_BACK_MS);
  // The first heartbeat after an outage redials at once.
  assert.equal(redials[0], 0);
});

test('redialNow: a channel waiting out its backoff dials at once; not while connected or dialling', async () => {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  const port = (wss.address() as { port: number }).port;
  let serverUp = false;
  let connections = 0;
  wss.on('connection', (s) => {
    connections++;
    if (!serverUp) s.terminate(); // the server "down": every socket dropped
  });
  const channel = new ServerChannel({
    url: () => `ws://127.0.0.1:${port}/`,
    log: pino({ level: 'silent' }) as unknown as Logger,
    onOpen: () => {},
    onClose: () => {},
    onFrame: () => {},
    onBadFrame: () => {},
    onRejected: () => {},
  });
  try {
    assert.equal(channel.redialNow(), false, 'not started: nothing to redial');
    channel.start();
    // The first socket opens and is dropped: the channel now waits its backoff (5 s, with jitter).
    await until('the first socket dropped and the channel waiting', () => connections === 1 && channel.waiting);
    serverUp = true;
    const attempts = channel.attempts;
    assert.equal(channel.redialNow(), true);
    assert.equal(channel.attempts, attempts + 1, 'dialled now, not at the end of the backoff');
    assert.equal(channel.redialNow(), false, 'a dial is under way: not a second one');
    await until('the channel connected', () => channel.connected);
    assert.equal(channel.redialNow(), false, 'connected: nothing to redial');
    assert.equal(connections, 2);
  } finally {
    channel.stop();
    await new Promise((r) => wss.close(r));
  }
});
