/**
 * The object APIs over HTTP: the legacy API v0.5, the batch API v1.3 with transfer negotiation,
 * the basic and tus transfers, signed hrefs, locks, and every request-level status — each
 * response also checked against the specs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { json } from '../helpers/http.js';
import { createPersonalToken } from '../../src/db/repos.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const OBJSTORE = 'application/vnd.objstore+json';
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const W = basic('wally', 'wally-password-1');
const R = basic('rita', 'rita-password-1');
const content = (n: number) => {
  const bytes = randomBytes(n);
  return { bytes, oid: createHash('sha256').update(bytes).digest('hex'), size: n };
};

let s: TestServer;
let base: string;
let pub: string;
let pat: string;

beforeAll(async () => {
  s = await startTestServer();
  const db = s.services.db;
  const { user } = await lfsFixture(db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  await lfsFixture(db, { org: 'acme', repo: 'site', username: 'rita', password: 'rita-password-1', access: 'read' });
  await lfsFixture(db, { org: 'acme', repo: 'site', username: 'olga', password: 'olga-password-1' });
  await db('users').where({ username: 'olga' }).update({ role: 'org_admin' });
  await lfsFixture(db, { org: 'other', repo: 'secret', username: 'oscar', password: 'oscar-password-1', access: 'write' });
  await lfsFixture(db, { org: 'acme', repo: 'pub', username: 'pete', password: 'pete-password-1', access: 'write', public: true });
  pat = (await createPersonalToken(db, user.id, 'ci')).token;
  base = `${s.url}/acme/site.git/info/lfs`;
  pub = `${s.url}/acme/pub.git/info/lfs`;
});
afterAll(() => s.stop());
afterEach(() => s.expectConformant());

function api(url: string, init: { method?: string; auth?: string; body?: unknown; accept?: string; type?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { accept: init.accept ?? GIT_LFS, ...(init.auth ? { authorization: init.auth } : {}), ...init.headers };
  if (init.body !== undefined) headers['content-type'] = init.type ?? `${GIT_LFS}; charset=utf-8`;
  return fetch(url, { method: init.method ?? (init.body === undefined ? 'GET' : 'POST'), headers, body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body) });
}

async function batchOf(operation: 'upload' | 'download', objects: { oid: string; size: number }[], extra: Record<string, unknown> = {}, auth = W, url = base) {
  const res = await api(`${url}/objects/batch`, { auth, body: { operation, objects, ...extra } });
  return { res, body: await json(res) };
}

/** Uploads through the batch API and a basic PUT, then verifies. */
async function store(c: ReturnType<typeof content>, url = base, auth = W) {
  const { body } = await batchOf('upload', [c], { transfers: ['basic'] }, auth, url);
  const { upload, verify } = body.objects[0].actions;
  const put = await fetch(upload.href, { method: 'PUT', headers: upload.header, body: c.bytes });
  expect(put.status).toBe(200);
  const v = await api(verify.href, { headers: verify.header, body: { oid: c.oid, size: c.size } });
  expect(v.status).toBe(200);
}

describe('legacy API v0.5', () => {
  it('announces an upload (202 with upload and verify links), follows them, then answers 200 with a download link', async () => {
    const c = content(1000);
    const announce = await api(`${base}/objects`, { auth: W, body: { oid: c.oid, size: c.size }, accept: OBJSTORE, type: OBJSTORE });
    expect(announce.status).toBe(202);
    expect(announce.headers.get('content-type')).toBe(OBJSTORE);
    const a = await json(announce);
    expect(a._links.upload.href).toBe(`${base}/content/${c.oid}`);
    expect(a._links.upload.header.Authorization).toMatch(/^Bearer /);
    expect(a._links.upload.expires_in).toBe(3600);
    expect((await fetch(a._links.upload.href, { method: 'PUT', headers: a._links.upload.header, body: c.bytes })).status).toBe(200);
    expect((await api(a._links.verify.href, { headers: a._links.verify.header, body: { oid: c.oid, size: c.size }, type: OBJSTORE })).status).toBe(200);

    const again = await api(`${base}/objects`, { auth: W, body: { oid: c.oid, size: c.size } });
    expect(again.status).toBe(200);
    expect((await json(again))._links.download.href).toBe(`${base}/content/${c.oid}`);

    const meta = await api(`${base}/objects/${c.oid}`, { auth: R });
    expect(meta.status).toBe(200);
    const m = await json(meta);
    expect(m).toMatchObject({ oid: c.oid, size: c.size, _links: { self: { href: `${base}/objects/${c.oid}` } } });
    const got = await fetch(m._links.download.href, { headers: m._links.download.header });
    expect(Buffer.from(await got.arrayBuffer()).equals(c.bytes)).toBe(true);
  });

  it('answers 401 with the Basic challenge, 403 for a reader, 404 for what the caller may not see, 410 for a deleted object', async () => {
    const c = content(10);
    const anon = await api(`${base}/objects/${c.oid}`);
    expect(anon.status).toBe(401);
    expect(anon.headers.get('lfs-authenticate')).toBe('Basic realm="pactum"');
    expect((await api(`${base}/objects/${c.oid}`, { auth: basic('wally', 'wrong password!') })).status).toBe(401);
    expect((await api(`${base}/objects`, { auth: R, body: { oid: c.oid, size: 10 } })).status).toBe(403);
    expect((await api(`${base}/objects/${c.oid}`, { auth: R })).status).toBe(404);
    expect((await api(`${s.url}/other/secret.git/info/lfs/objects/${c.oid}`, { auth: W })).status).toBe(404);
    expect((await api(`${s.url}/acme/nope.git/info/lfs/objects`, { auth: W, body: { oid: c.oid, size: 10 } })).status).toBe(404);
    const bad = await api(`${base}/objects`, { auth: W, body: { oid: 'not-hex', size: 10 } });
    expect(bad.status).toBe(422);
    expect((await json(bad)).message).toMatch(/oid/);
    expect((await api(`${base}/objects`, { auth: W, body: '{not json' })).status).toBe(400);

    await store(c);
    const repo = await s.services.db('repos').where({ name: 'site' }).first();
    await s.services.db('lfs_objects').where({ repo_id: repo.id, oid: c.oid }).update({ deleted_at: new Date().toISOString(), deleted_reason: 'takedown request #42' });
    const gone = await api(`${base}/objects/${c.oid}`, { auth: R });
    expect(gone.status).toBe(410);
    expect((await json(gone)).message).toMatch(/takedown request #42/);
  });
});

describe('batch API v1.3', () => {
  it('reads, for a batch with remembered Basic credentials, the repository with the grant in one query and the objects in another', async () => {
    const c = content(10);
    // One instance, asked directly: each instance remembers credentials and counts queries of its own.
    const instance = s.instances[0]!;
    const only = `http://127.0.0.1:${(instance.server.address() as AddressInfo).port}/acme/site.git/info/lfs`;
    await batchOf('download', [c], {}, W, only); // the password checked once, and remembered
    const tables: string[][] = [];
    const note = (q: { sql: string }) => {
      const named = [...q.sql.matchAll(/\b(?:from|join)\s+[`"]?(\w+)[`"]?/gi)].map((m) => m[1]!).filter((t) => ['users', 'orgs', 'repos', 'repo_grants', 'lfs_objects'].includes(t));
      if (named.length) tables.push(named);
    };
    instance.services.db.on('query', note);
    try {
      const { res } = await batchOf('download', [c], {}, W, only);
      expect(res.status).toBe(200);
    } finally {
      instance.services.db.off('query', note);
    }
    // The user comes from the user state (auth/user-state.ts), which every change to it clears.
    expect(tables).toEqual([['repos', 'orgs', 'repo_grants'], ['lfs_objects']]);
  });

  it('negotiates the transfer by preference, not by list position; basic is implied', async () => {
    const c = content(10);
    const choose = async (operation: 'upload' | 'download', transfers?: string[]) => (await batchOf(operation, [c], transfers ? { transfers } : {})).body.transfer;
    expect(await choose('upload', ['basic', 'tus'])).toBe('tus');
    expect(await choose('upload', ['tus', 'basic'])).toBe('tus');
    expect(await choose('upload', ['lfs-standalone-file', 'tus', 'ssh'])).toBe('tus');
    expect(await choose('upload', ['ssh', 'lfs-standalone-file'])).toBe('basic');
    expect(await choose('upload')).toBe('basic');
    expect(await choose('download', ['tus', 'basic'])).toBe('basic');
    const { body } = await batchOf('upload', [c], { transfers: ['tus'] });
    expect(body.objects[0].actions.upload.href).toBe(`${base}/tus/${c.oid}`);
    const basicUpload = (await batchOf('upload', [c], { transfers: ['basic'] })).body.objects[0].actions.upload.href;
    expect(basicUpload).toBe(`${base}/content/${c.oid}`);
  });

  it('reports per-object errors inside a 200: 404 missing, 409 hash algorithm, 410 deleted, 422 invalid', async () => {
    const here = content(20);
    const deleted = content(21);
    await store(here);
    await store(deleted);
    const repo = await s.services.db('repos').where({ name: 'site' }).first();
    await s.services.db('lfs_objects').where({ repo_id: repo.id, oid: deleted.oid }).update({ deleted_at: new Date().toISOString(), deleted_reason: 'licence withdrawn' });
    const missing = content(22);
    const { res, body } = await batchOf('download', [here, missing, deleted, { oid: 'ABC', size: 1 }, { oid: missing.oid, size: -1 }]);
    expect(res.status).toBe(200);
    expect(body.hash_algo).toBe('sha256');
    const [a, b, c, d, e] = body.objects;
    expect(a.actions.download.href).toBe(`${base}/content/${here.oid}`);
    expect(b.error.code).toBe(404);
    expect(c.error).toMatchObject({ code: 410 });
    expect(c.error.message).toMatch(/licence withdrawn/);
    expect(d.error.code).toBe(422);
    expect(e.error.code).toBe(422);
    const md5 = await batchOf('download', [here], { hash_algo: 'md5' });
    expect(md5.body.objects[0].error.code).toBe(409);
  });

  it('leaves out actions for an upload of an object it already has', async () => {
    const c = content(30);
    await store(c);
    const { body } = await batchOf('upload', [c, content(31)]);
    expect(body.objects[0]).toEqual({ oid: c.oid, size: 30 });
    expect(body.objects[1].actions.upload).toBeDefined();
  });

  it('answers in the media type asked for, and refuses others (406, 415)', async () => {
    const c = content(5);
    const obj = await api(`${base}/objects/batch`, { auth: W, accept: OBJSTORE, type: OBJSTORE, body: { operation: 'upload', objects: [c] } });
    expect(obj.headers.get('content-type')).toBe(OBJSTORE);
    await obj.body?.cancel();
    expect((await api(`${base}/objects/batch`, { auth: W, accept: 'application/json', body: { operation: 'upload', objects: [c] } })).status).toBe(406);
    expect((await api(`${base}/objects/batch`, { auth: W, type: 'application/json', body: { operation: 'upload', objects: [c] } })).status).toBe(415);
    expect((await api(`${base}/objects/batch`, { auth: W, body: { operation: 'delete', objects: [c] } })).status).toBe(422);
  });

  it('answers 401, 403 and 404 at request level', async () => {
    const c = content(5);
    expect((await batchOf('download', [c], {}, '')).res.status).toBe(401);
    expect((await batchOf('upload', [c], {}, R)).res.status).toBe(403);
    expect((await batchOf('upload', [c], {}, W, `${s.url}/other/secret.git/info/lfs`)).res.status).toBe(404);
    expect((await batchOf('upload', [c], {}, basic('wally', pat))).res.status).toBe(200);
    expect((await batchOf('upload', [c], {}, basic('rita', pat))).res.status).toBe(401);
  });

  it('serves public repositories to anonymous readers, and asks writers for credentials', async () => {
    const c = content(40);
    await store(c, pub, basic('pete', 'pete-password-1'));
    const { res, body } = await batchOf('download', [c], {}, '', pub);
    expect(res.status).toBe(200);
    const dl = body.objects[0].actions.download;
    expect(Buffer.from(await (await fetch(dl.href, { headers: dl.header })).arrayBuffer()).equals(c.bytes)).toBe(true);
    const anonymousPush = await batchOf('upload', [content(41)], {}, '', pub);
    expect(anonymousPush.res.status).toBe(401);
    expect(anonymousPush.res.headers.get('lfs-authenticate')).toMatch(/Basic/);
  });
});

describe('basic transfers', () => {
  it('keeps nothing of a corrupt upload: wrong hash, short body, long body', async () => {
    const c = content(4096);
    const { body } = await batchOf('upload', [c], { transfers: ['basic'] });
    const { upload } = body.objects[0].actions;
    const wrong = Buffer.from(c.bytes);
    wrong[100] = wrong[100]! ^ 0xff;
    const r1 = await fetch(upload.href, { method: 'PUT', headers: upload.header, body: wrong });
    expect(r1.status).toBe(422);
    expect((await json(r1)).message).toMatch(/nothing was stored/);
    expect((await fetch(upload.href, { method: 'PUT', headers: upload.header, body: c.bytes.subarray(0, 4000) })).status).toBe(422);
    expect((await fetch(upload.href, { method: 'PUT', headers: upload.header, body: Buffer.concat([c.bytes, Buffer.from('x')]) })).status).toBe(422);
    // Through Basic credentials (no announced size) a longer body simply hashes wrong.
    expect((await fetch(upload.href, { method: 'PUT', headers: { authorization: W }, body: Buffer.concat([c.bytes, Buffer.from('x')]) })).status).toBe(422);
    expect(await s.services.objects.store.stat(c.oid)).toBeNull();
    const tmp = join(s.dataDir, 'lfs', 'tmp');
    expect(existsSync(tmp) ? readdirSync(tmp) : []).toEqual([]);
    const verify = await api(body.objects[0].actions.verify.href, { headers: body.objects[0].actions.verify.header, body: { oid: c.oid, size: c.size } });
    expect(verify.status).toBe(404);
    await verify.body?.cancel();
  });

  it('serves byte ranges for resumed downloads (206, Content-Range) and 416 outside the object', async () => {
    const c = content(10_000);
    await store(c);
    const dl = (await batchOf('download', [c])).body.objects[0].actions.download;
    const part = await fetch(dl.href, { headers: { ...dl.header, range: 'bytes=9000-' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 9000-9999/10000');
    expect(Buffer.from(await part.arrayBuffer()).equals(c.bytes.subarray(9000))).toBe(true);
    const mid = await fetch(dl.href, { headers: { ...dl.header, range: 'bytes=10-19' } });
    expect(Buffer.from(await mid.arrayBuffer()).equals(c.bytes.subarray(10, 20))).toBe(true);
    const outside = await fetch(dl.href, { headers: { ...dl.header, range: 'bytes=10000-' } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe('bytes */10000');
    await outside.body?.cancel();
    const whole = await fetch(dl.href, { headers: dl.header });
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await whole.arrayBuffer()).equals(c.bytes)).toBe(true);
  });

  it('refuses expired, tampered and misapplied transfer tokens', async () => {
    const a = content(50);
    const b = content(51);
    await store(a);
    const dl = (await batchOf('download', [a])).body.objects[0].actions.download;
    const token = dl.header.Authorization.slice('Bearer '.length);
    const [payload, mac] = token.split('.');
    const tamperedPayload = Buffer.from(Buffer.from(payload, 'base64url').toString().replace('"download"', '"upload"')).toString('base64url');
    for (const [name, auth] of [
      ['tampered', `Bearer ${tamperedPayload}.${mac}`],
      ['forged mac', `Bearer ${payload}.${Buffer.alloc(32).toString('base64url')}`],
      ['garbage', 'Bearer abc'],
    ]) {
      const res = await fetch(dl.href, { headers: { authorization: auth! } });
      expect(res.status, name).toBe(401);
      await res.body?.cancel();
    }
    // A download token does not open another object, nor an upload.
    const other = await fetch(`${base}/content/${b.oid}`, { headers: dl.header });
    expect(other.status).toBe(401);
    await other.body?.cancel();
    const put = await fetch(`${base}/content/${a.oid}`, { method: 'PUT', headers: dl.header, body: a.bytes });
    expect(put.status).toBe(401);
    await put.body?.cancel();
    const expired = s.services.objects.tokens.sign({ repoId: 'x', oid: a.oid, size: 50, op: 'download', subject: 'u', username: null, orgId: 'o', exp: Math.floor(Date.now() / 1000) - 10 });
    const late = await fetch(dl.href, { headers: { authorization: `Bearer ${expired}` } });
    expect(late.status).toBe(401);
    expect((await json(late)).message).toMatch(/expired/);
  });
});

describe('tus transfers', () => {
  it('starts at offset 0, appends, resumes, and reports the full size only once committed', async () => {
    const c = content(100_000);
    const { body } = await batchOf('upload', [c], { transfers: ['tus'] });
    const { upload, verify } = body.objects[0].actions;
    const tus = { ...upload.header, 'tus-resumable': '1.0.0' };
    const head = async () => {
      const r = await fetch(upload.href, { method: 'HEAD', headers: tus });
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('no-store');
      return Number(r.headers.get('upload-offset'));
    };
    const patch = (offset: number, bytes: Buffer, type = 'application/offset+octet-stream') =>
      fetch(upload.href, { method: 'PATCH', headers: { ...tus, 'upload-offset': String(offset), 'content-type': type }, body: new Uint8Array(bytes) });
    expect(await head()).toBe(0);
    const first = await patch(0, c.bytes.subarray(0, 30_000));
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe('30000');
    expect(await head()).toBe(30_000);
    const wrongOffset = await patch(10, c.bytes.subarray(10, 20));
    expect(wrongOffset.status).toBe(409);
    expect((await json(wrongOffset)).message).toMatch(/30000/);
    expect((await patch(30_000, c.bytes.subarray(30_000), 'application/octet-stream')).status).toBe(415);
    const badVersion = await fetch(upload.href, { method: 'PATCH', headers: { ...upload.header, 'tus-resumable': '0.2.2', 'upload-offset': '30000', 'content-type': 'application/offset+octet-stream' }, body: c.bytes.subarray(30_000) });
    expect(badVersion.status).toBe(412);
    await badVersion.body?.cancel();
    expect(await s.services.objects.store.stat(c.oid)).toBeNull(); // still not visible
    const last = await patch(30_000, c.bytes.subarray(30_000));
    expect(last.status).toBe(204);
    expect(last.headers.get('upload-offset')).toBe('100000');
    expect(await head()).toBe(100_000);
    expect((await api(verify.href, { headers: verify.header, body: { oid: c.oid, size: c.size } })).status).toBe(200);
    const dl = (await batchOf('download', [c])).body.objects[0].actions.download;
    expect(Buffer.from(await (await fetch(dl.href, { headers: dl.header })).arrayBuffer()).equals(c.bytes)).toBe(true);
  });

  it('discards a corrupt or overlong tus upload', async () => {
    const c = content(5000);
    const { body } = await batchOf('upload', [c], { transfers: ['tus'] });
    const { upload } = body.objects[0].actions;
    const headers = { ...upload.header, 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' };
    const corrupt = Buffer.from(c.bytes);
    corrupt[0] = corrupt[0]! ^ 1;
    const r = await fetch(upload.href, { method: 'PATCH', headers, body: corrupt });
    expect(r.status).toBe(422);
    await r.body?.cancel();
    const long = await fetch(upload.href, { method: 'PATCH', headers, body: new Uint8Array(Buffer.concat([c.bytes, Buffer.from('more')])) });
    expect(long.status).toBe(413);
    await long.body?.cancel();
    const offset = await fetch(upload.href, { method: 'HEAD', headers: { ...upload.header, 'tus-resumable': '1.0.0' } });
    expect(offset.headers.get('upload-offset')).toBe('0');
    expect(await s.services.objects.store.stat(c.oid)).toBeNull();
    const options = await fetch(upload.href, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('tus-version')).toBe('1.0.0');
  });
});

describe('locks', () => {
  it('creates, conflicts, lists with filters and cursors, verifies ours and theirs, and unlocks (force by admins only)', async () => {
    const lock = async (path: string, auth = W) => api(`${base}/locks`, { auth, body: { path, ref: { name: 'refs/heads/main' } } });
    const created = await lock('art/logo.psd');
    expect(created.status).toBe(201);
    const { lock: l } = await json(created);
    expect(l).toMatchObject({ path: 'art/logo.psd', owner: { name: 'wally' } });
    const conflict = await lock('art/logo.psd', basic('olga', 'olga-password-1'));
    expect(conflict.status).toBe(409);
    expect((await json(conflict)).lock.id).toBe(l.id);
    expect((await lock('art/b.psd', R)).status).toBe(403);
    for (const p of ['art/a.psd', 'art/c.psd', 'art/d.psd']) expect((await lock(p)).status).toBe(201);

    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await json(await api(`${base}/locks?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { auth: R }));
      all.push(...page.locks.map((x: { path: string }) => x.path));
      cursor = page.next_cursor;
    } while (cursor);
    expect(all).toEqual(['art/a.psd', 'art/c.psd', 'art/d.psd', 'art/logo.psd']);
    expect((await json(await api(`${base}/locks?path=art/c.psd`, { auth: R }))).locks).toHaveLength(1);

    const olgaLock = await json(await lock('art/olga.psd', basic('olga', 'olga-password-1')));
    const v = await json(await api(`${base}/locks/verify`, { auth: W, body: { ref: { name: 'refs/heads/main' } } }));
    expect(v.ours.map((x: { path: string }) => x.path)).toContain('art/logo.psd');
    expect(v.theirs.map((x: { path: string }) => x.path)).toEqual(['art/olga.psd']);
    expect((await api(`${base}/locks/verify`, { auth: R, body: {} })).status).toBe(403);

    expect((await api(`${base}/locks/${olgaLock.lock.id}/unlock`, { auth: W, body: {} })).status).toBe(403);
    expect((await api(`${base}/locks/${olgaLock.lock.id}/unlock`, { auth: W, body: { force: true } })).status).toBe(403);
    const forced = await api(`${base}/locks/${l.id}/unlock`, { auth: basic('olga', 'olga-password-1'), body: { force: true } });
    expect(forced.status).toBe(200);
    expect((await json(forced)).lock.id).toBe(l.id);
    expect((await api(`${base}/locks/${l.id}/unlock`, { auth: W, body: {} })).status).toBe(404);
  });
});

describe('limits', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ LFS_RATE_LIMIT_PER_MINUTE: '3', LFS_MAX_BATCH_OBJECTS: '2', LFS_BANDWIDTH_QUOTA_BYTES_PER_DAY: '1000' });
    await lfsFixture(limited.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  });
  afterAll(() => limited.stop());

  it('answers 413 for too many objects, 509 past the bandwidth quota, 429 with Retry-After past the rate', async () => {
    const url = `${limited.url}/acme/site.git/info/lfs`;
    const c = content(800);
    const many = await batchOf('upload', [content(1), content(2), content(3)], {}, W, url);
    expect(many.res.status).toBe(413);
    await store(c, url);
    const dl = (await batchOf('download', [c], {}, W, url)).body.objects[0].actions.download;
    expect((await fetch(dl.href, { headers: dl.header })).status).toBe(200); // 800 of 1000 bytes
    const over = await fetch(dl.href, { headers: dl.header });
    expect(over.status).toBe(509);
    await over.body?.cancel();
    let limitedRes: Response | undefined;
    for (let i = 0; i < 5 && !limitedRes; i++) {
      const r = await api(`${url}/locks`, { auth: W });
      if (r.status === 429) limitedRes = r;
      else await r.body?.cancel();
    }
    expect(limitedRes?.status).toBe(429);
    expect(Number(limitedRes!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await json(limitedRes!)).message).toMatch(/Rate limit/);
    limited.expectConformant();
  });

  it('answers 507 when the store is below its free-space floor', async () => {
    // The floor is a file-system matter (S3 reports no free space), so this server keeps files whatever the pass.
    const full = await startTestServer({ LFS_MIN_FREE_BYTES: String(2 ** 52), STORAGE: 'fs' });
    await lfsFixture(full.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
    const r = await batchOf('upload', [content(10)], {}, W, `${full.url}/acme/site.git/info/lfs`);
    expect(r.res.status).toBe(507);
    full.expectConformant();
    await full.stop();
  });
});
