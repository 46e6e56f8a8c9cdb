/**
 * Another site's page cannot change state with the credentials a browser attaches by itself.
 * A browser will send a form post (x-www-form-urlencoded, multipart or text/plain) to any origin
 * without asking, with HTTP Basic credentials it has cached: every operation that takes a body
 * refuses a Content-Type it does not declare, body or not, and a state change authenticated by
 * Basic or the session cookie refuses an Origin outside ALLOWED_ORIGINS. git-lfs sends no Origin;
 * it is not affected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const auth = `Basic ${Buffer.from('rae:rae-password-1').toString('base64')}`;

describe('cross-site requests with stored credentials', () => {
  let s: TestServer;
  let lfs: string;
  beforeAll(async () => {
    s = await startTestServer();
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'rae', password: 'rae-password-1', access: 'write' });
    lfs = `${s.directUrl}/acme/site.git/info/lfs`;
  });
  afterAll(() => s.stop());

  async function lock(path: string) {
    const res = await fetch(`${lfs}/locks`, { method: 'POST', headers: { authorization: auth, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ path }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { lock: { id: string } }).lock.id;
  }
  const stillLocked = async (id: string) => {
    const res = await fetch(`${lfs}/locks?id=${id}`, { headers: { authorization: auth, accept: GIT_LFS } });
    return ((await res.json()) as { locks: unknown[] }).locks.length === 1;
  };

  it('refuses a form post to unlock, even with an empty body (415), and keeps the lock', async () => {
    const id = await lock('art/hero.psd');
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', ''],
      ['application/x-www-form-urlencoded', 'force=true'],
      ['text/plain', '{"force":true}'],
      ['multipart/form-data; boundary=x', '--x--\r\n'],
    ] as const) {
      const res = await fetch(`${lfs}/locks/${id}/unlock`, { method: 'POST', headers: { authorization: auth, accept: GIT_LFS, 'content-type': type, origin: 'http://evil.example' }, body });
      expect(res.status, type).toBe(415);
      expect(((await res.json()) as { message: string }).message).toMatch(/Content-Type must be/);
    }
    expect(await stillLocked(id)).toBe(true);
    s.expectConformant();
  });

  it('refuses a state change from another origin with Basic credentials (403), on every object-API POST', async () => {
    const id = await lock('art/logo.psd');
    const headers = { authorization: auth, accept: GIT_LFS, 'content-type': GIT_LFS, origin: 'http://evil.example' };
    const attempts: [string, unknown][] = [
      [`${lfs}/locks/${id}/unlock`, { force: true }],
      [`${lfs}/locks`, { path: 'art/other.psd' }],
      [`${lfs}/locks/verify`, {}],
      [`${lfs}/objects/batch`, { operation: 'upload', objects: [{ oid: 'b'.repeat(64), size: 1 }] }],
      [`${lfs}/objects`, { oid: 'b'.repeat(64), size: 1 }],
    ];
    for (const [url, body] of attempts) {
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
      expect(res.status, url).toBe(403);
      expect(((await res.json()) as { message: string }).message).toMatch(/Origin http:\/\/evil\.example may not/);
    }
    expect(await stillLocked(id)).toBe(true);
    s.expectConformant();
  });

  it('lets the server\'s own origin, and clients that send no Origin (git-lfs), change state', async () => {
    const own = new URL(s.url).origin;
    const id = await lock('art/own.psd');
    const res = await fetch(`${lfs}/locks/${id}/unlock`, { method: 'POST', headers: { authorization: auth, accept: GIT_LFS, 'content-type': GIT_LFS, origin: own }, body: '{}' });
    expect(res.status).toBe(200);
    const id2 = await lock('art/plain.psd');
    const plain = await fetch(`${lfs}/locks/${id2}/unlock`, { method: 'POST', headers: { authorization: auth, accept: GIT_LFS } });
    expect(plain.status).toBe(200);
    await plain.body?.cancel();
    s.expectConformant();
  });
});
