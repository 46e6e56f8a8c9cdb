/**
 * The session cookie: `__Host-session` (Secure, Path=/, no Domain) when PUBLIC_URL is https,
 * `session` as before over http; a request carrying more than one session cookie, under either
 * name, is refused with 401 in the spec's shape — none of them is picked, even a valid one.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { insertOrg, insertUser } from '../../src/db/users.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PASSWORD = 'cookie-password-1';
/** The https server's public host: requests name it in Host, as they would behind its TLS proxy. */
const PUBLIC_HOST = 'pactum.example.test';

interface Answer { status: number; setCookies: string[]; body: string; challenge: string | null }

/** One request to the server itself (Host set when the server is the https one). */
function send(s: TestServer, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const publicUrl = new URL(s.services.config.publicUrl);
  const host = publicUrl.protocol === 'https:' ? { host: publicUrl.host } : {};
  return new Promise((resolve, reject) => {
    const req = request(`${s.directUrl}${path}`, { method: 'POST', headers: { ...host, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, setCookies: res.headers['set-cookie'] ?? [], body: text, challenge: (res.headers['www-authenticate']) ?? null }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A server with a user `ada`; `env` sets its PUBLIC_URL. */
async function serverWithUser(env: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer(env);
  const org = await insertOrg(s.services.db, { name: 'Cookies', slug: 'cookies' });
  await insertUser(s.services.db, { orgId: org.id, username: 'ada', passwordHash: await hashPassword(PASSWORD), role: 'org_admin' });
  return s;
}

async function login(s: TestServer): Promise<{ cookies: string[]; token: (name: string) => string }> {
  const res = await send(s, '/api/v1/auth/login', { 'content-type': 'application/json', accept: 'application/json' }, JSON.stringify({ username: 'ada', password: PASSWORD }));
  expect(res.status).toBe(200);
  const cookies = res.setCookies;
  return { cookies, token: (name) => new RegExp(`^${name}=([^;]+)`).exec(cookies.find((c) => c.startsWith(`${name}=`)) ?? '')?.[1] ?? '' };
}

/** tools/list with `cookie` as the Cookie header: the status and the body. */
async function withCookie(s: TestServer, cookie: string): Promise<{ status: number; body: Record<string, unknown>; challenge: string | null }> {
  const res = await send(s, '/api/v1/mcp', { cookie, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown>, challenge: res.challenge };
}

/** The spec's HttpError body with a Bearer challenge: the 401 of the dashboard. */
function expectRefused(answer: Awaited<ReturnType<typeof withCookie>>, message: RegExp) {
  expect(answer.status).toBe(401);
  expect(answer.body).toMatchObject({ error: 'Unauthorized', statusCode: 401, message: expect.stringMatching(message) });
  expect(answer.challenge).toMatch(/^Bearer resource_metadata=/);
}

describe('over https (PUBLIC_URL https)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await serverWithUser({ PUBLIC_URL: `https://${PUBLIC_HOST}` });
  });
  afterAll(() => s?.stop());

  it('login sets __Host-session with Secure, Path=/ and no Domain, and clears a plain session cookie', async () => {
    const { cookies, token } = await login(s);
    const host = cookies.find((c) => c.startsWith('__Host-session='))!;
    expect(token('__Host-session')).toMatch(/./);
    expect(host.split(/;\s*/).slice(1).map((a) => a.replace(/=\d+$/, '=N')).sort()).toEqual(['HttpOnly', 'Max-Age=N', 'Path=/', 'SameSite=Strict', 'Secure']);
    expect(host).not.toMatch(/Domain=/i);
    expect(cookies.find((c) => c.startsWith('session='))).toMatch(/^session=; .*Max-Age=0/);
    expect((await withCookie(s, `__Host-session=${token('__Host-session')}`)).status).toBe(200);
    s.expectConformant();
  });

  it('refuses __Host-session together with session, and two __Host-session, even when each is valid', async () => {
    const [a, b] = [(await login(s)).token('__Host-session'), (await login(s)).token('__Host-session')];
    for (const cookie of [`__Host-session=${a}; session=${b}`, `session=${a}; __Host-session=${a}`, `__Host-session=${a}; __Host-session=${b}`, `__Host-session=${a}; other=1; __Host-session=${a}`]) {
      expectRefused(await withCookie(s, cookie), /More than one session cookie/);
    }
    expect((await withCookie(s, `__Host-session=${a}`)).status).toBe(200);
    s.expectConformant();
  });

  it('does not take a plain session cookie for its own, even with a valid token', async () => {
    const { cookies } = await login(s);
    const token = /^(?:__Host-)?session=([^;]+)/.exec(cookies.find((c) => /^(__Host-)?session=[^;]/.test(c)) ?? '')?.[1];
    expect(token).toMatch(/./);
    expectRefused(await withCookie(s, `session=${token}`), /required/);
  });

  it('logout with two session cookies ends both sessions', async () => {
    const [a, b] = [(await login(s)).token('__Host-session'), (await login(s)).token('__Host-session')];
    const out = await send(s, '/api/v1/auth/logout', { cookie: `__Host-session=${a}; session=${b}` });
    expect(out.status).toBe(204);
    expect(out.setCookies.map((c) => c.split('=')[0]).sort()).toEqual(['__Host-session', 'session']);
    expectRefused(await withCookie(s, `__Host-session=${a}`), /session has ended/);
    expectRefused(await withCookie(s, `__Host-session=${b}`), /session has ended/);
    s.expectConformant();
  });
});

describe('over http', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await serverWithUser();
  });
  afterAll(() => s?.stop());

  it('login sets session as before: no Secure, no prefix', async () => {
    const { cookies, token } = await login(s);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatch(/^session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect((await withCookie(s, `session=${token('session')}`)).status).toBe(200);
  });

  it('refuses two session cookies, or session with __Host-session', async () => {
    const [a, b] = [(await login(s)).token('session'), (await login(s)).token('session')];
    for (const cookie of [`session=${a}; session=${b}`, `session=${a}; session=${a}`, `session=${a}; __Host-session=${b}`]) {
      expectRefused(await withCookie(s, cookie), /More than one session cookie/);
    }
    s.expectConformant();
  });
});
