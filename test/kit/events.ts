// Test helper: listen to an agent's event stream (GET /events, Server-Sent Events) over real
// HTTPS. Each event's data is parsed as JSON and handed to `onEvent` in arrival order.
//   const stream = openEventStream(agent.httpsPort, (name, data) => ...); ... stream.destroy();
//   opts: another path and headers (PrintMaster's server: { path: '/api/events', headers: { cookie } }).
import https from 'node:https';
import type { ClientRequest } from 'node:http';

export function openEventStream(
  port: number,
  onEvent: (name: string, data: any) => void,
  opts: { path?: string; headers?: Record<string, string> } = {},
): ClientRequest {
  const req = https.get(
    { host: '127.0.0.1', port, path: opts.path ?? '/events', rejectUnauthorized: false, headers: { Accept: 'text/event-stream', ...opts.headers } },
    (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) !== -1) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (name && data) onEvent(name, JSON.parse(data));
        }
      });
    },
  );
  req.on('error', () => {}); // the stream ends with the agent: not a test failure
  return req;
}
