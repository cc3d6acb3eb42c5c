// Child program of lan-sinks.ts, run inside the laptop namespace: on each given address, an SMTP
// server (STARTTLS, any AUTH accepted and recorded, every message kept) and an HTTPS server
// (every request recorded; the enrollment calls answered 503, so the box keeps trying). Reads
// {cert, key, addresses} on stdin; prints one JSON line per thing that happens, the first
// `{"ready": {<address>: {"smtp": port, "https": port}}}`.
import https from 'node:https';
import { SMTPServer } from 'smtp-server';

const emit = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\n');

let input = '';
for await (const c of process.stdin) input += c;
const cfg = JSON.parse(input) as { cert: string; key: string; addresses: string[] };
const ready: Record<string, { smtp: number; https: number }> = {};

for (const addr of cfg.addresses) {
  const smtp = new SMTPServer({
    key: cfg.key,
    cert: cfg.cert,
    logger: false,
    authMethods: ['PLAIN', 'LOGIN'],
    onConnect(_session, cb) {
      emit({ kind: 'smtp_connect', addr });
      cb();
    },
    onAuth(auth, _session, cb) {
      emit({ kind: 'smtp_auth', addr, user: auth.username, password: auth.password });
      cb(null, { user: auth.username });
    },
    onData(stream, session, cb) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (raw += c));
      stream.on('end', () => {
        emit({ kind: 'smtp_mail', addr, to: session.envelope.rcptTo.map((r) => r.address), raw });
        cb();
      });
    },
  });
  smtp.on('error', () => {}); // a client that hangs up mid-session is not the test's failure
  await new Promise<void>((r) => smtp.listen(0, addr, () => r()));
  const web = https.createServer({ cert: cfg.cert, key: cfg.key }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      emit({ kind: 'https', addr, method: req.method, path: req.url, headers: req.headers, body });
      res.writeHead(503, { 'Content-Type': 'text/plain' });
      res.end('not now\n');
    });
  });
  await new Promise<void>((r) => web.listen(0, addr, () => r()));
  ready[addr] = { smtp: (smtp.server.address() as { port: number }).port, https: (web.address() as { port: number }).port };
}
emit({ ready });
