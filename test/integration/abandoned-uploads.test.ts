/**
 * What vanished clients and killed servers leave behind goes away, and nothing live
 * goes with it. `pactum serve` runs as its own process on a DATA_DIR the test controls, with
 * short settings so the periodic sweep acts within seconds:
 *
 * - a tus upload nobody appends to expires after TUS_PARTIAL_TTL_SECONDS (PATCH says when, in
 *   Upload-Expires), HEAD then answers offset 0 and the upload starts over to a correct object;
 *   an upload a slow request is appending to for longer than the TTL is kept (its lease);
 * - a basic PUT cut by SIGKILL leaves a temporary file that the restarted server removes, while a
 *   slow but live PUT on it is left alone; the same object then uploads in full.
 *
 * On S3 (PACTUM_TEST_BACKEND=postgres-s3) the same requests run; the files on disk are not looked
 * at (multipart uploads are swept by age: test/unit/store/s3.test.ts).
 */
import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bigObject, downloadDigest, type Action, type BigObject } from '../helpers/transfers.js';
import { freePort, installEnv, newDataDir, poolPerProcess, prepareInstall, removeDir, spawnServer, storeOnDisk, type ChildServer } from '../reliability/support.js';

const MiB = 1 << 20;
const GIT_LFS = 'application/vnd.git-lfs+json';
const PASSWORD = 'sweeper-password-123';
const AUTH = `Basic ${Buffer.from(`sweeper:${PASSWORD}`).toString('base64')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The restarted server takes the killed one's port: connections are renewed with each process. */
const connections = poolPerProcess();
const fetch = connections.fetch;
const freshConnections = connections.renew;

async function uploadAction(base: string, o: BigObject, transfer: 'basic' | 'tus'): Promise<Action> {
  const res = await fetch(`${base}/acme/site.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { authorization: AUTH, accept: GIT_LFS, 'content-type': GIT_LFS },
    body: JSON.stringify({ operation: 'upload', transfers: [transfer], objects: [{ oid: o.oid, size: o.size }] }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { transfer: string; objects: { actions: { upload: Action } }[] };
  expect(body.transfer).toBe(transfer);
  return body.objects[0]!.actions.upload;
}

async function downloadAction(base: string, o: BigObject): Promise<Action | undefined> {
  const res = await fetch(`${base}/acme/site.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { authorization: AUTH, accept: GIT_LFS, 'content-type': GIT_LFS },
    body: JSON.stringify({ operation: 'download', objects: [{ oid: o.oid, size: o.size }] }),
  });
  return ((await res.json()) as { objects: { actions?: { download: Action } }[] }).objects[0]!.actions?.download;
}

const bytesOf = (o: BigObject) => Buffer.concat([...o.chunks()]);
const tusHeaders = (a: Action, offset: number) => ({ ...a.header, 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' });

async function tusOffset(a: Action): Promise<number> {
  const res = await fetch(a.href, { method: 'HEAD', headers: { ...a.header, 'tus-resumable': '1.0.0' } });
  expect(res.status).toBe(200);
  return Number(res.headers.get('upload-offset'));
}

/** Sends `body` in `piece`-byte writes `pauseMs` apart: a slow but live client. */
function slowRequest(a: Action, method: string, headers: Record<string, string>, body: Buffer, piece: number, pauseMs: number) {
  const u = new URL(a.href);
  return new Promise<number>((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method, agent: false, headers: { ...headers, 'content-length': String(body.length) } });
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    void (async () => {
      for (let at = 0; at < body.length; at += piece) {
        req.write(body.subarray(at, at + piece));
        await sleep(pauseMs);
      }
      req.end();
    })();
  });
}

/** Polls `check` until it holds (the sweep runs every second); fails after `tries` rounds. */
async function eventually(check: () => Promise<boolean> | boolean, what: string, tries = 60) {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await sleep(500);
  }
  throw new Error(`never happened: ${what}`);
}

/**
 * Waits until a just-started server answers a batch request. Its first one loads the object
 * handlers (through tsx here); on a loaded machine that took longer than this file's short
 * HTTP_IDLE_TIMEOUT_MS, which rightly closed the silent connection, and the test's own first
 * request failed for it.
 */
async function warmedUp(base: string) {
  const probe = async () => {
    try {
      return (await downloadAction(base, bigObject(1))) === undefined;
    } catch {
      return false;
    }
  };
  await eventually(probe, 'the server answers a batch request');
}

const filesIn = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

async function expectStored(base: string, o: BigObject) {
  const dl = await downloadAction(base, o);
  expect(dl, 'a download action').toBeDefined();
  const got = await downloadDigest(dl!);
  expect(got.status).toBe(200);
  expect(got.sha256).toBe(o.oid);
}

describe('abandoned uploads', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let port: number;
  let server: ChildServer | null = null;

  beforeAll(async () => {
    dataDir = newDataDir('abandoned');
    env = await installEnv(dataDir, {
      TUS_PARTIAL_TTL_SECONDS: '2',
      STORAGE_SWEEP_INTERVAL_SECONDS: '1',
      LFS_UPLOAD_LEASE_SECONDS: '2',
      // Temporary files untouched for 2 × max(idle, 2 × window) = 4 s count as dead. The idle
      // timeout is not shorter: a test process starved of CPU by the other test files for ~1 s
      // then had its full-speed uploads cut as idle (EPIPE), which says nothing about the sweep.
      HTTP_IDLE_TIMEOUT_MS: '2000',
      HTTP_BODY_RATE_WINDOW_MS: '1000',
      HTTP_MIN_BODY_RATE: '64',
    });
    await prepareInstall(env, { org: 'acme', repo: 'site', users: [{ username: 'sweeper', password: PASSWORD, access: 'write' }] });
    port = await freePort();
    server = await spawnServer({ dataDir, port, env });
    freshConnections();
    await warmedUp(server.url);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    removeDir(dataDir);
  });

  it('a tus upload nobody appends to expires (Upload-Expires says when) and starts over; one a slow request holds is kept', { timeout: 120_000 }, async () => {
    const base = server!.url;
    const idle = bigObject(3 * MiB);
    const idleUp = await uploadAction(base, idle, 'tus');
    const first = await fetch(idleUp.href, { method: 'PATCH', headers: tusHeaders(idleUp, 0), body: bytesOf(idle).subarray(0, MiB) });
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe(String(MiB));
    const expires = Date.parse(first.headers.get('upload-expires') ?? '');
    expect(Number.isNaN(expires), 'Upload-Expires is an HTTP date').toBe(false);
    // Two seconds after the append, at a one-second resolution.
    expect(Math.abs(expires - (Date.parse(first.headers.get('date')!) + 2000))).toBeLessThanOrEqual(1000);

    // A request appending slowly for about 5 s (longer than the TTL) to another upload.
    const busy = bigObject(MiB);
    const busyUp = await uploadAction(base, busy, 'tus');
    const slow = slowRequest(busyUp, 'PATCH', tusHeaders(busyUp, 0), bytesOf(busy), 64 * 1024, 300);

    await eventually(async () => (await tusOffset(idleUp)) === 0, 'the idle upload expired');
    expect(await slow, 'the slowly appended upload completes').toBe(204);
    await expectStored(base, busy);

    // The expired one starts over from 0 and verifies.
    const again = await fetch(idleUp.href, { method: 'PATCH', headers: tusHeaders(idleUp, 0), body: bytesOf(idle) });
    expect(again.status).toBe(204);
    expect(again.headers.get('upload-expires'), 'a complete upload does not expire').toBeNull();
    await expectStored(base, idle);
    if (storeOnDisk) expect(filesIn(join(dataDir, 'lfs', 'partials'))).toEqual([]);
  });

  it('a basic PUT cut by SIGKILL leaves a temporary file the restarted server removes, sparing a live slow PUT', { timeout: 120_000 }, async () => {
    const killed = bigObject(24 * MiB);
    const up = await uploadAction(server!.url, killed, 'basic');
    const u = new URL(up.href);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', agent: false, headers: { ...up.header, 'content-type': 'application/octet-stream', 'content-length': String(killed.size) } });
    req.on('error', () => {});
    let sent = 0;
    for (const c of killed.chunks()) {
      if (sent >= 8 * MiB) break;
      req.write(c);
      sent += c.length;
    }
    const tmp = join(dataDir, 'lfs', 'tmp');
    if (storeOnDisk) await eventually(() => filesIn(tmp).length === 1, 'the upload has its temporary file');
    else await sleep(500);
    await server!.kill('SIGKILL');
    req.destroy();
    if (storeOnDisk) {
      // Left behind by the killed process; aged so that the restarted server may take it as dead.
      expect(filesIn(tmp)).toHaveLength(1);
      const old = new Date(Date.now() - 30_000);
      utimesSync(join(tmp, filesIn(tmp)[0]!), old, old);
    }

    server = await spawnServer({ dataDir, port, env });
    freshConnections();
    const base = server.url;
    await warmedUp(base);
    // A live upload that writes a piece every 300 ms for ~10 s: several sweeps, and longer than a
    // temporary file may stay untouched, so only its being touched can spare it.
    const live = bigObject(2 * MiB);
    const liveUp = await uploadAction(base, live, 'basic');
    const livePut = slowRequest(liveUp, 'PUT', { ...liveUp.header, 'content-type': 'application/octet-stream' }, bytesOf(live), 64 * 1024, 300);
    if (storeOnDisk) await eventually(() => filesIn(tmp).length === 1, 'only the live upload has a temporary file');
    expect(await livePut, 'the slow live PUT succeeds').toBe(200);
    await expectStored(base, live);

    // The killed object uploads in full; nothing temporary is left.
    const again = await uploadAction(base, killed, 'basic');
    const put = await fetch(again.href, { method: 'PUT', headers: { ...again.header, 'content-type': 'application/octet-stream' }, body: bytesOf(killed) });
    expect(put.status).toBe(200);
    await expectStored(base, killed);
    if (storeOnDisk) expect(filesIn(tmp)).toEqual([]);
    expect(server.trouble.errors).toEqual([]);
  });
});
