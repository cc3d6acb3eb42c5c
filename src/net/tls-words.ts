// A TLS failure said in a person's words: who (the central server, the mail server at
// host:port), what failed (a certificate not trusted: self-signed or from a CA this box does not
// know; issued for another name; expired or not yet valid) and what to do. OpenSSL's own text
// ("unable to get local issuer certificate", and Node's advice to run it with --use-system-ca)
// means nothing to a technician and points at a fix that is not theirs to make.
import { errorText } from '../shared/error-text.js';

/** OpenSSL's verification codes (Node's err.code; nodemailer keeps it as err.originalCode). */
const WHAT: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its certificate is self-signed and not trusted here',
  SELF_SIGNED_CERT_IN_CHAIN: 'its certificate comes from a CA this box does not trust (a self-signed root)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its certificate comes from a CA this box does not know',
  UNABLE_TO_GET_ISSUER_CERT: 'its certificate comes from a CA this box does not know',
  // Also a server that does not send its intermediate certificate; a private CA is the usual cause.
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its certificate comes from a CA this box does not know',
  CERT_UNTRUSTED: 'its certificate is not trusted here',
  CERT_SIGNATURE_FAILURE: 'its certificate does not verify against the CA trusted for it (a different CA with the same name?)',
  CERT_HAS_EXPIRED: 'its certificate has expired',
  CERT_NOT_YET_VALID: "its certificate is not valid yet (check this box's clock)",
  ERR_TLS_CERT_ALTNAME_INVALID: 'its certificate is for another name',
};
/** The same, recognised by OpenSSL's text when no code came with the error. */
const BY_TEXT: [RegExp, string][] = [
  [/self[- ]signed certificate in certificate chain/i, 'SELF_SIGNED_CERT_IN_CHAIN'],
  [/self[- ]signed certificate/i, 'DEPTH_ZERO_SELF_SIGNED_CERT'],
  [/unable to get local issuer certificate/i, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'],
  [/unable to verify the first certificate/i, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
  [/certificate has expired/i, 'CERT_HAS_EXPIRED'],
  [/certificate is not yet valid/i, 'CERT_NOT_YET_VALID'],
  [/does not match certificate's altnames/i, 'ERR_TLS_CERT_ALTNAME_INVALID'],
];

/** A TLS failure's kind, from the error's code or text; undefined for any other failure. */
export function tlsFailure(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as Error & { code?: unknown; originalCode?: unknown; reason?: unknown };
  for (const c of [e.originalCode, e.code]) if (typeof c === 'string' && WHAT[c]) return c;
  return BY_TEXT.find(([re]) => re.test(err.message))?.[1];
}

/**
 * `err` in plain words when it is a certificate failure: "the mail server at mail.site:587:
 * its certificate comes from a CA this box does not know: upload its CA certificate in Settings →
 * Notifications". Undefined for any other error (kept as it is).
 */
export function tlsInWords(err: unknown, who: string, hostPort: string, fix: string): Error | undefined {
  const kind = tlsFailure(err);
  if (!kind) return undefined;
  let what = WHAT[kind];
  // Which name the certificate is for, from Node's text ("... is not in the cert's list: DNS:x").
  const list = kind === 'ERR_TLS_CERT_ALTNAME_INVALID' ? /cert's list: (.*)$/.exec(errorText(err))?.[1] : undefined;
  if (list) what += ` (${list})`;
  const todo = kind === 'ERR_TLS_CERT_ALTNAME_INVALID' ? 'use the name or address the certificate is for'
    : kind === 'CERT_HAS_EXPIRED' ? 'renew the certificate on that server'
      : kind === 'CERT_NOT_YET_VALID' ? "set this box's clock (or the certificate's start) right" : fix;
  const out = new Error(`${who} at ${hostPort}: ${what}: ${todo}`);
  (out as Error & { code?: string }).code = kind;
  return out;
}
