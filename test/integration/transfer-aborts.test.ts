/**
 * Clients that go away mid-transfer: downloads dropped mid-body (full and ranged, basic
 * and legacy links), uploads cut mid-body (basic PUT and tus PATCH), and a client that stops
 * reading. After each, the server still serves, nothing half-written is visible, no file handle
 * is left open, and the next transfer of the same object is intact. Runs on both backends (files
 * here; S3 when the suite runs again with PACTUM_TEST_BACKEND=postgres-s3). The worker runs with
 * --unhandled-rejections=strict (vitest.config.ts), so a rejection nothing handles fails the file.
 *
 * Last, `pactum serve` as its own process (the production entry, with its fault handlers): a
 * throttled reader dropped mid-body five times, then the process is alive and serves the object.
 */
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { backendMode } from '../helpers/backends.js';
import {
  bigObject, cutUpload, downloadDigest, droppedDownload, rangeDigest, stalledDownload, streamRequest, type Action, type BigObject,
} from '../helpers/transfers.js';
import { installEnv, newDataDir, poolPerProcess, prepareInstall, removeDir, spawnServer, type ChildServer } from '../reliability/support.js';

const MiB = 1 << 20;
const GIT_LFS = 'application/vnd.git-lfs+json';
const PASSWORD = 'wally-aborts-password-1';
const AUTH = `Basic ${Buffer.from(`wally:${PASSWORD}`).toString('base64')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function lfs(base: () => string) {
  const root = () => `${base()}/acme/site.git/info/lfs`;
  return {
    root,
    async batch(operation: 'upload' | 'download', o: { oid: string; size: number }, transfers?: string[]) {
      const res = await fetch(`${root()}/objects/batch`, {
        method: 'POST',
        headers: { authorization: AUTH, accept: GIT_LFS, 'content-type': GIT_LFS },
        body: JSON.stringify({ operation, objects: [{ oid: o.oid, size: o.size }], ...(transfers ? { transfers } : {}) }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { transfer?: string; objects: { actions?: Record<string, Action>; error?: { code: number } }[] };
    },
    async healthy() {
      const res = await fetch(`${base()}/healthz`);
      await res.body?.cancel();
      return res.status;
    },
    /** Uploads through a basic PUT of the batch action and verifies it. */
    async store(o: BigObject) {
      const { upload, verify } = (await this.batch('upload', o, ['basic'])).objects[0]!.actions!;
      const put = await streamRequest(upload!, 'PUT', { 'content-type': 'application/octet-stream' }, o.chunks(), o.size);
      expect(put.status, put.text).toBe(200);
      const v = await fetch(verify!.href, { method: 'POST', headers: { ...verify!.header, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ oid: o.oid, size: o.size }) });
      expect(v.status).toBe(200);
    },
    async downloadAction(o: BigObject): Promise<Action> {
      const dl = (await this.batch('download', o)).objects[0]!.actions?.download;
      expect(dl, 'a download action').toBeDefined();
      return dl!;
    },
    async expectMissing(o: BigObject) {
      const b = await this.batch('download', o);
      expect(b.objects[0]!.error?.code).toBe(404);
    },
    async expectIntact(o: BigObject) {
      const got = await downloadDigest(await this.downloadAction(o));
      expect(got.status).toBe(200);
      expect(got.bytes).toBe(o.size);
      expect(got.sha256).toBe(o.oid);
    },
  };
}

/** Descriptors of this process that point into `dir` (the fs store's files): an aborted transfer must leave none. */
function openFilesUnder(dir: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir)) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/** Polls `probe` until it returns `want` (or gives up after a few seconds) and returns the last value. */
async function settle<T>(probe: () => T | Promise<T>, want: T): Promise<T> {
  let last = await probe();
  for (let i = 0; i < 100 && last !== want; i++) {
    await sleep(50);
    last = await probe();
  }
  return last;
}

describe('transfers a client abandons (in process)', () => {
  let s: TestServer;
  const client = lfs(() => s.url);
  const big = bigObject(48 * MiB);
  const storeDir = () => join(s.dataDir, 'lfs');

  beforeAll(async () => {
    s = await startTestServer();
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
    await client.store(big);
  });
  afterAll(() => s?.stop());

  it('survives five full downloads dropped mid-body, then serves the object intact', async () => {
    const dl = await client.downloadAction(big);
    for (let i = 0; i < 5; i++) {
      const r = await droppedDownload(dl, { stopAfter: 4 * MiB + i * 777_777 });
      expect(r.status).toBe(200);
      expect(r.received).toBeGreaterThanOrEqual(4 * MiB);
      expect(r.received).toBeLessThan(big.size);
      expect(await client.healthy()).toBe(200);
    }
    await client.expectIntact(big);
    if (backendMode !== 'postgres-s3') expect(await settle(() => openFilesUnder(storeDir()), 0), 'open files of the store').toBe(0);
    s.expectConformant();
  });

  it('survives five ranged downloads dropped mid-body, then serves the range intact', async () => {
    const dl = await client.downloadAction(big);
    const start = 5 * MiB + 123;
    const end = 40 * MiB - 7;
    for (let i = 0; i < 5; i++) {
      const r = await droppedDownload(dl, { range: `bytes=${start}-${end}`, stopAfter: 2 * MiB + i * 333_333 });
      expect(r.status).toBe(206);
      expect(r.received).toBeLessThan(end - start + 1);
      expect(await client.healthy()).toBe(200);
    }
    const got = await downloadDigest(dl, `bytes=${start}-${end}`);
    expect(got.status).toBe(206);
    expect(got.bytes).toBe(end - start + 1);
    expect(got.sha256).toBe(rangeDigest(big, start, end));
    // A suffix range, dropped too.
    const tail = await droppedDownload(dl, { range: 'bytes=-20000000', stopAfter: MiB });
    expect(tail.status).toBe(206);
    expect(await client.healthy()).toBe(200);
    await client.expectIntact(big);
    if (backendMode !== 'postgres-s3') expect(await settle(() => openFilesUnder(storeDir()), 0), 'open files of the store').toBe(0);
  });

  it('survives downloads through the legacy API\'s link dropped mid-body', async () => {
    const meta = await fetch(`${client.root()}/objects/${big.oid}`, { headers: { authorization: AUTH, accept: GIT_LFS } });
    expect(meta.status).toBe(200);
    const link = ((await meta.json()) as { _links: { download: Action } })._links.download;
    for (let i = 0; i < 3; i++) {
      const r = await droppedDownload(link, { stopAfter: 3 * MiB });
      expect(r.status).toBe(200);
      expect(await client.healthy()).toBe(200);
    }
    const got = await downloadDigest(link);
    expect(got.sha256).toBe(big.oid);
  });

  it('keeps nothing of a basic PUT cut mid-body, and takes the next full upload', async () => {
    const o = bigObject(24 * MiB);
    const { upload } = (await client.batch('upload', o, ['basic'])).objects[0]!.actions!;
    for (const fraction of [0.1, 0.5, 0.9]) {
      await cutUpload(upload!, 'PUT', { 'content-type': 'application/octet-stream' }, o.chunks(), o.size, Math.floor(o.size * fraction));
      expect(await client.healthy()).toBe(200);
      await client.expectMissing(o);
    }
    if (backendMode !== 'postgres-s3') {
      // The temporary file of every cut upload is gone, and no descriptor of it is left open.
      const tmp = join(storeDir(), 'tmp');
      expect(await settle(() => (existsSync(tmp) ? readdirSync(tmp).length : 0), 0), 'temporary files left').toBe(0);
      expect(await settle(() => openFilesUnder(storeDir()), 0), 'open files of the store').toBe(0);
    }
    await client.store(o);
    await client.expectIntact(o);
  });

  it('keeps nothing visible of a tus PATCH cut mid-body, and the upload completes from its offset', async () => {
    const o = bigObject(20 * MiB);
    const b = await client.batch('upload', o, ['tus']);
    expect(b.transfer).toBe('tus');
    const upload = b.objects[0]!.actions!.upload!;
    const tusHeaders = (offset: number) => ({ 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' });
    await cutUpload(upload, 'PATCH', tusHeaders(0), o.chunks(), o.size, 9 * MiB);
    expect(await client.healthy()).toBe(200);
    await client.expectMissing(o);
    // The server notices the cut and records what it made durable; a PATCH meanwhile is told the upload is busy.
    let finished = { status: 0, text: '' };
    for (let attempt = 0; attempt < 40; attempt++) {
      const head = await fetch(upload.href, { method: 'HEAD', headers: { ...upload.header, 'tus-resumable': '1.0.0' } });
      expect(head.status).toBe(200);
      const offset = Number(head.headers.get('upload-offset'));
      expect(offset).toBeLessThanOrEqual(9 * MiB);
      const rest = (function* () {
        let at = 0;
        for (const c of o.chunks()) {
          if (at + c.length > offset) yield c.subarray(Math.max(0, offset - at));
          at += c.length;
        }
      })();
      finished = await streamRequest(upload, 'PATCH', tusHeaders(offset), rest, o.size - offset);
      if (finished.status !== 409) break;
      await sleep(250);
    }
    expect(finished.status, finished.text).toBe(204);
    await client.expectIntact(o);
  });

  // A body small enough to sit whole in the sockets' buffers: the client then counts the request
  // as sent and reuses the connection, which hung for a minute while the server held the unread
  // rest (the SIGKILL test of faults.test.ts met it on a quick machine).
  it('answers a PATCH refused while another request appends 409 at once, and its connection serves the next requests', async () => {
    const o = bigObject(8 * MiB);
    const bytes = Buffer.concat([...o.chunks()]);
    const upload = (await client.batch('upload', o, ['tus'])).objects[0]!.actions!.upload!;
    const tusHeaders = (offset: number) => ({ 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' });
    // The holder: 1 MiB of its 8, then a pause, while another request tries to append.
    const u = new URL(upload.href);
    const holder = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PATCH', agent: false, headers: { ...upload.header, ...tusHeaders(0), 'content-length': String(o.size) } });
    const holderDone = new Promise<number>((resolve, reject) => {
      holder.on('response', (res) => { res.resume(); res.on('end', () => resolve(res.statusCode!)); });
      holder.on('error', reject);
    });
    holder.write(bytes.subarray(0, MiB));
    await sleep(500);
    // A client that keeps its connections (undici's Agent, as git-lfs does); with the unread rest
    // held, the requests below waited for the rate guard to cut the connection (a minute).
    const { fetch, renew } = poolPerProcess();
    const refused = await fetch(upload.href, { method: 'PATCH', headers: { ...upload.header, ...tusHeaders(0) }, body: new Uint8Array(bytes.subarray(0, MiB / 2)) });
    const text = await refused.text();
    expect({ status: refused.status, text }).toMatchObject({ status: 409, text: expect.stringContaining('Another request is appending') });
    // The same client goes on at once: its next requests must not queue behind the refused body.
    for (let i = 0; i < 3; i++) expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    const retry = await fetch(upload.href, { method: 'PATCH', headers: { ...upload.header, ...tusHeaders(0) }, body: new Uint8Array(bytes.subarray(0, MiB / 2)) });
    expect(retry.status).toBe(409);
    await retry.body?.cancel();
    renew();
    holder.end(bytes.subarray(MiB));
    expect(await holderDone).toBe(204);
    await client.expectIntact(o);
  });

  it('keeps its memory flat while a client requests a large object and never reads it', async () => {
    const o = bigObject(256 * MiB);
    await client.store(o);
    const dl = await client.downloadAction(o);
    // Settle the baseline after the upload's garbage.
    await sleep(200);
    const before = process.memoryUsage();
    const { socket, head } = await stalledDownload(dl);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    // Sample while the server meets a socket that takes nothing: it must wait, not buffer the object.
    let peakRss = 0;
    let peakBuffers = 0;
    for (let i = 0; i < 20; i++) {
      await sleep(100);
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss - before.rss);
      peakBuffers = Math.max(peakBuffers, m.arrayBuffers - before.arrayBuffers);
    }
    socket.destroy();
    expect(peakBuffers, `arrayBuffers grew by ${(peakBuffers / MiB).toFixed(1)} MiB`).toBeLessThan(64 * MiB);
    expect(peakRss, `rss grew by ${(peakRss / MiB).toFixed(1)} MiB`).toBeLessThan(64 * MiB);
    expect(await client.healthy()).toBe(200);
    await client.expectIntact(o);
    if (backendMode !== 'postgres-s3') expect(await settle(() => openFilesUnder(storeDir()), 0), 'open files of the store').toBe(0);
  });
});

describe('the suite\'s workers', () => {
  it('run with --unhandled-rejections=strict, so a rejection nothing handles fails the run', () => {
    expect(process.execArgv).toContain('--unhandled-rejections=strict');
    // A throwaway test file, run with the project's own config, that leaves a rejection unhandled.
    mkdirSync(join(process.cwd(), '.tmp'), { recursive: true });
    const dir = mkdtempSync(join(process.cwd(), '.tmp', 'strict-'));
    try {
      writeFileSync(join(dir, 'leak.test.ts'), "import { it } from 'vitest';\nit('leaves a rejection', async () => { Promise.reject(new Error('left-unhandled-on-purpose')); await new Promise((r) => setTimeout(r, 50)); });\n");
      writeFileSync(join(dir, 'vitest.config.ts'), `import base from '../../vitest.config.ts';\nexport default { ...base, test: { ...base.test, include: ['${relative(process.cwd(), dir)}/*.test.ts'], globalSetup: [], projects: undefined, maxWorkers: 1 } };\n`);
      const run = spawnSync(process.execPath, [join('node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', join(dir, 'vitest.config.ts')], { encoding: 'utf8', env: { ...process.env, PACTUM_TEST_BACKEND: '' }, timeout: 60_000 });
      expect(run.status, run.stdout + run.stderr).not.toBe(0);
      expect(run.stdout + run.stderr).toContain('left-unhandled-on-purpose');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('`pactum serve` as its own process', () => {
  let server: ChildServer | null = null;
  let dataDir = '';
  afterAll(async () => {
    await server?.stop();
    if (dataDir) removeDir(dataDir);
  });

  it('stays up through five dropped downloads and serves the object intact', async () => {
    dataDir = newDataDir('aborts');
    const env = await installEnv(dataDir);
    await prepareInstall(env, { org: 'acme', repo: 'site', users: [{ username: 'wally', password: PASSWORD, access: 'write' }] });
    server = await spawnServer({ dataDir, env });
    const child = server;
    const client = lfs(() => child.url);
    const o = bigObject(64 * MiB);
    await client.store(o).catch((err) => {
      throw new Error(`${err.message}\nserver log:\n${child.trouble.errors.join('\n')}`);
    });
    const dl = await client.downloadAction(o);
    const rssBefore = child.rss();
    for (let i = 0; i < 5; i++) {
      const r = await droppedDownload(dl, { stopAfter: 8 * MiB + i * 1_000_003, rate: 20 * MiB });
      expect(r.status).toBe(200);
      expect(r.received).toBeLessThan(o.size);
      expect(() => process.kill(child.pid, 0), 'the server process is alive').not.toThrow();
      expect(await client.healthy()).toBe(200);
    }
    await client.expectIntact(o);
    expect(() => process.kill(child.pid, 0)).not.toThrow();
    expect(child.trouble.errors, 'error-level log lines').toEqual([]);
    expect(child.trouble.serverErrors, '5xx answers').toEqual([]);
    console.log(`[aborts] child rss before ${(rssBefore / MiB).toFixed(1)} MiB, after ${(child.rss() / MiB).toFixed(1)} MiB`);
  });
});
