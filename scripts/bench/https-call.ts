// One HTTPS request to a server on this machine's loopback (the agent's self-signed certificate is
// not checked, a new connection each time), its status and whole body: how the benches drive the
// agent's API.
import https from 'node:https';

export interface Answer { status: number; text: string }

export function call(port: number, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers = { Accept: 'application/json', ...(data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {}) };
    const req = https.request({ host: '127.0.0.1', port, path, method, rejectUnauthorized: false, agent: false, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}
