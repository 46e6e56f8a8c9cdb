/**
 * Every request shape that git-lfs and the Git LFS API documents allow (docs/api/batch.md and
 * docs/api/locking.md in the git-lfs repository), and each case of git-lfs's own server API
 * compliance tool (t/git-lfs-test-server-api at v3.3.0), reproduced with the requests it sends:
 * `"ref": {}` (a nil remote ref with `name,omitempty`) and `hash_algo: "sha256"`. Also lock path
 * normalisation and the batch request caps. Every response is checked against the specs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { json } from '../helpers/http.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const W = basic('wally', 'wally-password-1');
const OLGA = basic('olga', 'olga-password-1');

interface TestObject { oid: string; size: number }
interface Content extends TestObject { bytes: Buffer }

/** Like the tool's test files: 50 to 249 random bytes. */
const content = (): Content => {
  const bytes = randomBytes(50 + Math.floor(Math.random() * 200));
  return { bytes, oid: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
};

/** Like the tool's missing oids: a running SHA-256 over one more byte each time; no content. */
function missingObjects(n: number): TestObject[] {
  const running = createHash('sha256');
  return Array.from({ length: n }, (_, i) => {
    running.update(Buffer.from([(i * 37 + 11) % 256]));
    return { oid: running.copy().digest('hex'), size: 50 + ((i * 53) % 200) };
  });
}

/** The tool's interleaveTestData: one to three of each in turn (a fixed pattern here). */
function interleave<T>(a: T[], b: T[]): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  for (let turn = 0; i < a.length || j < b.length; turn++) {
    for (let k = (turn % 3) + 1; k > 0 && i < a.length; k--) out.push(a[i++]!);
    for (let k = ((turn + 1) % 3) + 1; k > 0 && j < b.length; k--) out.push(b[j++]!);
  }
  return out;
}

let s: TestServer;
let base: string;
let existing: Content[];
let missing: TestObject[];

function api(url: string, init: { method?: string; auth?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = { accept: GIT_LFS, ...(init.auth ? { authorization: init.auth } : {}) };
  if (init.body !== undefined) headers['content-type'] = `${GIT_LFS}; charset=utf-8`;
  return fetch(url, { method: init.method ?? (init.body === undefined ? 'GET' : 'POST'), headers, body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body) });
}

/** A batch request exactly as the compliance tool's tq.Batch sends it. */
async function toolBatch(operation: 'upload' | 'download', objects: TestObject[], url = base) {
  const res = await api(`${url}/objects/batch`, { auth: W, body: { operation, objects: objects.map(({ oid, size }) => ({ oid, size })), ref: {}, hash_algo: 'sha256' } });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  // "incorrect number of returned objects": one answer per object, in the request's order.
  expect(body.objects.map((o: TestObject) => o.oid)).toEqual(objects.map((o) => o.oid));
  return body.objects as { oid: string; size: number; actions?: Record<string, { href: string; header: Record<string, string> }>; error?: { code: number; message: string } }[];
}

async function rawBatch(body: unknown, url = base) {
  const res = await api(`${url}/objects/batch`, { auth: W, body });
  return { status: res.status, body: await json(res) };
}

beforeAll(async () => {
  s = await startTestServer();
  const db = s.services.db;
  await lfsFixture(db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  await lfsFixture(db, { org: 'acme', repo: 'site', username: 'olga', password: 'olga-password-1', access: 'write' });
  base = `${s.url}/acme/site.git/info/lfs`;
  existing = Array.from({ length: 50 }, content);
  missing = missingObjects(50);
});
afterAll(() => s.stop());
afterEach(() => s.expectConformant());

describe('git-lfs-test-server-api v3.3.0, case by case', () => {
  it('set-up: uploads the 50 test objects through batch (ref {}), PUT and verify, as the tool does before its tests', async () => {
    const answers = await toolBatch('upload', existing);
    for (const [i, o] of answers.entries()) {
      const { upload, verify } = o.actions!;
      const put = await fetch(upload!.href, { method: 'PUT', headers: upload!.header, body: new Uint8Array(existing[i]!.bytes) });
      expect(put.status).toBe(200);
      await put.body?.cancel();
      const verified = await fetch(verify!.href, { method: 'POST', headers: { ...verify!.header, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ oid: o.oid, size: o.size }) });
      expect(verified.status).toBe(200);
      await verified.body?.cancel();
    }
  });

  it('"Test upload: all missing": an upload action for every object', async () => {
    const answers = await toolBatch('upload', missing);
    for (const o of answers) expect(o.actions?.upload?.href, o.oid).toBeDefined();
  });

  it('"Test upload: all present": no upload action for any object', async () => {
    const answers = await toolBatch('upload', existing);
    for (const o of answers) {
      expect(o.actions, o.oid).toBeUndefined();
      expect(o.error, o.oid).toBeUndefined();
    }
  });

  it('"Test upload: mixed": upload actions for exactly the missing ones', async () => {
    const have = new Set(existing.map((o) => o.oid));
    const answers = await toolBatch('upload', interleave<TestObject>(existing, missing));
    expect(answers).toHaveLength(100);
    for (const o of answers) expect(Boolean(o.actions?.upload), o.oid).toBe(!have.has(o.oid));
  });

  it('"Test upload: edge cases": per-object 422 for a short, long or non-hex oid and a negative size inside a 200; size 0 gets an upload', async () => {
    const invalid: (TestObject & { reason: string })[] = [
      { oid: 'a345cde', size: 99, reason: 'SHA is too short' },
      { oid: '1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef', size: 99, reason: 'SHA is too long' },
      { oid: 'bf3e3e2af9366a3b704ax0c31de5afa64193ebabffde2091936ad2G7510bc03a', size: 99, reason: 'SHA contains invalid characters' },
      { oid: 'e3bf3e2af9366a3b704af0c31de5afa64193ebabffde2091936ad237510bc03a', size: -1, reason: 'Negative size' },
      { oid: 'd2983e2af9366a3b704af0c31de5afa64193ebabffde2091936ad237510bc03a', size: -125, reason: 'Negative size' },
    ];
    const zero = { oid: '159f6ac723b9023b704af0c31de5afa64193ebabffde2091936ad237510bc03a', size: 0 };
    const answers = await toolBatch('upload', interleave<TestObject>(invalid, [zero]));
    const byOid = new Map(answers.map((o) => [o.oid, o]));
    for (const bad of invalid) {
      const o = byOid.get(bad.oid)!;
      expect(o.actions, bad.reason).toBeUndefined();
      expect(o.error?.code, bad.reason).toBe(422);
      expect(o.error?.message, bad.reason).toMatch(bad.size < 0 ? /size/i : /oid/i);
      expect(o.size, 'the size is echoed as sent').toBe(bad.size);
    }
    expect(byOid.get(zero.oid)!.actions?.upload?.href).toBeDefined();
  });

  it('"Test download: all existing": a download action for every object', async () => {
    const answers = await toolBatch('download', existing);
    for (const [i, o] of answers.entries()) {
      expect(o.actions?.download?.href, o.oid).toBeDefined();
      expect(o.size).toBe(existing[i]!.size);
    }
    // and the action works: the bytes come back
    const first = answers[0]!.actions!.download!;
    const got = await fetch(first.href, { headers: first.header });
    expect(Buffer.from(await got.arrayBuffer()).equals(existing[0]!.bytes)).toBe(true);
  });

  it('"Test download: all missing": a 404 error and no download action for every object', async () => {
    const answers = await toolBatch('download', missing);
    for (const o of answers) {
      expect(o.actions, o.oid).toBeUndefined();
      expect(o.error?.code, o.oid).toBe(404);
    }
  });

  it('"Test download: mixed": download actions for the present ones, 404 for the missing ones', async () => {
    const have = new Set(existing.map((o) => o.oid));
    const answers = await toolBatch('download', interleave<TestObject>(existing, missing));
    expect(answers).toHaveLength(100);
    for (const o of answers) {
      if (have.has(o.oid)) expect(o.actions?.download?.href, o.oid).toBeDefined();
      else expect([o.actions, o.error?.code], o.oid).toEqual([undefined, 404]);
    }
  });
});

describe('batch request shapes the Git LFS batch API allows', () => {
  const obj = (): TestObject => ({ oid: existing[0]!.oid, size: existing[0]!.size });

  it('accepts ref left out, null, {}, with a null or empty name, or with unknown properties', async () => {
    for (const ref of [undefined, null, {}, { name: null }, { name: '' }, { name: 'refs/heads/main', kind: 'branch' }]) {
      const r = await rawBatch({ operation: 'download', objects: [obj()], ...(ref === undefined ? {} : { ref }) });
      expect(r.status, JSON.stringify(ref)).toBe(200);
      expect(r.body.objects[0].actions.download.href).toBeDefined();
    }
  });

  it('treats transfers and hash_algo left out or null as basic and sha256', async () => {
    for (const extra of [{}, { transfers: null }, { hash_algo: null }, { transfers: null, hash_algo: null, ref: null }]) {
      const r = await rawBatch({ operation: 'upload', objects: [missing[0]], ...extra });
      expect(r.status, JSON.stringify(extra)).toBe(200);
      expect(r.body.transfer).toBe('basic');
      expect(r.body.hash_algo).toBe('sha256');
      expect(r.body.objects[0].actions.upload.href).toBe(`${base}/content/${missing[0]!.oid}`);
    }
  });

  it('ignores unknown properties at the top, in objects and in ref, and never echoes them', async () => {
    const r = await rawBatch({
      operation: 'download', objects: [{ ...obj(), authenticated: false, name: 'file0.dat', x_extra: [1] }], ref: { name: 'refs/heads/main', extra: true }, hash_algo: 'sha256', future_field: { nested: 1 },
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.objects[0]).sort()).toEqual(['actions', 'authenticated', 'oid', 'size']);
    expect(r.body).not.toHaveProperty('future_field');
  });

  it('answers a hash_algo other than sha256 with a 409 for every object, inside a 200, as the docs describe', async () => {
    for (const algo of ['sha512', 'SHA256', 'md5']) {
      const r = await rawBatch({ operation: 'upload', objects: [obj(), missing[1], { oid: 'a345cde', size: 1 }], hash_algo: algo });
      expect(r.status, algo).toBe(200);
      expect(r.body.hash_algo).toBe('sha256'); // the server's algorithm, which the client checks
      expect(r.body.objects.map((o: { error?: { code: number } }) => o.error?.code), algo).toEqual([409, 409, 409]);
      expect(r.body.objects[0].error.message).toContain(algo);
      expect(r.body.objects.some((o: { actions?: unknown }) => o.actions)).toBe(false);
    }
  });

  it('answers an empty object list with an empty list', async () => {
    const r = await rawBatch({ operation: 'download', objects: [] });
    expect(r.status).toBe(200);
    expect(r.body.objects).toEqual([]);
  });

  it('still refuses, with a whole-request 422 in the error shape, what breaks the schema', async () => {
    const bad: unknown[] = [
      { objects: [obj()] }, // no operation
      { operation: 'delete', objects: [obj()] },
      { operation: 'download' }, // no objects
      { operation: 'download', objects: [{ oid: 12, size: 1 }] },
      { operation: 'download', objects: [{ oid: obj().oid, size: '12' }] },
      { operation: 'download', objects: [{ oid: obj().oid }] },
      { operation: 'download', objects: [obj()], ref: 'refs/heads/main' },
      { operation: 'download', objects: [obj()], transfers: 'basic' },
    ];
    for (const body of bad) {
      const r = await rawBatch(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(typeof r.body.message).toBe('string');
      expect(r.body).not.toHaveProperty('objects');
    }
  });
});

describe('locking request shapes and lock paths', () => {
  const locks = `/locks`;
  const createLock = (path: string, extra: Record<string, unknown> = {}, auth = W) => api(`${base}${locks}`, { auth, body: { path, ...extra } });

  it('accepts ref left out, null, {} or with a null name on create, verify and unlock, and ignores unknown properties', async () => {
    const refs = [undefined, null, {}, { name: null }, { name: 'refs/heads/main', extra: 1 }];
    for (const [i, ref] of refs.entries()) {
      const extra = { ...(ref === undefined ? {} : { ref }), unknown_field: 'x' };
      const created = await createLock(`shapes/file${i}.psd`, extra);
      expect(created.status, JSON.stringify(ref)).toBe(201);
      const { lock } = await json(created);
      const verify = await api(`${base}/locks/verify`, { auth: W, body: { ...extra, cursor: null, limit: null } });
      expect(verify.status, JSON.stringify(ref)).toBe(200);
      expect((await json(verify)).ours.map((l: { id: string }) => l.id)).toContain(lock.id);
      const unlocked = await api(`${base}/locks/${lock.id}/unlock`, { auth: W, body: { ...extra, force: null } });
      expect(unlocked.status, JSON.stringify(ref)).toBe(200);
      expect((await json(unlocked)).lock.id).toBe(lock.id);
    }
    const bare = await json(await createLock('shapes/bare.psd'));
    const noBody = await api(`${base}/locks/${bare.lock.id}/unlock`, { auth: W, method: 'POST' });
    expect(noBody.status).toBe(200);
    await noBody.body?.cancel();
  });

  it('bounds verify and list page sizes instead of refusing them: 0 means the default, beyond 1000 is 1000', async () => {
    for (let i = 0; i < 3; i++) expect((await createLock(`pages/p${i}.bin`)).status).toBe(201);
    for (const limit of [0, 5000]) {
      const v = await api(`${base}/locks/verify`, { auth: W, body: { limit } });
      expect(v.status, String(limit)).toBe(200);
      expect((await json(v)).ours.length).toBeGreaterThanOrEqual(3);
      const l = await api(`${base}/locks?limit=${limit}`, { auth: W });
      expect(l.status, String(limit)).toBe(200);
      expect((await json(l)).locks.length).toBeGreaterThanOrEqual(3);
    }
    const one = await json(await api(`${base}/locks/verify`, { auth: W, body: { limit: 1 } }));
    expect(one.ours).toHaveLength(1);
    expect(one.next_cursor).toBeDefined();
  });

  it('locks one file under one normalised path whatever its spelling, and returns that path', async () => {
    const created = await createLock('./art//logo.psd/');
    expect(created.status).toBe(201);
    const { lock } = await json(created);
    expect(lock.path).toBe('art/logo.psd');
    for (const spelling of ['art/logo.psd', './art/logo.psd', 'art//logo.psd', 'art/logo.psd/', 'art/./logo.psd', '././art/logo.psd']) {
      const clash = await createLock(spelling, {}, OLGA);
      expect(clash.status, spelling).toBe(409);
      expect((await json(clash)).lock.id, spelling).toBe(lock.id);
      const listed = await json(await api(`${base}/locks?path=${encodeURIComponent(spelling)}`, { auth: W }));
      expect(listed.locks.map((l: { id: string }) => l.id), spelling).toEqual([lock.id]);
    }
    const theirs = await json(await api(`${base}/locks/verify`, { auth: OLGA, body: {} }));
    expect(theirs.theirs.find((l: { id: string }) => l.id === lock.id).path).toBe('art/logo.psd');
    // a backslash is part of a Unix file name, not a separator
    expect((await json(await createLock('art\\logo.psd'))).lock.path).toBe('art\\logo.psd');
  });

  it('refuses .. segments, absolute paths and paths that name no file with 422 in the error shape, and stores nothing', async () => {
    const before = await s.services.db('lfs_locks').count({ n: '*' }).first();
    for (const path of ['../secret.psd', 'art/../../etc/passwd', 'art/../logo.psd', '..', '/etc/passwd', '/art/logo.psd', '.', './', '//', '/']) {
      const r = await createLock(path);
      expect(r.status, path).toBe(422);
      const body = await json(r);
      expect(Object.keys(body), path).toContain('message');
      expect(body.message, path).toMatch(/absolute|'\.\.'|names no file/);
    }
    const after = await s.services.db('lfs_locks').count({ n: '*' }).first();
    expect(Number(after!.n)).toBe(Number(before!.n));
    // a lookup by such a path finds nothing, rather than failing
    const listed = await api(`${base}/locks?path=${encodeURIComponent('../x')}`, { auth: W });
    expect(listed.status).toBe(200);
    expect((await json(listed)).locks).toEqual([]);
  });
});

describe('legacy API v0.5 request shapes', () => {
  it('ignores unknown properties of POST /objects (its oid and size are required by the v0.5 docs, as before)', async () => {
    const c = content();
    const r = await api(`${base}/objects`, { auth: W, body: { oid: c.oid, size: c.size, ref: {}, future: null } });
    expect(r.status).toBe(202);
    expect((await json(r))._links.upload.href).toBe(`${base}/content/${c.oid}`);
  });
});

describe('batch request caps', () => {
  let capped: TestServer;
  let url: string;
  beforeAll(async () => {
    capped = await startTestServer({ LFS_MAX_BATCH_OBJECTS: '3', LFS_MAX_BATCH_BYTES: '2048' });
    await lfsFixture(capped.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
    url = `${capped.url}/acme/site.git/info/lfs`;
  });
  afterAll(() => capped.stop());
  afterEach(() => capped.expectConformant());

  it('serves a batch at the object cap and answers one past it with 413 naming LFS_MAX_BATCH_OBJECTS', async () => {
    expect((await rawBatch({ operation: 'upload', objects: missing.slice(0, 3) }, url)).status).toBe(200);
    const over = await rawBatch({ operation: 'upload', objects: missing.slice(0, 4) }, url);
    expect(over.status).toBe(413);
    expect(over.body.message).toContain('LFS_MAX_BATCH_OBJECTS');
  });

  it('answers a body past LFS_MAX_BATCH_BYTES with 413 naming it, before parsing: invalid JSON that long is 413, not 400', async () => {
    const padded = { operation: 'download', objects: [missing[0]], ref: { name: 'x'.repeat(2100) } };
    const over = await rawBatch(padded, url);
    expect(over.status).toBe(413);
    expect(over.body.message).toContain('LFS_MAX_BATCH_BYTES');
    const notJson = await api(`${url}/objects/batch`, { auth: W, body: `{${'x'.repeat(3000)}` });
    expect(notJson.status).toBe(413);
    expect((await json(notJson)).message).toContain('LFS_MAX_BATCH_BYTES');
    // the same invalid JSON under the cap is a 400: the cap, not the parser, answered above
    const shortNotJson = await api(`${url}/objects/batch`, { auth: W, body: `{${'x'.repeat(100)}` });
    expect(shortNotJson.status).toBe(400);
    await shortNotJson.body?.cancel();
  });

  it('answers 413 from Content-Length alone, without waiting for a body it will never read', async () => {
    const target = new URL(`${url}/objects/batch`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(target, { method: 'POST', headers: { authorization: W, accept: GIT_LFS, 'content-type': GIT_LFS, 'content-length': String(10 * 1024 * 1024) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
        req.destroy();
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.write('{"operation":"download","objects":['); // a sliver of the 10 MiB announced
    });
    expect(status).toBe(413);
  });

  it('keeps the defaults far above what git-lfs sends: 100 objects, as git-lfs batches them, pass on the default server', async () => {
    expect(s.services.config.lfs.maxBatchObjects).toBeGreaterThanOrEqual(1000);
    const hundred = missingObjects(100).map((o) => ({ ...o, authenticated: false }));
    const body = { operation: 'upload', objects: hundred, transfers: ['basic', 'lfs-standalone-file', 'ssh'], ref: { name: 'refs/heads/main' }, hash_algo: 'sha256' };
    expect(JSON.stringify(body).length * 10).toBeLessThan(s.services.config.lfs.maxBatchBytes);
    const r = await rawBatch(body);
    expect(r.status).toBe(200);
    expect(r.body.objects).toHaveLength(100);
  });
});
