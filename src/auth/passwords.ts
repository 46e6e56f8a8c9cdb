/**
 * Password hashes: scrypt (node:crypto) with a random salt, encoded with its parameters so they
 * can be raised later without invalidating stored hashes. Comparison is constant-time.
 *
 * Parameters: N=2^15, r=8, p=3 (32 MiB), one of the equivalent settings the OWASP Password
 * Storage Cheat Sheet lists next to N=2^17, r=8, p=1 (128 MiB): the same work at a quarter of the
 * memory, which matters when several sign-ins run at once on a small machine. Hashes made with
 * older parameters still verify, and `needsRehash` tells the caller to upgrade them.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (pw: string, salt: Buffer, len: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(pw, salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))));

export const SCRYPT = { N: 2 ** 15, r: 8, p: 3 } as const;
const LEN = 32;
/** Stored hashes are ours, but a row could be edited: refuse parameters beyond this memory. */
const MAX_MEMORY = 256 * 1024 * 1024;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p } = SCRYPT;
  const key = await scrypt(password.normalize('NFKC'), salt, LEN, { N, r, p, maxmem: MAX_MEMORY });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [kind, n, r, p, salt, key] = encoded.split('$');
  if (kind !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scrypt(password.normalize('NFKC'), Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n), r: Number(r), p: Number(p), maxmem: MAX_MEMORY,
  });
  return timingSafeEqual(actual, expected);
}

/** True when `encoded` was made with other parameters than today's: rehash at the next sign-in. */
export function needsRehash(encoded: string): boolean {
  return encoded !== '' && !encoded.startsWith(`scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$`);
}

/** A hash of nothing (old parameters): a placeholder for accounts that never sign in with a password. */
export const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

let dummy: Promise<string> | null = null;
/**
 * A hash with today's parameters to verify against when the user does not exist, so an unknown
 * user costs what a known one does (no enumeration by timing).
 */
export function dummyHash(): Promise<string> {
  return (dummy ??= hashPassword(randomBytes(16).toString('base64')));
}

/** Verifies against the user's hash, or against the dummy when there is no user: the same work either way. */
export async function checkPassword(password: string, encoded: string | null | undefined): Promise<boolean> {
  const ok = await verifyPassword(password, encoded || (await dummyHash()));
  return ok && Boolean(encoded);
}
