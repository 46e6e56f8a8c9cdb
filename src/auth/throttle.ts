/**
 * One throttle for every password check (sign-in, HTTP Basic on the object APIs). Failures are
 * counted three ways, in the database so that every instance sees the same counts:
 *
 *   (username, address)  exponential back-off after `backoffAfter` failures: 1 s, 2 s, 4 s, …
 *                        up to 15 min. Only the guesser's own address is held back, so an
 *                        attacker elsewhere cannot lock the real user out.
 *   address              back-off after `addressBackoffAfter` failures across usernames
 *                        (password spraying from one address).
 *   username             across addresses (a distributed guess): past `userSlowAfter` failures
 *                        each check of that username waits a second first. It slows, and never
 *                        refuses: a username alone must not be a switch that locks its owner out.
 *
 * The check runs before scrypt, so a refused guess costs one indexed read. A failure costs a
 * write (failures are the rare path); a success writes only to clear a (username, address)
 * counter that exists. Counts are forgotten an hour after the latest failure. Personal tokens,
 * sessions and bearer tokens are not password checks and are never held back here.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/knex.js';
import { HttpError } from '../http/errors.js';

const FORGET_AFTER_MS = 60 * 60_000;
const MAX_BACKOFF_MS = 15 * 60_000;
const SLOW_DOWN_MS = 1000;

export interface ThrottleSettings {
  backoffAfter: number;
  addressBackoffAfter: number;
  userSlowAfter: number;
}

interface FailureRow {
  key: string;
  failures: number | string;
  last_at: number | string;
  blocked_until: number | string;
}

/** How long a key is held back after its `failures`-th failure, `free` of them allowed without wait. */
export function backoffMs(failures: number, free: number): number {
  if (failures <= free) return 0;
  return Math.min(1000 * 2 ** Math.min(failures - free - 1, 30), MAX_BACKOFF_MS);
}

const hashed = (kind: string, value: string) => `${kind}:${createHash('sha256').update(value).digest('hex')}`;

function keysOf(username: string, address: string) {
  const user = username.normalize('NFKC').toLowerCase();
  return { pair: hashed('pair', `${user}\0${address}`), address: hashed('addr', address), user: hashed('user', user) };
}

export interface PasswordThrottle {
  /**
   * Guards one password check: refuses with 429 and Retry-After while the (username, address)
   * pair or the address is held back, else runs `verify` and counts its outcome.
   */
  guard(username: string, address: string, verify: () => Promise<boolean>): Promise<boolean>;
}

export function createPasswordThrottle(db: Db, settings: ThrottleSettings): PasswordThrottle {
  async function fail(keys: ReturnType<typeof keysOf>, now: number) {
    const free = { [keys.pair]: settings.backoffAfter, [keys.address]: settings.addressBackoffAfter, [keys.user]: Infinity };
    for (const key of [keys.pair, keys.address, keys.user]) {
      // One atomic upsert: a count whose latest failure is older than the window starts again.
      await db('auth_failures')
        .insert({ key, failures: 1, last_at: now, blocked_until: 0 })
        .onConflict('key')
        .merge({
          failures: db.raw('CASE WHEN ?? < ? THEN 1 ELSE ?? + 1 END', ['auth_failures.last_at', now - FORGET_AFTER_MS, 'auth_failures.failures']),
          last_at: now,
        });
      const row = await db<FailureRow>('auth_failures').where({ key }).first('failures');
      const wait = backoffMs(Number(row?.failures ?? 1), free[key]!);
      if (wait) await db('auth_failures').where({ key }).update({ blocked_until: now + wait });
    }
    if (Math.random() < 0.01) await db('auth_failures').where('last_at', '<', now - FORGET_AFTER_MS).delete();
  }

  return {
    async guard(username, address, verify) {
      const keys = keysOf(username, address);
      const rows = await db<FailureRow>('auth_failures').whereIn('key', [keys.pair, keys.address, keys.user]);
      const now = Date.now();
      const live = (r: FailureRow) => Number(r.last_at) >= now - FORGET_AFTER_MS;
      const until = Math.max(0, ...rows.filter((r) => r.key !== keys.user).map((r) => Number(r.blocked_until)));
      if (until > now) {
        const retry = Math.max(1, Math.ceil((until - now) / 1000));
        throw new HttpError(429, `Too many failed password attempts; retry in ${retry} s`, { 'Retry-After': String(retry) });
      }
      const user = rows.find((r) => r.key === keys.user);
      if (user && live(user) && Number(user.failures) >= settings.userSlowAfter) await new Promise((r) => setTimeout(r, SLOW_DOWN_MS));
      const ok = await verify();
      if (!ok) await fail(keys, Date.now());
      else if (rows.some((r) => r.key === keys.pair)) await db('auth_failures').where({ key: keys.pair }).delete();
      return ok;
    },
  };
}
