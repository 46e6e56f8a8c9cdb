/**
 * Ids are a type prefix and a lower-case ULID (48-bit time, 80 random bits, Crockford base32):
 * unique without coordination between instances, and sortable by creation time, which keyset
 * pagination relies on. Every request makes one or two, so random bytes come from a pool.
 */
import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomChars(n: number): string {
  if (offset + n > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  let out = '';
  // One char per byte, from its low five bits: uniform, since 256 is a multiple of 32.
  for (let i = 0; i < n; i++) out += ALPHABET[pool[offset + i]! & 31];
  offset += n;
  return out;
}

export function ulid(now = Date.now()): string {
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  return time + randomChars(16);
}

export type IdPrefix = 'org' | 'usr' | 'ses' | 'scn' | 'site' | 'prp' | 'cpr' | 'leg' | 'lck' | 'repo' | 'aud' | 'pat' | 'shr' | 'sch' | 'run' | 'whk' | 'dlv' | 'wat';

export const newId = (prefix: IdPrefix): string => `${prefix}_${ulid()}`;
