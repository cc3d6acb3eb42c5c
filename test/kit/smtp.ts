// A real SMTP server for the notification tests (the `smtp-server` package) on 127.0.0.1: STARTTLS
// (or TLS from the start) with a certificate the test makes, AUTH required, every message kept.
// `refuseNext(n)` answers the next n messages 451 (a server that is busy, then accepts); `stop()`
// closes the port (connection refused) and `listen()` opens the same port again.
import { SMTPServer } from 'smtp-server';
import { generate } from 'selfsigned';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The whole message as received (headers and body). */
  raw: string;
  subject: string;
  /** The session was over TLS (STARTTLS or implicit) and signed in as this user. */
  secure: boolean;
  user: string | undefined;
}

export interface SmtpServer {
  port: number;
  received: ReceivedMail[];
  /** Messages answered 451 so far. */
  refused: number;
  refuseNext(n: number): void;
  stop(): Promise<void>;
  listen(): Promise<void>;
}

/** A self-signed certificate for 127.0.0.1 and `moreIps` (its own CA: trust it by giving it as ca_pem). */
export async function loopbackCertificate(moreIps: string[] = []): Promise<{ cert: string; key: string }> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, ...moreIps.map((ip) => ({ type: 7 as const, ip }))] },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

export async function startSmtp(opts: { cert: string; key: string; users: Record<string, string>; implicitTls?: boolean; port?: number }): Promise<SmtpServer> {
  let refuse = 0;
  let server: SMTPServer;
  const state: SmtpServer = {
    port: opts.port ?? 0,
    received: [],
    refused: 0,
    refuseNext(n) {
      refuse = n;
    },
    stop: () => new Promise((r) => server.close(() => r())),
    listen: () =>
      new Promise((resolve, reject) => {
        server = make();
        server.on('error', () => {}); // a client that hangs up mid-session is not the test's failure
        server.server.once('error', reject);
        server.listen(state.port, '127.0.0.1', () => {
          state.port = (server.server.address() as { port: number }).port;
          resolve();
        });
      }),
  };
  const make = () =>
    new SMTPServer({
      secure: opts.implicitTls ?? false,
      key: opts.key,
      cert: opts.cert,
      logger: false,
      authMethods: ['PLAIN', 'LOGIN'],
      // AUTH only over TLS (the package's default): a client that skipped STARTTLS cannot sign in.
      onAuth(auth, _session, cb) {
        if (auth.username && opts.users[auth.username] === auth.password) return cb(null, { user: auth.username });
        cb(new Error('invalid user name or password'));
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (refuse > 0) {
            refuse--;
            state.refused++;
            const err = new Error('try again later') as Error & { responseCode: number };
            err.responseCode = 451;
            return cb(err);
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          state.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            subject: /^Subject: (.*(?:\r?\n[ \t].*)*)/im.exec(raw)?.[1].replace(/\r?\n[ \t]/g, ' ') ?? '',
            secure: session.secure,
            user: session.user as string | undefined,
          });
          cb();
        });
      },
    });
  await state.listen();
  return state;
}
