// Password hashes: scrypt from Node's own crypto (no native addon to build for the Pi). The
// stored form names its parameters, so they can grow later without breaking older hashes:
//   scrypt$<log2 N>$<r>$<p>$<salt, base64url>$<hash, base64url>
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// N = 2^15, r = 8: 32 MiB and 64-85 ms a hash on the x86 build machine (docs/performance.md; a Pi's
// cores are slower): slow enough to make guessing expensive, fast enough for a sign-in. The hash
// runs on libuv's thread pool, so the event loop keeps serving meanwhile.
const LOG2_N = 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

const derive = (password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...opts, maxmem: 256 * opts.N! * opts.r! }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );

/** Why a new password is not acceptable, or undefined. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN) return `password must have at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `password must have at most ${PASSWORD_MAX} characters`;
  return undefined;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N: 2 ** LOG2_N, r: R, p: P });
  return ['scrypt', LOG2_N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

let dummy: Promise<string> | undefined;
/**
 * The hash verified when the account does not exist, so that a wrong name costs what a wrong
 * password costs: a real hash (same parameters, made at first use) of a random password nobody
 * knows. A malformed one would be refused before scrypt runs, and answer at once.
 */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(24).toString('base64url'));
  return dummy;
}

/** True when the password matches the stored hash; false for a wrong password or a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [logN, r, p] = parts.slice(1, 4).map(Number);
  if (![logN, r, p].every(Number.isInteger) || logN < 10 || logN > 20 || r < 1 || r > 32 || p < 1 || p > 4) return false;
  const expected = Buffer.from(parts[5], 'base64url');
  if (expected.length !== KEY_LENGTH) return false;
  const key = await derive(password, Buffer.from(parts[4], 'base64url'), { N: 2 ** logN, r, p });
  return timingSafeEqual(key, expected);
}
