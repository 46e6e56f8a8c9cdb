/**
 * Unfinished resumable (tus) uploads under a quota: the bytes their transfer tokens declare are
 * capped per repository (LFS_PARTIAL_BYTES_PER_REPO) and per org (LFS_PARTIAL_BYTES_PER_ORG),
 * counted in the database from the PATCH that starts an upload until it is committed, discarded
 * or lapses; past a cap the PATCH is 507 and nothing is stored, and a batch offers basic instead
 * of tus. Many creations at once cannot pass a cap together, also across two instances (pair).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { json } from '../helpers/http.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const W = basic('wally', 'wally-password-1');
const TB = 10 ** 12;
interface Action { href: string; header: Record<string, string> }
const content = (n: number) => {
  const bytes = randomBytes(n);
  return { bytes, oid: createHash('sha256').update(bytes).digest('hex'), size: n };
};
/** An object the client only claims: an oid and a size, no bytes behind them. */
const claimed = (size: number) => ({ oid: randomBytes(32).toString('hex'), size });

async function batchOf(s: TestServer, repo: string, objects: { oid: string; size: number }[], transfers = ['tus', 'basic']) {
  const res = await fetch(`${s.url}/acme/${repo}.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { accept: GIT_LFS, 'content-type': GIT_LFS, authorization: W },
    body: JSON.stringify({ operation: 'upload', transfers, objects }),
  });
  expect(res.status).toBe(200);
  return (await json(res)) as { transfer: string; objects: { oid: string; actions: { upload: Action } }[] };
}

/** The tus href of an upload action (the same token serves /content and /tus). */
const tusOf = (a: Action): Action => ({ href: a.href.replace('/content/', '/tus/'), header: a.header });

/** One PATCH at `offset`: the status and message. */
async function patch(a: Action, bytes: Buffer, offset = 0) {
  const r = await fetch(a.href, { method: 'PATCH', headers: { ...a.header, 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body: new Uint8Array(bytes) });
  const text = await r.text();
  return { status: r.status, message: text ? ((JSON.parse(text) as { message?: string }).message ?? '') : '' };
}

async function fixture(s: TestServer) {
  await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  const org = await s.services.db('orgs').where({ slug: 'acme' }).first();
  const wally = await s.services.db('users').where({ username: 'wally' }).first();
  for (const name of ['docs', 'art']) {
    const id = `repo_${name}${randomBytes(4).toString('hex')}`;
    await s.services.db('repos').insert({ id, org_id: org.id, name, public: false, created_at: new Date().toISOString() });
    await s.services.db('repo_grants').insert({ repo_id: id, user_id: wally.id, access: 'write' });
  }
}

describe('with the default settings', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await fixture(s);
  });
  afterAll(() => s?.stop());
  afterEach(() => s.expectConformant());

  it('refuses 50 resumable uploads that each declare 1 TB (507, nothing stored), and the batch offers basic', async () => {
    const objects = Array.from({ length: 50 }, () => claimed(TB));
    const answer = await batchOf(s, 'site', objects);
    expect(answer.transfer).toBe('basic');
    const statuses = new Map<number, number>();
    for (const o of answer.objects) {
      const r = await patch(tusOf(o.actions.upload), Buffer.from('x'));
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 507) expect(r.message).toMatch(/LFS_PARTIAL_BYTES_PER_REPO/);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 507: 50 });
    expect(Number((await s.services.db('lfs_partial_reservations').count({ n: '*' }).first())!.n)).toBe(0);
    for (const o of objects.slice(0, 3)) expect(await s.services.objects.store.uploadOffset(`${(await s.services.db('repos').where({ name: 'site' }).first()).id}/${o.oid}`)).toBe(0);
  });

  it('still takes an ordinary resumable upload, and counts nothing once it is committed', async () => {
    const c = content(50_000);
    const answer = await batchOf(s, 'site', [c]);
    expect(answer.transfer).toBe('tus');
    const a = answer.objects[0]!.actions.upload;
    expect((await patch(a, c.bytes.subarray(0, 20_000))).status).toBe(204);
    expect(await s.services.db('lfs_partial_reservations').where({ oid: c.oid }).first()).toMatchObject({ size: expect.anything() });
    expect((await patch(a, c.bytes.subarray(20_000), 20_000)).status).toBe(204);
    expect(await s.services.db('lfs_partial_reservations').where({ oid: c.oid }).first()).toBeUndefined();
    expect(await s.services.objects.store.stat(c.oid)).toBe(c.size);
  });
});

describe('with small caps', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ LFS_PARTIAL_BYTES_PER_REPO: '1000', LFS_PARTIAL_BYTES_PER_ORG: '1500' });
    await fixture(s);
  });
  afterAll(() => s?.stop());
  afterEach(() => s.expectConformant());

  const start = async (repo: string, size: number) => patch(tusOf((await batchOf(s, repo, [claimed(size)], ['basic'])).objects[0]!.actions.upload), Buffer.from('x'));

  it('caps each repository and the org, counts a resumed upload once, and frees what is committed, discarded or lapsed', async () => {
    expect((await start('site', 600)).status).toBe(204);
    // The batch no longer offers tus for what would not fit, and does for what would.
    expect((await batchOf(s, 'site', [claimed(401)])).transfer).toBe('basic');
    expect((await batchOf(s, 'site', [claimed(400)])).transfer).toBe('tus');
    const c = content(400);
    const a = (await batchOf(s, 'site', [c])).objects[0]!.actions.upload;
    expect((await patch(a, c.bytes.subarray(0, 100))).status).toBe(204);
    const repoFull = await start('site', 1);
    expect(repoFull).toMatchObject({ status: 507, message: expect.stringMatching(/acme\/site may declare at most 1000 bytes.*LFS_PARTIAL_BYTES_PER_REPO.*1000 are declared/) });
    // Resuming an upload already counted declares nothing new; the batch still offers tus for it.
    expect((await batchOf(s, 'site', [c])).transfer).toBe('tus');
    expect((await patch(a, c.bytes.subarray(100, 200), 100)).status).toBe(204);

    expect((await start('docs', 500)).status).toBe(204);
    expect(await start('art', 1)).toMatchObject({ status: 507, message: expect.stringMatching(/LFS_PARTIAL_BYTES_PER_ORG/) });

    // Committed: no longer counted.
    expect((await patch(a, c.bytes.subarray(200), 200)).status).toBe(204);
    // Discarded (a body past the declared size): no longer counted.
    const d = content(99);
    const da = (await batchOf(s, 'site', [d])).objects[0]!.actions.upload;
    expect((await patch(da, Buffer.concat([d.bytes, Buffer.from('more')]))).status).toBe(413);
    expect(await s.services.db('lfs_partial_reservations').where({ oid: d.oid }).first()).toBeUndefined();
    expect((await start('art', 400)).status).toBe(204);
    // Lapsed (nothing appended for TUS_PARTIAL_TTL_SECONDS): no longer counted.
    expect((await start('docs', 1)).status).toBe(507);
    await s.services.db('lfs_partial_reservations').update({ expires_at: Date.now() - 1 });
    expect((await start('docs', 1000)).status).toBe(204);
  });

  it('lets exactly as many of many simultaneous creations through as the cap holds', async () => {
    await s.services.db('lfs_partial_reservations').delete();
    const { objects } = await batchOf(s, 'site', Array.from({ length: 24 }, () => claimed(100)));
    const results = await Promise.all(objects.map((o) => patch(tusOf(o.actions.upload), Buffer.from('x'))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((x) => x === 204)).toHaveLength(10);
    expect(statuses.filter((x) => x === 507)).toHaveLength(14);
    const sum = await s.services.db('lfs_partial_reservations').sum({ n: 'size' }).first();
    expect(Number(sum!.n)).toBe(1000);
  });
});
