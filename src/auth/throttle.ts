/**
 * One throttle for every password check (sign-in, HTTP Basic on the object APIs). Attempts are
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
 * Checks sent at once: an attempt is admitted by one atomic upsert per key BEFORE its password is
 * verified, and counts as pending until its outcome is known. A key admits an attempt only while
 * its failures plus the attempts in flight stay within its free allowance, and past that only one
 * attempt at a time (whose failure sets the next, longer hold). An attempt that finds the
 * allowance taken by attempts in flight waits for their outcomes (a few seconds at most) instead
 * of being checked: forty parallel guesses get six password checks, as forty sequential ones
 * would, while twelve parallel right passwords all get in. This holds on SQLite and PostgreSQL and
 * across instances, since the counter is one row updated by one statement.
 *
 * A refused attempt costs one statement and no scrypt. Counts are forgotten an hour after the
 * latest attempt; an attempt that never reported (its process died) stops counting as pending
 * after PENDING_FORGET_MS of quiet. Personal tokens, sessions and bearer tokens are not password
 * checks and are never held back here.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/knex.js';
import { HttpError } from '../http/errors.js';
import { PasswordCheckRefused } from './passwords.js';

const FORGET_AFTER_MS = 60 * 60_000;
const MAX_BACKOFF_MS = 15 * 60_000;
const SLOW_DOWN_MS = 1000;
/** Far beyond a password check's own time: a pending attempt this old was lost. */
const PENDING_FORGET_MS = 30_000;
/**
 * How long an attempt waits for the outcomes of the attempts in flight before it is refused: as
 * long as a lost pending attempt can hold the allowance, so honest checks sent at once all get in.
 */
const ADMISSION_WAIT_MS = PENDING_FORGET_MS;

export interface ThrottleSettings {
  backoffAfter: number;
  addressBackoffAfter: number;
  userSlowAfter: number;
}

interface CountRow {
  failures: number | string;
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

/**
 * `blocked_until` once a key's failures become `n` (an SQL expression) at `now`: backoffMs as a
 * CASE over the few counts below the 15-minute ceiling, so the hold is set by the statement that
 * counts the failure. Only integers computed here go into the SQL text.
 */
function holdSql(n: string, now: number, free: number): string {
  if (!Number.isFinite(free)) return '0';
  const steps: string[] = [`WHEN ${n} <= ${free} THEN 0`];
  for (let k = free + 1; backoffMs(k, free) < MAX_BACKOFF_MS; k++) steps.push(`WHEN ${n} = ${k} THEN ${now + backoffMs(k, free)}`);
  return `CASE ${steps.join(' ')} ELSE ${now + MAX_BACKOFF_MS} END`;
}

const rowsOf = (result: unknown) => (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as CountRow[];

type Admission = { admitted: true; failures: number } | { admitted: false; blockedUntil: number };

export interface PasswordThrottle {
  /**
   * Guards one password check: refuses with 429 and Retry-After while the (username, address)
   * pair or the address is held back, else admits the attempt, runs `verify`, and counts its outcome.
   */
  guard(username: string, address: string, verify: () => Promise<boolean>): Promise<boolean>;
}

export function createPasswordThrottle(db: Db, settings: ThrottleSettings): PasswordThrottle {
  /** Current values with the forgetting applied, as SQL over the existing row. */
  const live = (now: number) => ({
    failures: `(CASE WHEN auth_failures.last_at < ${now - FORGET_AFTER_MS} THEN 0 ELSE auth_failures.failures END)`,
    pending: `(CASE WHEN auth_failures.last_at < ${now - PENDING_FORGET_MS} THEN 0 ELSE auth_failures.pending END)`,
  });

  /**
   * Admits one attempt against `key` (pending + 1) when the key is not held back and its allowance
   * has room, in one statement. `free`: Infinity for the username key, which only slows.
   */
  async function admit(key: string, free: number): Promise<Admission> {
    const now = Date.now();
    const { failures, pending } = live(now);
    const room = Number.isFinite(free) ? `WHERE auth_failures.blocked_until <= ${now} AND (${failures} + ${pending} <= ${free} OR ${pending} = 0)` : '';
    const rows = rowsOf(
      await db.raw(
        `INSERT INTO auth_failures ("key", failures, pending, last_at, blocked_until) VALUES (?, 0, 1, ${now}, 0)
         ON CONFLICT ("key") DO UPDATE SET failures = ${failures}, pending = ${pending} + 1, last_at = ${now}
         ${room} RETURNING failures`,
        [key],
      ),
    );
    if (rows[0]) return { admitted: true, failures: Number(rows[0].failures) };
    const row: CountRow | undefined = await db('auth_failures').where({ key }).first('blocked_until');
    return { admitted: false, blockedUntil: Number(row?.blocked_until ?? 0) };
  }

  /** Admits, waiting while only attempts in flight (not a hold) stand in the way. */
  async function admitOrRefuse(key: string, free: number): Promise<void> {
    const deadline = Date.now() + ADMISSION_WAIT_MS;
    // Polls back off (25 ms doubling to 1 s, with jitter), so a crowd of waiters costs few statements.
    for (let pause = 25; ; pause = Math.min(pause * 2, 1000)) {
      const a = await admit(key, free);
      if (a.admitted) return;
      const now = Date.now();
      if (a.blockedUntil > now || now >= deadline) {
        const retry = Math.max(1, Math.ceil((a.blockedUntil - now) / 1000));
        throw new HttpError(429, `Too many failed password attempts; retry in ${retry} s`, { 'Retry-After': String(retry) });
      }
      await new Promise((r) => setTimeout(r, pause * (0.5 + Math.random())));
    }
  }

  /** The outcome of an admitted attempt: pending - 1, and a failure counted (with its hold) or forgiven. */
  async function settle(key: string, free: number, outcome: 'failed' | 'succeeded' | 'cleared') {
    const now = Date.now();
    const { failures } = live(now);
    const pending = 'CASE WHEN auth_failures.pending > 0 THEN auth_failures.pending - 1 ELSE 0 END';
    const set =
      outcome === 'failed'
        ? `failures = ${failures} + 1, blocked_until = ${holdSql(`${failures} + 1`, now, free)}, last_at = ${now}`
        : outcome === 'cleared'
          ? 'failures = 0, blocked_until = 0'
          : `failures = ${failures}`;
    await db.raw(`UPDATE auth_failures SET ${set}, pending = ${pending} WHERE "key" = ?`, [key]);
  }

  return {
    async guard(username, address, verify) {
      const keys = keysOf(username, address);
      await admitOrRefuse(keys.pair, settings.backoffAfter);
      try {
        await admitOrRefuse(keys.address, settings.addressBackoffAfter);
      } catch (err) {
        await settle(keys.pair, settings.backoffAfter, 'succeeded');
        throw err;
      }
      const user = await admit(keys.user, Infinity);
      // A username guessed from everywhere is slowed, never refused.
      if (user.admitted && user.failures >= settings.userSlowAfter) await new Promise((r) => setTimeout(r, SLOW_DOWN_MS));
      let ok = false;
      let checked = true;
      try {
        ok = await verify();
      } catch (err) {
        // Refused its turn for a password check (auth/passwords.ts): nothing was checked, so
        // nothing counts, as for an attempt never made.
        if (err instanceof PasswordCheckRefused) checked = false;
        throw err;
      } finally {
        // A sign-in clears its pair's failures; the address and the username keep theirs.
        const failed = checked && !ok;
        await settle(keys.pair, settings.backoffAfter, ok ? 'cleared' : failed ? 'failed' : 'succeeded');
        await settle(keys.address, settings.addressBackoffAfter, failed ? 'failed' : 'succeeded');
        await settle(keys.user, Infinity, failed ? 'failed' : 'succeeded');
      }
      if (Math.random() < 0.01) await db('auth_failures').where('last_at', '<', Date.now() - FORGET_AFTER_MS).delete();
      return ok;
    },
  };
}
