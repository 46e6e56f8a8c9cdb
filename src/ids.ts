/**
 * Ids are a type prefix and a lower-case ULID (48-bit time, 80 random bits, Crockford base32):
 * unique without coordination between instances, and sortable by creation time, which keyset
 * pagination relies on.
 */
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function ulid(now = Date.now()): string {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  const bytes = randomBytes(10);
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let rand = '';
  for (let i = 0; i < 16; i++, bits >>= 5n) rand = ALPHABET[Number(bits & 31n)] + rand;
  return time + rand;
}

export type IdPrefix = 'org' | 'usr' | 'ses' | 'scn' | 'site' | 'prp' | 'cpr' | 'leg' | 'lck' | 'repo' | 'aud' | 'pat';

export const newId = (prefix: IdPrefix): string => `${prefix}_${ulid()}`;
