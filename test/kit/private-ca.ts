// A site's private CA for the trust tests: a root CA (CA:TRUE, keyCertSign) and server
// certificates it issues for loopback addresses, made with the `selfsigned` package. A client
// that trusts only the system's CAs refuses these servers ("unable to verify the first
// certificate"); one given the CA's certificate accepts them.
import { generate } from 'selfsigned';

export interface Pems {
  cert: string;
  key: string;
}

const DAY = 86_400_000;

/** A root CA named `name`, valid from yesterday for 10 years (or expired, for the refusal test). */
export async function makeCa(name: string, opts: { expired?: boolean } = {}): Promise<Pems> {
  const from = opts.expired ? new Date(Date.now() - 800 * DAY) : new Date(Date.now() - DAY);
  const to = opts.expired ? new Date(Date.now() - 2 * DAY) : new Date(Date.now() + 3650 * DAY);
  const p = await generate([{ name: 'commonName', value: name }, { name: 'organizationName', value: 'PrintBox tests' }], {
    keySize: 2048, algorithm: 'sha256', notBeforeDate: from, notAfterDate: to,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  return { cert: p.cert, key: p.private };
}

/** A server certificate `ca` issues for `ips` (its common name the first). */
export async function issueServerCert(ca: Pems, ips: string[]): Promise<Pems> {
  const p = await generate([{ name: 'commonName', value: ips[0] }], {
    keySize: 2048, algorithm: 'sha256', ca,
    notBeforeDate: new Date(Date.now() - DAY), notAfterDate: new Date(Date.now() + 365 * DAY),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: ips.map((ip) => ({ type: 7 as const, ip })) },
    ],
  });
  return { cert: p.cert, key: p.private };
}
