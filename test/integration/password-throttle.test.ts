/**
 * Guessing passwords is slow and tells nothing: one throttle for sign-in and
 * HTTP Basic on both object APIs, keyed so that a guesser cannot lock the real user out from the
 * user's own address; personal tokens and sessions keep working; an unknown user costs the same
 * scrypt as a known one; hashes with older parameters verify and are upgraded.
 *
 * Requests go straight to one instance from chosen loopback addresses (127.0.0.x), so the server
 * sees distinct client addresses.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, scrypt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { createPersonalToken } from '../../src/db/repos.js';
import { SCRYPT, checkPassword, dummyHash } from '../../src/auth/passwords.js';

// Every password check the server makes, with the stored hash it was given (none for an unknown
// user): an unknown user must cost the same scrypt as a known one, which is a property of the code
// path, checked here without timing anything.
vi.mock('../../src/auth/passwords.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/auth/passwords.js')>();
  return { ...real, checkPassword: vi.fn(real.checkPassword) };
});

const GIT_LFS = 'application/vnd.git-lfs+json';
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: string }

function send(s: TestServer, path: string, opts: { from?: string; method?: string; headers?: Record<string, string>; body?: unknown; instance?: number } = {}): Promise<Answer> {
  // Several instances (the pair topology) share the counts through the database: spread over them.
  const instance = s.instances[(opts.instance ?? 0) % s.instances.length]!;
  const port = (instance.server.address() as AddressInfo).port;
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, localAddress: opts.from ?? '127.0.0.1', method: opts.method ?? (body ? 'POST' : 'GET'), headers: { ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...opts.headers } },
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

const batch = (s: TestServer, auth: string, from?: string, instance?: number) =>
  send(s, '/acme/site.git/info/lfs/objects/batch', {
    from,
    instance,
    headers: { authorization: auth, accept: GIT_LFS, 'content-type': GIT_LFS },
    body: { operation: 'download', objects: [{ oid: 'a'.repeat(64), size: 1 }] },
  });
const legacy = (s: TestServer, auth: string, from?: string) =>
  send(s, `/acme/site.git/info/lfs/objects/${'a'.repeat(64)}`, { from, headers: { authorization: auth, accept: GIT_LFS } });
const login = (s: TestServer, username: string, password: string, from?: string, instance?: number) =>
  send(s, '/api/v1/auth/login', { from, instance, headers: { 'content-type': 'application/json', accept: 'application/json' }, body: { username, password } });

function expectRetryAfter(a: Answer) {
  expect(a.status).toBe(429);
  expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(JSON.parse(a.body).message).toMatch(/retry in \d+ s/);
}

describe('one throttle for every password check', () => {
  let s: TestServer;
  let pat: string;
  beforeAll(async () => {
    s = await startTestServer({ AUTH_BACKOFF_AFTER: '5', AUTH_ADDRESS_BACKOFF_AFTER: '8' });
    const { user } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'gina', password: 'gina-password-1', access: 'write' });
    pat = (await createPersonalToken(s.services.db, user.id, 'ci')).token;
  });
  afterAll(() => s.stop());

  it('answers wrong Basic passwords with 429 and Retry-After after a few, on both object APIs and at sign-in', async () => {
    const statuses: number[] = [];
    let last429: Answer | undefined;
    for (let i = 0; i < 60; i++) {
      const a = await (i % 2 ? legacy : batch)(s, basic('gina', `wrong-${i}`));
      statuses.push(a.status);
      if (a.status === 429) last429 = a;
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.filter((x) => x === 429).length).toBeGreaterThan(40);
    expect(statuses).not.toContain(200);
    expectRetryAfter(last429!);
    // While held back, even the right password is not checked from this address, on any door.
    expectRetryAfter(await batch(s, basic('gina', 'gina-password-1')));
    expectRetryAfter(await legacy(s, basic('gina', 'gina-password-1')));
    expectRetryAfter(await login(s, 'gina', 'gina-password-1'));
    s.expectConformant();
  });

  it('does not lock the real user out from another address', async () => {
    expect((await login(s, 'gina', 'gina-password-1', '127.0.0.2')).status).toBe(200);
    expect((await batch(s, basic('gina', 'gina-password-1'), '127.0.0.2')).status).toBe(200);
  });

  it('keeps personal tokens and sessions working from the guessed address', async () => {
    expect((await batch(s, basic('gina', pat))).status).toBe(200);
    const signedIn = await login(s, 'gina', 'gina-password-1', '127.0.0.2');
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    const mcp = await send(s, '/api/v1/mcp', {
      headers: { cookie, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });
    expect(mcp.status).toBe(200);
  });

  it('holds back an address that sprays one password over many usernames', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await login(s, `nobody-${i}`, 'Summer2026!', '127.0.0.3')).status);
    expect(statuses.slice(0, 8)).toEqual(Array(8).fill(401));
    expect(statuses.slice(8)).toContain(429);
    // A username never tried from that address is held back too; another address is not.
    expectRetryAfter(await login(s, 'gina', 'gina-password-1', '127.0.0.3'));
    expect((await login(s, 'gina', 'gina-password-1', '127.0.0.4')).status).toBe(200);
    s.expectConformant();
  });

  it('forgets the failures of a pair once its user signs in', async () => {
    for (let i = 0; i < 4; i++) expect((await login(s, 'gina', `typo-${i}`, '127.0.0.5')).status).toBe(401);
    expect((await login(s, 'gina', 'gina-password-1', '127.0.0.5')).status).toBe(200);
    // Four more typos after the sign-in stay under the five free ones.
    for (let i = 0; i < 4; i++) expect((await login(s, 'gina', `typo-${i}`, '127.0.0.5')).status).toBe(401);
  });
});

describe('guesses sent at once', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ AUTH_BACKOFF_AFTER: '5', AUTH_ADDRESS_BACKOFF_AFTER: '30' });
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'hal', password: 'hal-password-1', access: 'read' });
  });
  afterAll(() => s.stop());

  const tally = (answers: Answer[]) => answers.reduce<Record<number, number>>((t, a) => ({ ...t, [a.status]: (t[a.status] ?? 0) + 1 }), {});

  /**
   * Guesses that may be checked beyond the hold's first: one each time a hold runs out while the
   * guesses are still arriving (holds double from 1 s), at least the one or two a busy machine
   * lets through. The bound grows with the burst's own length, so a loaded machine that spreads
   * the guesses over seconds does not read as a leak; the same guesses sent one after another
   * would be let through the same way.
   */
  const expiries = (started: number) => Math.max(2, Math.ceil(Math.log2((performance.now() - started) / 1000 + 1)) + 1);

  it('are counted before their passwords are checked: 40 parallel wrong Basic passwords meet the back-off', async () => {
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => batch(s, basic('hal', `wrong-${i}`), '127.0.1.1', i)));
    const extra = expiries(started);
    const t = tally(answers);
    // The five free failures and the one that starts the 1 s hold are checked; every other guess is
    // refused unchecked (one or two more may be checked when the hold has run out meanwhile on a
    // busy machine, one at a time, each doubling the hold, exactly as sequential guesses would).
    expect(t[401], JSON.stringify(t)).toBeGreaterThanOrEqual(6);
    expect(t[401]).toBeLessThanOrEqual(6 + extra);
    expect(t[429]).toBeGreaterThanOrEqual(34 - extra);
    expectRetryAfter(answers.find((a) => a.status === 429)!);
    s.expectConformant();
  });

  it('never lets the right password through among 30 parallel wrong ones', async () => {
    const guesses = Array.from({ length: 31 }, (_, i) => (i === 17 ? 'hal-password-1' : `guess-${i}`));
    const started = performance.now();
    const answers = await Promise.all(guesses.map((g, i) => batch(s, basic('hal', g), '127.0.1.2', i)));
    const extra = expiries(started);
    const t = tally(answers);
    expect(t[200] ?? 0, JSON.stringify(t)).toBeLessThanOrEqual(1);
    expect((t[401] ?? 0) + (t[200] ?? 0), `${JSON.stringify(t)}, ${extra} holds could run out`).toBeLessThanOrEqual(6 + extra);
    expect(t[429]).toBeGreaterThanOrEqual(25 - extra);
  });

  it('holds sign-in the same way: 12 parallel wrong passwords', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => login(s, 'hal', `nope-${i}`, '127.0.1.3', i)));
    const t = tally(answers);
    expect(t[401], JSON.stringify(t)).toBeGreaterThanOrEqual(6);
    expect(t[401]).toBeLessThanOrEqual(8);
    expect(t[429]).toBeGreaterThanOrEqual(4);
  });

  it('gives a successful check its count back, so parallel right passwords are never held', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => login(s, 'hal', 'hal-password-1', '127.0.1.4', i)));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    // And the address spent nothing: thirty free failures are still there.
    const after = await Promise.all(Array.from({ length: 5 }, (_, i) => login(s, `nobody-${i}`, 'x-password-1', '127.0.1.4', i)));
    expect(after.map((a) => a.status)).toEqual(Array(5).fill(401));
  });
});

describe('behind a reverse proxy (TRUSTED_PROXIES)', () => {
  let s: TestServer;
  beforeAll(async () => {
    // 127.0.2.1 is the proxy: requests from it carry the client's address in X-Forwarded-For.
    s = await startTestServer({ AUTH_BACKOFF_AFTER: '2', AUTH_ADDRESS_BACKOFF_AFTER: '4', TRUSTED_PROXIES: '127.0.2.1' });
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'pia', password: 'pia-password-1', access: 'read' });
  });
  afterAll(() => s.stop());

  const viaProxy = (client: string, username: string, password: string) =>
    send(s, '/api/v1/auth/login', { from: '127.0.2.1', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-forwarded-for': client }, body: { username, password } });

  it('holds back the sprayer behind the proxy, not every other client of the proxy', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await viaProxy('198.51.100.7', `nobody-${i}`, 'Winter2026!')).status);
    expect(statuses).toContain(429);
    expect((await viaProxy('198.51.100.8', 'pia', 'pia-password-1')).status).toBe(200);
  });

  it('does not believe the header from a peer that is not a trusted proxy', async () => {
    const statuses: number[] = [];
    // A client claiming a fresh address each time is still one address: its own.
    for (let i = 0; i < 8; i++) {
      const a = await send(s, '/api/v1/auth/login', { from: '127.0.2.9', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-forwarded-for': `203.0.113.${i}` }, body: { username: `ghost-${i}`, password: 'x-password-1' } });
      statuses.push(a.status);
    }
    expect(statuses).toContain(429);
    s.expectConformant();
  });
});

describe('what a password check costs and keeps', () => {
  let s: TestServer;
  beforeAll(async () => {
    // Thresholds out of the way: this measures the check itself.
    s = await startTestServer({ AUTH_BACKOFF_AFTER: '1000', AUTH_ADDRESS_BACKOFF_AFTER: '1000', AUTH_USER_SLOW_AFTER: '1000' });
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'kim', password: 'kim-password-1', access: 'read' });
  });
  afterAll(() => s.stop());


  it('spends the same scrypt on an unknown user as on a known one (sign-in and Basic)', async () => {
    const checks = vi.mocked(checkPassword);
    const dummy = await dummyHash();
    // The stand-in an unknown user is checked against has today's parameters, as a real hash has.
    expect(dummy).toMatch(new RegExp(`^scrypt\\$${SCRYPT.N}\\$${SCRYPT.r}\\$${SCRYPT.p}\\$`));
    for (const attempt of [
      (u: string) => login(s, u, 'not-the-password'),
      (u: string) => batch(s, basic(u, 'not-the-password')),
    ]) {
      for (const [user, known] of [['kim', true], ['ghost-1', false]] as const) {
        checks.mockClear();
        expect((await attempt(user)).status).toBe(401);
        // Exactly one password check, on the user's hash or (unknown user) on none, which
        // checkPassword verifies against the stand-in: one scrypt either way.
        expect(checks).toHaveBeenCalledTimes(1);
        const [password, encoded] = checks.mock.calls[0]!;
        expect(password).toBe('not-the-password');
        if (known) expect(encoded).toMatch(/^scrypt\$/);
        else expect(encoded ?? null).toBeNull();
      }
    }
  });

  it('verifies a hash made with older scrypt parameters and upgrades it at the next sign-in', async () => {
    const salt = randomBytes(16);
    const key = await new Promise<Buffer>((res, rej) => scrypt('old-password-1', salt, 32, { N: 16384, r: 8, p: 1 }, (e, k) => (e ? rej(e) : res(k))));
    const old = `scrypt$16384$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
    await s.services.db('users').where({ username: 'kim' }).update({ password_hash: old });
    expect((await login(s, 'kim', 'old-password-1')).status).toBe(200);
    const row = await s.services.db('users').where({ username: 'kim' }).first('password_hash');
    expect(row.password_hash).toMatch(new RegExp(`^scrypt\\$${SCRYPT.N}\\$${SCRYPT.r}\\$${SCRYPT.p}\\$`));
    expect((await login(s, 'kim', 'old-password-1')).status).toBe(200);
    expect((await batch(s, basic('kim', 'old-password-1'))).status).toBe(200);
  });
});

describe('the request rate counts before authorization', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ LFS_RATE_LIMIT_PER_MINUTE: '3' });
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'lee', password: 'lee-password-1', access: 'read' });
  });
  afterAll(() => s.stop());

  const locks = (auth: string | null, from: string) =>
    send(s, '/acme/site.git/info/lfs/locks', { from, headers: { accept: GIT_LFS, ...(auth ? { authorization: auth } : {}) } });

  it('limits anonymous requests and requests with refused credentials by address, not the users elsewhere', async () => {
    // Eight in a row: however the minute windows fall, one of them holds more than three.
    const anonymous: Answer[] = [];
    for (let i = 0; i < 8; i++) anonymous.push(await locks(null, '127.0.0.6'));
    expect(anonymous.map((a) => a.status)).not.toContain(200);
    expectRetryAfter(anonymous.find((a) => a.status === 429)!);
    const forged: number[] = [];
    for (let i = 0; i < 8; i++) forged.push((await locks(basic('lee', `pat_${'x'.repeat(40)}`), '127.0.0.7')).status);
    expect(forged).toContain(429);
    expect((await locks(basic('lee', 'lee-password-1'), '127.0.0.8')).status).toBe(200);
    s.expectConformant();
  });
});
