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
import { HttpError } from '../http/errors.js';

/**
 * A check refused because too many wait for their turn (429 with Retry-After): no password was
 * checked, so the throttle counts it as no attempt.
 */
export class PasswordCheckRefused extends HttpError {}

interface Waiter {
  start: () => void;
  refuse: (err: PasswordCheckRefused) => void;
  timer: NodeJS.Timeout;
}

/**
 * The turns of the process's scrypt derivations. Each takes 32 MiB and one of libuv's four
 * threads for a few hundred ms; the same threads do every file read and write, so without a
 * bound, sixty sign-ins at once left a bystander's 1 kB download waiting seconds for a thread,
 * and held 32 MiB each. At most `atOnce` run (AUTH_PASSWORD_CHECKS); the others wait, per client
 * address, and a free turn goes to the next address in rotation, so one address's burst does not
 * hold back another's sign-in. At most `queue` wait (AUTH_PASSWORD_QUEUE): past it, the newest
 * check of the address with the most waiting is refused, the newcomer's own when that is its
 * address or none has more than one more than it. A check never waits longer than MAX_WAIT_MS.
 *
 * The turns are taken inside the throttle's admission (auth/throttle.ts), so a waiting check
 * counts as pending there, as one being checked does.
 */
const turns = {
  atOnce: 2,
  queue: 64,
  running: 0,
  /** Waiters by client address, in the order the addresses take their turns. */
  waiting: new Map<string, Waiter[]>(),
  waitingCount: 0,
  /** A running average of one derivation's time, for Retry-After. */
  averageMs: 300,
};

/**
 * Well inside the 30 s after which the throttle forgets a quiet pending attempt, so a check still
 * waiting is still counted there.
 */
const MAX_WAIT_MS = 15_000;

/** Sets the bounds (once per process, from AUTH_PASSWORD_CHECKS and AUTH_PASSWORD_QUEUE). */
export function configurePasswordChecks(settings: { atOnce: number; queue: number }) {
  turns.atOnce = settings.atOnce;
  turns.queue = settings.queue;
}

/** The checks running and waiting now (the metrics read it when scraped). */
export function passwordCheckLoad() {
  return { running: turns.running, waiting: turns.waitingCount };
}

function refusal(): PasswordCheckRefused {
  const seconds = Math.max(1, Math.ceil(((turns.waitingCount / turns.atOnce + 1) * turns.averageMs) / 1000));
  return new PasswordCheckRefused(429, `Too many password checks are waiting (AUTH_PASSWORD_QUEUE is ${turns.queue}); retry in ${seconds} s`, { 'Retry-After': String(seconds) });
}

/** The address with the most checks waiting, and how many. */
function busiest(): [string, Waiter[]] | null {
  let most: [string, Waiter[]] | null = null;
  for (const entry of turns.waiting) if (!most || entry[1].length > most[1].length) most = entry;
  return most;
}

function dequeue(client: string, list: Waiter[], waiter: Waiter) {
  list.splice(list.indexOf(waiter), 1);
  if (!list.length) turns.waiting.delete(client);
  turns.waitingCount--;
  clearTimeout(waiter.timer);
}

/** Resolves when `client` may run a derivation; rejects with PasswordCheckRefused when it may not wait. */
function turn(client: string): Promise<void> {
  if (turns.running < turns.atOnce && turns.waitingCount === 0) {
    turns.running++;
    return Promise.resolve();
  }
  if (turns.waitingCount >= turns.queue) {
    const mine = turns.waiting.get(client)?.length ?? 0;
    const most = busiest();
    if (!most || most[1].length < mine + 2) return Promise.reject(refusal());
    const evicted = most[1].at(-1)!;
    dequeue(most[0], most[1], evicted);
    evicted.refuse(refusal());
  }
  return new Promise<void>((start, refuse) => {
    const waiter: Waiter = {
      start,
      refuse,
      timer: setTimeout(() => {
        const list = turns.waiting.get(client);
        if (list) dequeue(client, list, waiter);
        refuse(refusal());
      }, MAX_WAIT_MS),
    };
    const list = turns.waiting.get(client);
    if (list) list.push(waiter);
    else turns.waiting.set(client, [waiter]);
    turns.waitingCount++;
  });
}

/** Ends a derivation's turn and gives it to the first waiter of the next address in rotation. */
function release() {
  turns.running--;
  while (turns.running < turns.atOnce && turns.waitingCount > 0) {
    const [client, list] = turns.waiting.entries().next().value!;
    const waiter = list[0]!;
    dequeue(client, list, waiter);
    // To the end of the rotation (a Map keeps the order keys were first set in): every other
    // address waiting goes before its next check.
    turns.waiting.delete(client);
    if (list.length) turns.waiting.set(client, list);
    turns.running++;
    waiter.start();
  }
}

/** One scrypt derivation, in its turn. `client`: the address the check is for ('' when none). */
async function scrypt(pw: string, salt: Buffer, len: number, opts: ScryptOptions, client: string) {
  await turn(client);
  const began = performance.now();
  try {
    return await new Promise<Buffer>((resolve, reject) => scryptCb(pw, salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))));
  } finally {
    turns.averageMs = turns.averageMs * 0.8 + (performance.now() - began) * 0.2;
    release();
  }
}

export const SCRYPT = { N: 2 ** 15, r: 8, p: 3 } as const;
const LEN = 32;
/** Stored hashes are ours, but a row could be edited: refuse parameters beyond this memory. */
const MAX_MEMORY = 256 * 1024 * 1024;

/** `client`: the address the hash is made for, whose turn it takes ('' when none). */
export async function hashPassword(password: string, client = ''): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p } = SCRYPT;
  const key = await scrypt(password.normalize('NFKC'), salt, LEN, { N, r, p, maxmem: MAX_MEMORY }, client);
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, encoded: string, client = ''): Promise<boolean> {
  const [kind, n, r, p, salt, key] = encoded.split('$');
  if (kind !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scrypt(password.normalize('NFKC'), Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n), r: Number(r), p: Number(p), maxmem: MAX_MEMORY,
  }, client);
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
  return (dummy ??= hashPassword(randomBytes(16).toString('base64')).catch((err: unknown) => {
    // Refused its turn: the next check makes it.
    dummy = null;
    throw err;
  }));
}

/**
 * Verifies against the user's hash, or against the dummy when there is no user: the same work
 * either way. `client`: the client's address, whose turn the check takes.
 */
export async function checkPassword(password: string, encoded: string | null | undefined, client = ''): Promise<boolean> {
  const ok = await verifyPassword(password, encoded || (await dummyHash()), client);
  return ok && Boolean(encoded);
}
