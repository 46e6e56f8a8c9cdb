/**
 * A takedown (`pactum repo delete-object`) holds until an administrator lifts it
 * (`pactum repo restore-object`), whatever a writer sends: batch and legacy uploads, a direct PUT,
 * an upload href handed out before the takedown, tus. Both commands are audited. An upload href
 * is spent once its object is committed: a replayed PUT is refused before its body is read.
 * In the pair topology consecutive requests reach both instances; the CLI is another process.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PAIR_SECRETS, startTestServer, topology, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { json } from '../helpers/http.js';
import { pactum } from '../helpers/cli.js';
import { backendEnv } from '../helpers/backends.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const W = basic('wally', 'wally-password-1');
const content = (n: number) => {
  const bytes = randomBytes(n);
  return { bytes, oid: createHash('sha256').update(bytes).digest('hex'), size: n };
};
type Content = ReturnType<typeof content>;
interface Action { href: string; header: Record<string, string> }

let s: TestServer;
let base: string;
let cli: Record<string, string>;

beforeAll(async () => {
  s = await startTestServer();
  await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  await lfsFixture(s.services.db, { org: 'acme', repo: 'mirror', username: 'mira', password: 'mira-password-1', access: 'write' });
  await s.services.db('repo_grants').insert({ repo_id: (await s.services.db('repos').where({ name: 'mirror' }).first()).id, user_id: (await s.services.db('users').where({ username: 'wally' }).first()).id, access: 'write' });
  base = `${s.url}/acme/site.git/info/lfs`;
  cli = { DATA_DIR: s.dataDir, ...(await backendEnv(s.dataDir)), ...(topology === 'pair' ? PAIR_SECRETS : {}) };
});
afterAll(() => s?.stop());
afterEach(() => s.expectConformant());

function api(url: string, init: { auth?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { accept: GIT_LFS, ...(init.auth ? { authorization: init.auth } : {}), ...init.headers };
  if (init.body !== undefined) headers['content-type'] = GIT_LFS;
  return fetch(url, { method: init.body === undefined ? 'GET' : 'POST', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
}

async function batch(operation: 'upload' | 'download', c: { oid: string; size: number }, transfers = ['basic'], url = base) {
  const res = await api(`${url}/objects/batch`, { auth: W, body: { operation, transfers, objects: [{ oid: c.oid, size: c.size }] } });
  expect(res.status).toBe(200);
  return (await json(res)).objects[0] as { actions?: Record<string, Action>; error?: { code: number; message: string } };
}

const put = (a: Action, bytes: Buffer) => fetch(a.href, { method: 'PUT', headers: a.header, body: new Uint8Array(bytes) });

async function store(c: Content, url = base) {
  const { actions } = await batch('upload', c, ['basic'], url);
  expect((await put(actions!.upload!, c.bytes)).status).toBe(200);
  return actions!;
}

/** Sends the headers of a PUT with Content-Length but never its body: the answer can only come from a server that does not read it. */
function putWithoutBody(a: Action, length: number): Promise<{ status: number; text: string }> {
  const u = new URL(a.href);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', agent: false, headers: { ...a.header, 'content-length': String(length) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, text });
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

const takeDown = (c: { oid: string }, reason: string, repo = 'acme/site') => pactum(['repo', 'delete-object', repo, c.oid, '--reason', reason], cli);
const restore = (c: { oid: string }, reason: string, repo = 'acme/site') => pactum(['repo', 'restore-object', repo, c.oid, '--reason', reason], cli);
const row = async (c: { oid: string }, repo = 'site') => s.services.db('lfs_objects').where({ oid: c.oid, repo_id: (await s.services.db('repos').where({ name: repo }).first()).id }).first();

describe('a takedown holds until an administrator lifts it', () => {
  it('refuses every way of uploading the object again (410, nothing stored), and is audited', { timeout: 180_000 }, async () => {
    const c = content(4000);
    // Actions handed out before the takedown: a tus upload, and the basic upload that stored it.
    const tusEarly = (await batch('upload', c, ['tus'])).actions!.upload!;
    const before = await store(c);
    const del = await takeDown(c, 'takedown request #7');
    expect(del.code, del.stderr).toBe(0);
    expect(await s.services.objects.store.stat(c.oid)).toBeNull();

    const again = await batch('upload', c);
    expect(again.error).toMatchObject({ code: 410, message: expect.stringMatching(/takedown request #7.*until an administrator lifts the takedown/) });
    expect(again.actions).toBeUndefined();
    const legacy = await api(`${base}/objects`, { auth: W, body: { oid: c.oid, size: c.size } });
    expect(legacy.status).toBe(410);
    expect((await json(legacy)).message).toMatch(/takedown request #7/);
    // The PUT an earlier batch handed out, a direct PUT with Basic credentials, the verify: refused before the body.
    for (const a of [before.upload!, { href: `${base}/content/${c.oid}`, header: { authorization: W } }]) {
      const replay = await put(a, c.bytes);
      expect(replay.status).toBe(410);
      expect((await json(replay)).message).toMatch(/takedown request #7/);
      expect(await putWithoutBody(a, c.size)).toMatchObject({ status: 410 });
    }
    expect((await api(before.verify!.href, { headers: before.verify!.header, body: { oid: c.oid, size: c.size } })).status).toBe(410);
    const tus = { ...tusEarly.header, 'tus-resumable': '1.0.0' };
    expect((await fetch(tusEarly.href, { method: 'HEAD', headers: tus })).status).toBe(410);
    const patch = await fetch(tusEarly.href, { method: 'PATCH', headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: new Uint8Array(c.bytes) });
    expect(patch.status).toBe(410);
    await patch.body?.cancel();

    expect(await s.services.objects.store.stat(c.oid)).toBeNull();
    expect(await row(c)).toMatchObject({ deleted_reason: 'takedown request #7', deleted_at: expect.any(String) });
    expect((await batch('download', c)).error).toMatchObject({ code: 410 });
    const audited = await s.services.db('audit_log').where({ tool: 'pactum repo delete-object' });
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ subject: expect.stringMatching(/^cli/), outcome: 'ok', org_id: (await s.services.db('orgs').where({ slug: 'acme' }).first()).id });
    expect(JSON.parse(audited[0].arguments)).toEqual({ repo: 'acme/site', oid: c.oid, reason: 'takedown request #7' });
  });

  it('lifting it (`pactum repo restore-object`, audited) lets a writer upload the object again', { timeout: 180_000 }, async () => {
    const c = content(3000);
    await store(c);
    expect((await takeDown(c, 'mistaken identity')).code).toBe(0);
    const lifted = await restore(c, 'counter-notice accepted');
    expect(lifted).toMatchObject({ code: 0, stdout: expect.stringMatching(/lifted the takedown.*may upload it again/) });
    expect(await row(c)).toBeUndefined();
    expect((await batch('download', c)).error).toMatchObject({ code: 404 });
    await store(c);
    const dl = (await batch('download', c)).actions!.download!;
    expect(Buffer.from(await (await fetch(dl.href, { headers: dl.header })).arrayBuffer()).equals(c.bytes)).toBe(true);
    const audited = await s.services.db('audit_log').where({ tool: 'pactum repo restore-object' });
    expect(audited.map((r: { arguments: string }) => JSON.parse(r.arguments))).toContainEqual({ repo: 'acme/site', oid: c.oid, reason: 'counter-notice accepted' });
    // Nothing to lift: exit 2 with the reason.
    expect(await restore(c, 'again')).toMatchObject({ code: 2, stderr: expect.stringMatching(/no deleted object/) });
  });

  it('lifting it serves the object again at once when another repository kept its content', { timeout: 180_000 }, async () => {
    const c = content(2000);
    await store(c);
    await store(c, `${s.url}/acme/mirror.git/info/lfs`);
    expect((await takeDown(c, 'review')).code).toBe(0);
    expect(await s.services.objects.store.stat(c.oid)).toBe(c.size); // the mirror still has it
    expect((await batch('download', c)).error).toMatchObject({ code: 410 });
    expect(await restore(c, 'reviewed: fine')).toMatchObject({ code: 0, stdout: expect.stringMatching(/served again/) });
    expect((await batch('download', c)).actions?.download).toBeDefined();
  });

  it('an upload whose object is taken down while its body streams keeps nothing and is refused', async () => {
    const c = content(64 * 1024);
    const { actions } = await batch('upload', c);
    const u = new URL(actions!.upload!.href);
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', agent: false, headers: { ...actions!.upload!.header, 'content-length': String(c.size) } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.write(c.bytes.subarray(0, 1000), () => {
        // Meanwhile another writer's upload of the same content was committed and taken down.
        void (async () => {
          await s.services.db('lfs_objects').insert({ repo_id: (await s.services.db('repos').where({ name: 'site' }).first()).id, oid: c.oid, size: c.size, created_at: new Date().toISOString(), deleted_at: new Date().toISOString(), deleted_reason: 'taken down mid-upload' });
          req.end(c.bytes.subarray(1000));
        })();
      });
    });
    const { status, text } = await answer;
    expect(status).toBe(410);
    expect(text).toMatch(/taken down mid-upload/);
    expect(await s.services.objects.store.stat(c.oid)).toBeNull();
    expect(await row(c)).toMatchObject({ deleted_reason: 'taken down mid-upload' });
  });

  it('`pactum repo restore-object --help` shows its usage, and it needs a reason', { timeout: 60_000 }, async () => {
    const help = await pactum(['repo', '--help'], cli);
    expect(help.stdout).toMatch(/pactum repo restore-object <org>\/<repo> <oid> --reason TEXT/);
    expect(await pactum(['repo', 'restore-object', 'acme/site', 'a'.repeat(64)], cli)).toMatchObject({ code: 2, stderr: expect.stringMatching(/usage: pactum repo restore-object/) });
  });
});

describe('an upload href is spent once its object is committed', () => {
  it('a replayed PUT is refused with 409 before its body is read; the object stays as it was', async () => {
    const c = content(5000);
    const actions = await store(c);
    expect(await putWithoutBody(actions.upload!, c.size)).toMatchObject({ status: 409, text: expect.stringMatching(/stored already.*nothing was read/) });
    const replay = await put(actions.upload!, c.bytes);
    expect(replay.status).toBe(409);
    await replay.body?.cancel();
    // Verify still confirms the upload (git-lfs calls it after the PUT), and the batch asks for nothing.
    expect((await api(actions.verify!.href, { headers: actions.verify!.header, body: { oid: c.oid, size: c.size } })).status).toBe(200);
    expect(await batch('upload', c)).toEqual({ oid: c.oid, size: c.size });
  });

  it('a tus upload of a committed object reports its full offset and stores nothing more', async () => {
    const c = content(6000);
    const { actions } = await batch('upload', c, ['tus']);
    const tus = { ...actions!.upload!.header, 'tus-resumable': '1.0.0' };
    const patch = () => fetch(actions!.upload!.href, { method: 'PATCH', headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: new Uint8Array(c.bytes) });
    expect((await patch()).status).toBe(204);
    const replay = await patch();
    expect(replay.status).toBe(409);
    await replay.body?.cancel();
    const head = await fetch(actions!.upload!.href, { method: 'HEAD', headers: tus });
    expect(head.headers.get('upload-offset')).toBe(String(c.size));
  });
});
