/**
 * A browser with a stale session cookie (signed out, ended, or two of them) still reaches the
 * pages: where anonymous callers are served or a sign-in page is the answer, such a cookie counts
 * as none and its end is sent, so the next request carries none. Every error of a page route is a
 * page. An API still refuses the stale cookie with its own 401.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/passwords.js';
import { insertOrg, insertUser } from '../../src/db/users.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PASSWORD = 'stale-password-1';
let s: TestServer;
let orgId: string;
beforeAll(async () => {
  s = await startTestServer();
  orgId = (await insertOrg(s.services.db, { name: 'Stale', slug: 'stale' })).id;
  await insertUser(s.services.db, { orgId, username: 'sam', passwordHash: await hashPassword(PASSWORD), role: 'member' });
});
afterAll(() => s.stop());
afterEach(() => s.expectConformant());

/** A session cookie (`session=…`) of sam's, signed out already when `signedOut`. */
async function sessionCookie(signedOut: boolean): Promise<string> {
  const res = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ username: 'sam', password: PASSWORD }) });
  expect(res.status).toBe(200);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('session='))!.split(';')[0]!;
  if (signedOut) expect((await fetch(`${s.url}/api/v1/auth/logout`, { method: 'POST', headers: { cookie } })).status).toBe(204);
  return cookie;
}

const get = (path: string, headers: Record<string, string>) => fetch(`${s.url}${path}`, { headers: { accept: 'text/html', ...headers } });
const ends = (res: Response) => res.headers.getSetCookie().some((c) => /^session=;/.test(c) && /Max-Age=0/.test(c));

describe('a stale session cookie on a page', () => {
  it('GET / answers the landing page with its sign-in form, and ends the cookie', async () => {
    const stale = [await sessionCookie(true), 'session=ses_never_issued', `${await sessionCookie(false)}; ${await sessionCookie(false)}`];
    for (const cookie of stale) {
      const res = await get('/', { cookie });
      expect(res.status, cookie).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toMatch(/<form/);
      expect(ends(res), cookie).toBe(true);
    }
  });

  it('GET / with a live session cookie ends nothing', async () => {
    const res = await get('/', { cookie: await sessionCookie(false) });
    expect(res.status).toBe(200);
    await res.body?.cancel();
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('GET /reports/{scanId} answers the sign-in page, as without a cookie, and ends the cookie', async () => {
    const res = await get('/reports/scn_01jdq3v8k2m5n7p9r1s3t5v7x9', { cookie: await sessionCookie(true) });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/Sign in to see this report/);
    expect(ends(res)).toBe(true);
  });

  it('GET /reports/{scanId} with a valid bearer token beside it is served to the token', async () => {
    const token = await s.token({ sub: 'usr_stale_reader', orgId, role: 'member' });
    const res = await get('/reports/scn_01jdq3v8k2m5n7p9r1s3t5v7x9', { cookie: await sessionCookie(true), authorization: `Bearer ${token}` });
    // Signed in by the token: the scan is not in its org, so the page says no such report.
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/No such report/);
    expect(ends(res)).toBe(true);
  });

  it('the MCP endpoint still refuses it: 401 in the API shape', async () => {
    const res = await fetch(`${s.url}/api/v1/mcp`, {
      method: 'POST',
      headers: { cookie: await sessionCookie(true), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await res.json()) as { message: string }).message).toMatch(/session has ended/);
  });
});

describe('errors of a page route are pages', () => {
  it('a scan id that fails its pattern is the HTML 404 the spec declares', async () => {
    for (const path of ['/reports/a.b', '/reports/scn_%00', '/reports/scn_%FF']) {
      const res = await get(path, {});
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy'), path).toMatch(/default-src 'none'/);
      expect(await res.text(), path).toMatch(/<h1>Not Found<\/h1>/);
    }
  });

  it('a client that takes no HTML still gets the declared JSON 406', async () => {
    const res = await get('/reports/scn_01jdq3v8k2m5n7p9r1s3t5v7x9', { accept: 'application/json' });
    expect(res.status).toBe(406);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    await res.body?.cancel();
  });
});
