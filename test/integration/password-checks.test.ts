/**
 * Password checks take turns, process-wide: never more scrypt derivations at once than
 * AUTH_PASSWORD_CHECKS (each holds 32 MiB and one of the threads file reads need), the turns go
 * round the client addresses (one address's burst does not hold back another's sign-in), and a
 * check that cannot wait is refused with 429 and Retry-After, counted as no attempt by the
 * throttle. The throttle's own behaviour is password-throttle.test.ts's.
 *
 * The derivations are counted where they happen, at node:crypto's scrypt; sign-ins come from
 * chosen loopback addresses (127.0.x.y) straight to the instance. No time is asserted: the order
 * in which answers arrive, and counts.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';

/** scrypt derivations under way, and the most at once, counted at node:crypto. */
const derivations = vi.hoisted(() => ({ running: 0, peak: 0 }));

vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  const scrypt = ((...args: unknown[]) => {
    const done = args.pop() as (err: Error | null, key: Buffer) => void;
    derivations.running++;
    derivations.peak = Math.max(derivations.peak, derivations.running);
    (real.scrypt as (...a: unknown[]) => void)(...args, (err: Error | null, key: Buffer) => {
      derivations.running--;
      done(err, key);
    });
  }) as typeof real.scrypt;
  return { ...real, scrypt, default: { ...real, scrypt } };
});

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

function login(s: TestServer, from: string, password = 'kim-password-1'): Promise<Answer> {
  const port = (s.instances[0]!.server.address() as AddressInfo).port;
  const body = JSON.stringify({ username: 'kim', password });
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/api/v1/auth/login', method: 'POST', localAddress: from, agent: false, headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The throttle's row of an address (auth/throttle.ts keys it by a hash of the address). */
async function addressRow(s: TestServer, address: string) {
  const key = `addr:${createHash('sha256').update(address).digest('hex')}`;
  const row = await s.services.db<{ key: string; failures: number | string; pending: number | string }>('auth_failures').where({ key }).first('failures', 'pending');
  return { failures: Number(row?.failures ?? 0), pending: Number(row?.pending ?? 0) };
}

/** Waits until `done` holds (polling), for at most 20 s. */
async function until(done: () => Promise<boolean>) {
  for (let waited = 0; !(await done()) && waited < 20_000; waited += 25) await sleep(25);
}

// The throttle's thresholds out of the way: these sign-ins are right, and many come from one address.
const OPEN_THROTTLE = { AUTH_BACKOFF_AFTER: '1000', AUTH_ADDRESS_BACKOFF_AFTER: '1000', AUTH_USER_SLOW_AFTER: '1000' };

describe('password checks take turns', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...OPEN_THROTTLE, AUTH_PASSWORD_CHECKS: '2' });
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'kim', password: 'kim-password-1', access: 'read' });
  });
  afterAll(() => s.stop());
  beforeEach(() => {
    derivations.peak = derivations.running;
  });

  it('never runs more derivations at once than AUTH_PASSWORD_CHECKS, however many sign in at once', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => login(s, `127.0.8.${i + 1}`)));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(derivations.peak).toBe(2);
    s.expectConformant();
  });
});

describe('turns go round the addresses', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...OPEN_THROTTLE, AUTH_PASSWORD_CHECKS: '1' });
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'kim', password: 'kim-password-1', access: 'read' });
  });
  afterAll(() => s.stop());

  it("lets a second address's sign-ins through before the first address's burst is done", async () => {
    const order: string[] = [];
    const signIn = (who: string, from: string) => login(s, from).then((a) => (order.push(who), a));
    const burst = Array.from({ length: 8 }, () => signIn('a', '127.0.9.1'));
    // Every one of the burst is admitted (counted pending) before the other address asks.
    await until(async () => (await addressRow(s, '127.0.9.1')).pending === 8);
    const other = [signIn('b', '127.0.9.2'), signIn('b', '127.0.9.2')];
    const answers = await Promise.all([...burst, ...other]);
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    // In turns: a, a, b, a, b, … ; served in arrival order, b would come after all eight.
    const fifthOfA = order.map((w, i) => (w === 'a' ? i : -1)).filter((i) => i >= 0)[4]!;
    expect(order.lastIndexOf('b'), order.join('')).toBeLessThan(fifthOfA);
  });
});

describe('a check that cannot wait', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...OPEN_THROTTLE, AUTH_PASSWORD_CHECKS: '1', AUTH_PASSWORD_QUEUE: '3' });
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'kim', password: 'kim-password-1', access: 'read' });
  });
  afterAll(() => s.stop());

  it('is refused with 429 and Retry-After naming the setting, costs its address nothing, and never the quieter address', async () => {
    const a: Answer[] = [];
    const burst = Array.from({ length: 8 }, () => login(s, '127.0.10.1').then((x) => (a.push(x), x)));
    // The burst has settled into its turns: each of the eight is answered or still pending.
    await until(async () => a.length + (await addressRow(s, '127.0.10.1')).pending === 8);
    const quiet = await login(s, '127.0.10.2');
    await Promise.all(burst);
    expect(quiet.status).toBe(200);
    const refused = a.filter((x) => x.status === 429);
    expect(refused.length, a.map((x) => x.status).join(',')).toBeGreaterThanOrEqual(4);
    expect(a.filter((x) => x.status === 200).length).toBeGreaterThanOrEqual(3);
    for (const r of refused) {
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(r.body).message).toMatch(/AUTH_PASSWORD_QUEUE.*retry in \d+ s/);
    }
    // Nothing was checked for them: no failure counted, nothing left pending.
    expect(await addressRow(s, '127.0.10.1')).toEqual({ failures: 0, pending: 0 });
    s.expectConformant();
  });
});
