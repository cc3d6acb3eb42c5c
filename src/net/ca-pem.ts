// A CA certificate a person pastes or uploads for a server the box talks to (the central server,
// the mail server: settings `server.ca_pem`, `notifications.ca_pem`). Checked when saved, with
// node:crypto's X509Certificate, so that a file that cannot work is refused at once with why,
// rather than found out at the next connection: each PEM block must be a CA certificate
// (basicConstraints CA:TRUE) or a self-signed certificate (a server's own, trusted as it is).
// A server certificate issued by some CA is refused: trusting it would not make its chain verify.
import { X509Certificate } from 'node:crypto';
import { rootCertificates } from 'node:tls';

const BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
/** At most this many certificates in one setting (a root and its intermediates). */
export const MAX_CA_CERTS = 8;

/** A distinguished name's common name, or the whole name when it has none. */
const cn = (dn: string) => /(?:^|\n)CN=([^\n]*)/.exec(dn)?.[1] ?? dn.replace(/\n/g, ', ');

/** Why `pem` cannot be trusted as a CA, or undefined when every certificate in it can (`pem` not ""). */
export function caPemProblem(pem: string): string | undefined {
  const blocks = pem.match(BLOCK) ?? [];
  if (!blocks.length || pem.replace(BLOCK, '').trim() !== '') return 'is not a PEM certificate (-----BEGIN CERTIFICATE-----)';
  if (blocks.length > MAX_CA_CERTS) return `holds ${blocks.length} certificates: give at most ${MAX_CA_CERTS}`;
  for (const b of blocks) {
    let c: X509Certificate;
    try {
      c = new X509Certificate(b);
    } catch {
      return 'is not a PEM certificate (-----BEGIN CERTIFICATE-----)';
    }
    const selfSigned = c.checkIssued(c) && c.verify(c.publicKey);
    if (!c.ca && !selfSigned) {
      return `: the certificate for ${cn(c.subject)} is a server's own certificate issued by ${cn(c.issuer)}, not a CA: give the CA certificate that issued it`;
    }
    if (Date.parse(c.validTo) < Date.now()) return `: the certificate ${cn(c.subject)} expired on ${new Date(c.validTo).toISOString().slice(0, 10)}`;
  }
  return undefined;
}

/**
 * What a TLS client trusts: the system's CAs and the setting's (the `ca` option replaces the
 * system's list, so both are given); undefined (Node's default, the system's) when none is set.
 */
export function trustedCas(pem: string): string[] | undefined {
  return pem ? [...rootCertificates, pem] : undefined;
}
