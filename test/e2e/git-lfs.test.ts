/**
 * The real git-lfs client (3.3, Debian's package) against a pactum server started by the test:
 * push, clone, pull and fsck with the bytes compared; basic only; tus (and that tus was chosen);
 * an upload cut off partway by a loopback proxy and resumed to a correct object; a read-only
 * user's refused push; locks through git lfs lock / locks / unlock.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture, lfsWorkspace, removeWorkspaces, sourceRepo } from '../helpers/git-lfs.js';

// Every request goes through this proxy (PUBLIC_URL points at it, so action hrefs do too). It can
// cut off the body of the next PATCH after `cutAfter` bytes, as a failing network would.
let proxy: Server;
let proxyUrl: string;
let target = '';
let cutAfter: number | null = null;
// What happens to the next PUT: something done first (`before`), and/or its answer lost on the way back.
let nextPut: { before?: (path: string) => Promise<void>; loseAnswer?: boolean } | null = null;
const seen: { method: string; path: string; uploadOffset?: string }[] = [];

let s: TestServer;
const PASSWORD = 'writer-password-1';
let lfsUrl: string;

beforeAll(async () => {
  proxy = createServer((req, res) => {
    seen.push({ method: req.method!, path: req.url!, uploadOffset: req.headers['upload-offset'] as string | undefined });
    const forward = (loseAnswer: boolean) => {
      const upstream = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
        // The server answered (and committed), but the client never hears it: its connection drops.
        if (loseAnswer) return void r.resume().on('end', () => res.destroy());
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      const cut = req.method === 'PATCH' && cutAfter !== null ? cutAfter : null;
      if (cut === null) return void req.pipe(upstream);
      cutAfter = null;
      let sent = 0;
      req.on('data', (chunk: Buffer) => {
        if (sent >= cut) return;
        const part = sent + chunk.length > cut ? chunk.subarray(0, cut - sent) : chunk;
        sent += part.length;
        upstream.write(part, () => {
          if (sent >= cut) setTimeout(() => { upstream.destroy(); res.destroy(); }, 100);
        });
      });
    };
    if (req.method !== 'PUT' || !nextPut) return forward(false);
    const { before, loseAnswer } = nextPut;
    nextPut = null;
    void (before?.(req.url!) ?? Promise.resolve()).then(() => forward(Boolean(loseAnswer)));
  }).listen(0, '127.0.0.1');
  await new Promise((r) => proxy.once('listening', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  s = await startTestServer({ PUBLIC_URL: proxyUrl });
  target = s.directUrl;
  await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'writer', password: PASSWORD, access: 'write' });
  await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'reader', password: 'reader-password-1', access: 'read' });
  lfsUrl = `${proxyUrl}/acme/site.git/info/lfs`;
});
afterAll(async () => {
  await s?.stop();
  proxy?.close();
  removeWorkspaces();
});
afterEach(() => s.expectConformant());

/** operationIds the server served since log line `from`. */
const opsSince = (from: number) =>
  s.logLines.slice(from).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request').map((l) => `${l.operationId}:${l.status}`);

function writeObjects(dir: string, sizes: Record<string, number>) {
  const digests: Record<string, string> = {};
  for (const [name, size] of Object.entries(sizes)) {
    const bytes = randomBytes(size);
    writeFileSync(join(dir, name), bytes);
    digests[name] = createHash('sha256').update(bytes).digest('hex');
  }
  return digests;
}

async function cloneAndCheck(ws: Awaited<ReturnType<typeof lfsWorkspace>>, remote: string, src: string, names: string[]) {
  const clone = join(ws.root, `clone-${randomBytes(3).toString('hex')}`);
  await ws.mustGit(['clone', '-q', remote, clone], ws.root);
  await ws.mustGit(['lfs', 'pull'], clone);
  const fsck = await ws.mustGit(['lfs', 'fsck'], clone);
  expect(fsck.stdout).toMatch(/Git LFS fsck OK/);
  for (const n of names) expect(readFileSync(join(clone, n)).equals(readFileSync(join(src, n))), n).toBe(true);
  return clone;
}

describe('git-lfs against pactum', () => {
  it('pushes and clones with basic transfers only', async () => {
    const ws = await lfsWorkspace(proxyUrl, 'writer', PASSWORD);
    const { remote, src } = await sourceRepo(ws, lfsUrl, { 'lfs.basictransfersonly': 'true' });
    writeObjects(src, { 'big.bin': 6 * 1024 * 1024 + 17, 'small.bin': 100, 'empty.bin': 0 });
    await ws.mustGit(['add', '.'], src);
    await ws.mustGit(['commit', '-qm', 'objects'], src);
    const mark = s.logLines.length;
    await ws.mustGit(['push', '-q', 'origin', 'main'], src);
    const ops = opsSince(mark);
    expect(ops).toContain('batch.batch:200');
    expect(ops.filter((o) => o === 'objects.upload:200').length).toBeGreaterThanOrEqual(2);
    expect(ops.some((o) => o.startsWith('tus.'))).toBe(false);
    const mark2 = s.logLines.length;
    await cloneAndCheck(ws, remote, src, ['big.bin', 'small.bin', 'empty.bin']);
    expect(opsSince(mark2).filter((o) => o === 'objects.download:200').length).toBeGreaterThanOrEqual(2);
  });

  it('chooses tus when git-lfs offers it, and the objects arrive whole', async () => {
    const ws = await lfsWorkspace(proxyUrl, 'writer', PASSWORD);
    const { remote, src } = await sourceRepo(ws, lfsUrl, { 'lfs.tustransfers': 'true' });
    writeObjects(src, { 'tus-a.bin': 3 * 1024 * 1024, 'tus-b.bin': 12345 });
    await ws.mustGit(['add', '.'], src);
    await ws.mustGit(['commit', '-qm', 'tus objects'], src);
    const mark = s.logLines.length;
    const push = await ws.mustGit(['push', 'origin', 'main'], src, { GIT_TRACE: '1' });
    expect(push.stderr).toMatch(/starting transfer adapter "tus"/);
    const ops = opsSince(mark);
    expect(ops).toContain('tus.head:200');
    expect(ops.filter((o) => o === 'tus.patch:204')).toHaveLength(2);
    expect(ops.some((o) => o.startsWith('objects.upload'))).toBe(false);
    await cloneAndCheck(ws, remote, src, ['tus-a.bin', 'tus-b.bin']);
  });

  it('resumes a tus upload that was cut off partway, to a correct object', async () => {
    const ws = await lfsWorkspace(proxyUrl, 'writer', PASSWORD);
    const { remote, src } = await sourceRepo(ws, lfsUrl, { 'lfs.tustransfers': 'true' });
    writeObjects(src, { 'resumed.bin': 8 * 1024 * 1024 });
    await ws.mustGit(['add', '.'], src);
    await ws.mustGit(['commit', '-qm', 'resumable'], src);
    seen.length = 0;
    cutAfter = 3 * 1024 * 1024;
    await ws.mustGit(['push', '-q', 'origin', 'main'], src);
    const patches = seen.filter((r) => r.method === 'PATCH');
    expect(patches.length).toBeGreaterThanOrEqual(2);
    expect(patches[0]!.uploadOffset).toBe('0');
    // The retry started where the stored bytes ended: not at 0, and not past the cut.
    const resumedAt = Number(patches[patches.length - 1]!.uploadOffset);
    expect(resumedAt).toBeGreaterThan(0);
    expect(resumedAt).toBeLessThanOrEqual(3 * 1024 * 1024);
    await cloneAndCheck(ws, remote, src, ['resumed.bin']);
  });

  it('pushes when the answer to a committed PUT was lost: git-lfs runs the batch again, which asks for nothing', async () => {
    const ws = await lfsWorkspace(proxyUrl, 'writer', PASSWORD);
    const { remote, src } = await sourceRepo(ws, lfsUrl, { 'lfs.basictransfersonly': 'true' });
    writeObjects(src, { 'lost-answer.bin': 200_000 });
    await ws.mustGit(['add', '.'], src);
    await ws.mustGit(['commit', '-qm', 'lost answer'], src);
    const mark = s.logLines.length;
    nextPut = { loseAnswer: true };
    await ws.mustGit(['push', '-q', 'origin', 'main'], src);
    const ops = opsSince(mark);
    expect(ops.filter((o) => o === 'objects.upload:200')).toHaveLength(1);
    expect(ops.filter((o) => o === 'batch.batch:200').length).toBeGreaterThanOrEqual(2);
    expect(ops.some((o) => o.startsWith('objects.upload:') && o !== 'objects.upload:200')).toBe(false);
    await cloneAndCheck(ws, remote, src, ['lost-answer.bin']);
  });

  it('pushes when another client committed the object between the batch and the PUT (409, then a batch that asks for nothing)', async () => {
    const ws = await lfsWorkspace(proxyUrl, 'writer', PASSWORD);
    const { remote, src } = await sourceRepo(ws, lfsUrl, { 'lfs.basictransfersonly': 'true' });
    writeObjects(src, { 'raced.bin': 150_000 });
    await ws.mustGit(['add', '.'], src);
    await ws.mustGit(['commit', '-qm', 'raced'], src);
    const bytes = readFileSync(join(src, 'raced.bin'));
    const mark = s.logLines.length;
    nextPut = {
      before: async (path) => {
        const auth = `Basic ${Buffer.from(`writer:${PASSWORD}`).toString('base64')}`;
        const other = await fetch(`${target}${path}`, { method: 'PUT', headers: { authorization: auth }, body: new Uint8Array(bytes) });
        expect(other.status).toBe(200);
      },
    };
    await ws.mustGit(['push', '-q', 'origin', 'main'], src);
    const ops = opsSince(mark);
    expect(ops).toContain('objects.upload:409');
    expect(ops.filter((o) => o === 'batch.batch:200').length).toBeGreaterThanOrEqual(2);
    await cloneAndCheck(ws, remote, src, ['raced.bin']);
  });

  it('refuses the push of a read-only user with a clear message', async () => {
    const ws = await lfsWorkspace(proxyUrl, 'reader', 'reader-password-1');
    const { src } = await sourceRepo(ws, lfsUrl);
    writeObjects(src, { 'nope.bin': 2048 });
    await ws.mustGit(['add', '.'], src);
    await ws.mustGit(['commit', '-qm', 'not allowed'], src);
    const push = await ws.git(['push', 'origin', 'main'], src);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toMatch(/reader may read acme\/site but not write to it/);
  });

  it('creates, lists and releases locks through git lfs lock, locks and unlock', async () => {
    const ws = await lfsWorkspace(proxyUrl, 'writer', PASSWORD);
    const { src } = await sourceRepo(ws, lfsUrl);
    writeObjects(src, { 'design.bin': 512 });
    await ws.mustGit(['add', '.'], src);
    await ws.mustGit(['commit', '-qm', 'design'], src);
    await ws.mustGit(['push', '-q', 'origin', 'main'], src);
    const lock = await ws.mustGit(['lfs', 'lock', 'design.bin'], src);
    expect(lock.stdout).toMatch(/Locked design.bin/);
    const again = await ws.git(['lfs', 'lock', 'design.bin'], src);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already locked/);
    const list = await ws.mustGit(['lfs', 'locks'], src);
    expect(list.stdout).toMatch(/design\.bin\s+writer\s+ID:lck_/);
    const unlocked = await ws.mustGit(['lfs', 'unlock', 'design.bin'], src);
    expect(unlocked.stdout).toMatch(/Unlocked design.bin/);
    expect((await ws.mustGit(['lfs', 'locks'], src)).stdout.trim()).toBe('');
  });
});
