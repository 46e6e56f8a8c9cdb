/**
 * The S3 store against a real S3 server: Ceph RGW where Ceph is installed (CI installs it), else
 * s3rver (test/helpers/s3.ts; the output says which). Through the HTTP API, with the bucket
 * looked at directly: what a client that vanishes leaves behind, tus uploads across a restart
 * and their expiry, server-side copies and ranged reads, a gateway that goes away and comes
 * back, and the start-up errors of a bad S3 setting.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, S3Client, type S3Client as Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/log.js';
import { Writable } from 'node:stream';
import { pactum } from '../helpers/cli.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { backendEnv } from '../helpers/backends.js';
import { sdkClient, testS3ForFile, type TestS3Server } from '../helpers/s3.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bigObject, downloadDigest, rangeDigest, streamRequest, type Action, type BigObject } from '../helpers/transfers.js';

const MiB = 1 << 20;
const GIT_LFS = 'application/vnd.git-lfs+json';
const PASSWORD = 'wally-s3-store-password-1';
const AUTH = `Basic ${Buffer.from(`wally:${PASSWORD}`).toString('base64')}`;
const BUCKET = `pactum-store-${randomBytes(4).toString('hex')}`;

let s3: TestS3Server;
let raw: Client;
let n = 0;

beforeAll(async () => {
  s3 = await testS3ForFile();
  console.log(`[s3-store] S3 server: ${s3.label} at ${s3.endpoint}`);
  await s3.createBucket(BUCKET);
  raw = sdkClient(s3);
}, 180_000);
afterAll(async () => {
  raw?.destroy();
  await s3?.close();
}, 60_000);

/** The settings of a server on the test bucket, under a prefix of its own. */
function s3Env(prefix: string, endpoint = s3.endpoint): Record<string, string> {
  return {
    STORAGE: 's3',
    S3_ENDPOINT: endpoint,
    S3_BUCKET: BUCKET,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
    S3_PREFIX: prefix,
    S3_PART_SIZE_MB: '5',
  };
}

const newPrefix = () => `store-${++n}-${randomBytes(3).toString('hex')}/`;
const objectKey = (prefix: string, oid: string) => `${prefix}objects/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`;
const openUploads = async (prefix: string) => (await raw.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: prefix }))).Uploads ?? [];
const keysUnder = async (Prefix: string) => ((await raw.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix }))).Contents ?? []).map((o) => o.Key!);

/** Polls until `probe` returns `want` (or about 15 s passed) and returns the last value. */
async function settle<T>(probe: () => Promise<T>, want: T, tries = 150): Promise<T> {
  let last = await probe();
  for (let i = 0; i < tries && JSON.stringify(last) !== JSON.stringify(want); i++) {
    await sleep(100);
    last = await probe();
  }
  return last;
}

function lfs(base: () => string) {
  const root = () => `${base()}/acme/site.git/info/lfs`;
  return {
    async batch(operation: 'upload' | 'download', o: { oid: string; size: number }, transfers = ['basic']) {
      const res = await fetch(`${root()}/objects/batch`, {
        method: 'POST',
        headers: { authorization: AUTH, accept: GIT_LFS, 'content-type': GIT_LFS },
        body: JSON.stringify({ operation, objects: [{ oid: o.oid, size: o.size }], transfers }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { objects: { actions?: Record<string, Action>; error?: { code: number } }[] };
    },
    async store(o: BigObject) {
      const { upload, verify } = (await this.batch('upload', o)).objects[0]!.actions!;
      const put = await streamRequest(upload!, 'PUT', { 'content-type': 'application/octet-stream' }, o.chunks(), o.size);
      expect(put.status, put.text).toBe(200);
      const v = await fetch(verify!.href, { method: 'POST', headers: { ...verify!.header, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ oid: o.oid, size: o.size }) });
      expect(v.status).toBe(200);
    },
    async download(o: BigObject) {
      const dl = (await this.batch('download', o)).objects[0]!.actions?.download;
      expect(dl, 'a download action').toBeDefined();
      return dl!;
    },
  };
}

async function status(url: string) {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json().catch(() => null)) as { checks?: { storage?: string } } | null };
}

/** Sends `sendBytes` of a PUT announcing `o.size`, calls `meanwhile`, then destroys the socket. */
function vanishingUpload(action: Action, o: BigObject, sendBytes: number, meanwhile: () => Promise<void>) {
  const u = new URL(action.href);
  return new Promise<void>((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'PUT', agent: false, headers: { ...action.header, 'content-type': 'application/octet-stream', 'content-length': String(o.size) } });
    req.on('error', () => {}); // we cut it
    req.on('close', () => resolve());
    (async () => {
      let sent = 0;
      for (const c of o.chunks()) {
        if (sent >= sendBytes) break;
        sent += c.length;
        if (!req.write(c)) await new Promise((r) => req.once('drain', r));
      }
      await meanwhile();
      req.destroy();
    })().catch(reject);
  });
}

describe('a client that vanishes mid-upload', () => {
  let s: TestServer;
  const prefix = newPrefix();
  const client = lfs(() => s.url);
  beforeAll(async () => {
    s = await startTestServer(s3Env(prefix));
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
  }, 120_000);
  afterAll(() => s?.stop());

  it('leaves no open multipart upload and nothing visible; the next upload of the object works', async () => {
    const o = bigObject(24 * MiB);
    const { upload } = (await client.batch('upload', o)).objects[0]!.actions!;
    await vanishingUpload(upload!, o, 14 * MiB, async () => {
      // The upload is under way on the S3 side: parts of 5 MiB went out as a multipart upload.
      expect((await settle(async () => (await openUploads(prefix)).length, 1)), 'multipart uploads open while the body streams').toBe(1);
    });
    expect(await settle(async () => (await openUploads(prefix)).length, 0), 'multipart uploads left after the client vanished').toBe(0);
    expect(await keysUnder(`${prefix}objects/`)).toEqual([]);
    expect((await client.batch('download', o)).objects[0]!.error?.code).toBe(404);
    await client.store(o);
    const got = await downloadDigest(await client.download(o));
    expect([got.status, got.bytes, got.sha256]).toEqual([200, o.size, o.oid]);
    expect(await openUploads(prefix)).toEqual([]);
    s.expectConformant();
  }, 120_000);
});

describe('downloads served by the bucket itself (S3_SERVE_DIRECT=true)', () => {
  let s: TestServer;
  const prefix = newPrefix();
  const client = lfs(() => s.url);
  beforeAll(async () => {
    s = await startTestServer({ ...s3Env(prefix), S3_SERVE_DIRECT: 'true', LFS_ACTION_TTL_SECONDS: '60', LFS_BANDWIDTH_QUOTA_BYTES_PER_DAY: String(40 * MiB) });
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
  }, 120_000);
  afterAll(() => s?.stop());

  it('a download action is a presigned URL on the S3 endpoint with no header; the bytes and a range come from the bucket', async () => {
    const o = bigObject(12 * MiB);
    await client.store(o);
    const dl = await client.download(o);
    expect(new URL(dl.href).origin).toBe(new URL(s3.endpoint).origin);
    expect(dl.href).toContain('X-Amz-Signature=');
    expect(dl.header).toEqual({});
    expect((dl as Action & { expires_in?: number }).expires_in).toBe(60);
    const got = await downloadDigest(dl);
    expect([got.status, got.bytes, got.sha256]).toEqual([200, o.size, o.oid]);
    const range = await fetch(dl.href, { headers: { range: `bytes=${5 * MiB}-${5 * MiB + 9}` } });
    expect(range.status).toBe(206);
    expect(Buffer.from(await range.arrayBuffer()).length).toBe(10);
    // The legacy API's download link is the same kind of URL.
    const legacy = await fetch(`${s.url}/acme/site.git/info/lfs/objects/${o.oid}`, { headers: { authorization: AUTH, accept: GIT_LFS } });
    const link = ((await legacy.json()) as { _links: { download: Action } })._links.download;
    expect(link.href).toContain('X-Amz-Signature=');
    s.expectConformant();
  }, 120_000);

  it('a tampered presigned URL is refused by the bucket, and the bandwidth is counted when actions are given', async () => {
    const o = bigObject(6 * MiB);
    await client.store(o);
    const dl = await client.download(o);
    const tampered = new URL(dl.href);
    tampered.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    const refused = await fetch(tampered);
    expect(refused.status).toBe(403);
    await refused.body?.cancel();
    // 12 + 6 + 6 + 6 MiB handed out (the first test's object counted twice: batch and legacy link):
    // the next batch would pass the 40 MiB quota without any byte going through pactum.
    await client.download(o);
    const res = await fetch(`${s.url}/acme/site.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { authorization: AUTH, accept: GIT_LFS, 'content-type': GIT_LFS },
      body: JSON.stringify({ operation: 'download', objects: [{ oid: o.oid, size: o.size }] }),
    });
    expect(res.status).toBe(509);
    await res.body?.cancel();
    s.expectConformant();
  }, 120_000);

  it('is a bad setting without S3 storage', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pactum-direct-'));
    try {
      const r = await pactum(['serve'], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, S3_SERVE_DIRECT: 'true' });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('S3_SERVE_DIRECT: only with STORAGE=s3');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('resumable (tus) uploads on S3', () => {
  const prefix = newPrefix();
  const dataDir = mkdtempSync(join(tmpdir(), 'pactum-s3-tus-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  async function tusAction(s: TestServer, o: BigObject) {
    const { upload, verify } = (await lfs(() => s.url).batch('upload', o, ['tus'])).objects[0]!.actions!;
    const headers = { ...upload!.header, 'tus-resumable': '1.0.0' };
    return {
      upload: upload!,
      verify: verify!,
      offset: async () => Number((await fetch(upload!.href, { method: 'HEAD', headers })).headers.get('upload-offset')),
      patch: (offset: number, bytes: Buffer) =>
        fetch(upload!.href, { method: 'PATCH', headers: { ...headers, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body: new Uint8Array(bytes) }),
    };
  }
  const whole = (o: BigObject) => Buffer.concat([...o.chunks()]);

  it('resume across a server restart, are assembled on the S3 side (UploadPartCopy), and serve ranges', async () => {
    const o = bigObject(12 * MiB);
    const bytes = whole(o);
    const first = await startTestServer({ ...s3Env(prefix), DATA_DIR: dataDir });
    await lfsFixture(first.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
    let t = await tusAction(first, o);
    // 5 MiB, then 7: chunks of 5, 5 and 2 MiB, so every chunk but the last can be an UploadPartCopy part.
    const p1 = await t.patch(0, bytes.subarray(0, 5 * MiB));
    expect(p1.status).toBe(204);
    expect((await keysUnder(`${prefix}partials/`)).length, 'chunk objects of the upload').toBe(1);
    await first.close();

    const second = await startTestServer({ ...s3Env(prefix), DATA_DIR: dataDir });
    try {
      t = await tusAction(second, o);
      expect(await t.offset(), 'the offset the new process reports').toBe(5 * MiB);
      const p2 = await t.patch(5 * MiB, bytes.subarray(5 * MiB));
      expect(p2.status).toBe(204);
      expect(p2.headers.get('upload-offset')).toBe(String(12 * MiB));
      const v = await fetch(t.verify.href, { method: 'POST', headers: { ...t.verify.header, accept: GIT_LFS, 'content-type': GIT_LFS }, body: JSON.stringify({ oid: o.oid, size: o.size }) });
      expect(v.status).toBe(200);
      expect(await keysUnder(`${prefix}partials/`), 'chunks left after the upload completed').toEqual([]);
      const head = await raw.send(new HeadObjectCommand({ Bucket: BUCKET, Key: objectKey(prefix, o.oid) }));
      expect(head.ContentLength).toBe(o.size);
      // An object assembled from three chunks by UploadPartCopy has a multipart ETag ("…-3"); s3rver
      // (with the UploadPartCopy of s3rver-front.ts) gives completed uploads a plain one.
      if (s3.kind === 'ceph-rgw') expect(head.ETag).toMatch(/-3"$/);
      else expect(head.ETag).not.toMatch(/-\d+"$/);

      const dl = await lfs(() => second.url).download(o);
      const full = await downloadDigest(dl);
      expect([full.status, full.bytes, full.sha256]).toEqual([200, o.size, o.oid]);
      // Ranged GETs, one across the boundary of the two chunks.
      // (s3rver answers bytes=0-0 with the whole object, which the backend refuses to pass on.)
      const ranges = [[5 * MiB - 1000, 5 * MiB + 999], [10 * MiB - 1, 10 * MiB], [o.size - 10, o.size - 1], ...(s3.kind === 'ceph-rgw' ? [[0, 0]] : [])] as const;
      for (const [start, end] of ranges) {
        const part = await downloadDigest(dl, `bytes=${start}-${end}`);
        expect([part.status, part.bytes, part.sha256], `bytes=${start}-${end}`).toEqual([206, end - start + 1, rangeDigest(o, start, end)]);
      }
      second.expectConformant();
    } finally {
      await second.stop();
    }
  }, 180_000);

  it('expire when idle longer than TUS_PARTIAL_TTL_SECONDS: the chunks leave the bucket', async () => {
    const p = newPrefix();
    const s = await startTestServer({ ...s3Env(p), TUS_PARTIAL_TTL_SECONDS: '2' });
    try {
      await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
      const o = bigObject(3 * MiB);
      const t = await tusAction(s, o);
      expect((await t.patch(0, whole(o).subarray(0, MiB))).status).toBe(204);
      expect((await keysUnder(`${p}partials/`)).length).toBe(1);
      await s.services.objects.backend.sweep(); // not idle yet: kept
      expect((await keysUnder(`${p}partials/`)).length).toBe(1);
      await sleep(3000);
      await s.services.objects.backend.sweep();
      expect(await keysUnder(`${p}partials/`), 'chunks of the expired upload').toEqual([]);
      expect(await t.offset(), 'an expired upload starts over').toBe(0);
    } finally {
      await s.stop();
    }
  }, 120_000);
});

describe('the S3 gateway goes away mid-transfer and comes back', () => {
  it('the client gets a 503 in the API shape, the server keeps serving, /readyz says so, and the next transfer works', async () => {
    const gateway = await s3.ownGateway();
    const s = await startTestServer(s3Env(newPrefix(), gateway.endpoint));
    try {
      const client = lfs(() => s.url);
      await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: PASSWORD, access: 'write' });
      const stored = bigObject(6 * MiB);
      await client.store(stored);
      const dl = await client.download(stored);
      expect((await status(`${s.url}/readyz`)).status).toBe(200);

      // An upload whose parts stream to the gateway; the gateway is killed after 8 of its 24 MiB.
      const o = bigObject(24 * MiB);
      const { upload } = (await client.batch('upload', o)).objects[0]!.actions!;
      let sent = 0;
      const chunks = function* () {
        for (const c of o.chunks()) {
          sent += c.length;
          yield c;
        }
      };
      const put = streamRequest(upload!, 'PUT', { 'content-type': 'application/octet-stream' }, chunks(), o.size).catch((err: Error) => ({ status: 0, text: err.message }));
      while (sent < 8 * MiB) await sleep(10);
      await gateway.kill();
      const answer = await put;
      expect(answer.status, answer.text).toBe(503);
      expect(JSON.parse(answer.text).message).toMatch(/object storage is unavailable/);

      expect((await status(`${s.url}/healthz`)).status, 'the server still serves').toBe(200);
      const notReady = await status(`${s.url}/readyz`);
      expect(notReady.status).toBe(503);
      expect(notReady.body?.checks?.storage).toMatch(/unreachable/);
      const gone = await fetch(dl.href, { headers: dl.header });
      expect(gone.status).toBe(503);
      expect(gone.headers.get('retry-after')).toBe('5');
      await gone.body?.cancel();

      await gateway.restart();
      expect((await settle(async () => (await status(`${s.url}/readyz`)).status, 200)), '/readyz once the gateway is back').toBe(200);
      await client.store(o);
      const got = await downloadDigest(await client.download(o));
      expect([got.status, got.bytes, got.sha256]).toEqual([200, o.size, o.oid]);
      const again = await downloadDigest(dl);
      expect([again.status, again.sha256]).toEqual([200, stored.oid]);
      expect(s.logLines.join('\n')).not.toContain(s3.secretAccessKey);
      s.expectConformant();
    } finally {
      await s.stop();
      await gateway.close();
    }
  }, 180_000);
});

describe('a bad S3 setting at start-up', () => {
  const silent = () => createLogger('fatal', new Writable({ write: (_c, _e, cb) => cb() }));
  async function startError(env: Record<string, string>) {
    const dataDir = mkdtempSync(join(tmpdir(), 'pactum-s3-bad-'));
    try {
      const server = await startServer({ env: { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ...(await backendEnv(dataDir)), ...env }, log: silent() });
      await server.close();
      return 'started';
    } catch (err) {
      return (err as Error).message;
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it('names the setting that is wrong, never the secret', async () => {
    const base = s3Env(newPrefix());
    const cases: [Record<string, string>, RegExp][] = [
      [{ S3_BUCKET: 'no-such-bucket-here' }, /^S3_BUCKET no-such-bucket-here: no such bucket/],
      [{ S3_ACCESS_KEY_ID: 'AKIAWRONGWRONGWRONG0' }, /^S3_ACCESS_KEY_ID: .* does not know this access key/],
      [{ S3_SECRET_ACCESS_KEY: 'not-the-secret-at-all-0123456789' }, /^S3_SECRET_ACCESS_KEY: .*refused the signature/],
    ];
    // s3rver checks no signature: only a real S3 server can show the wrong secret refused.
    for (const [bad, expected] of cases.filter(([bad]) => s3.kind === 'ceph-rgw' || !bad.S3_SECRET_ACCESS_KEY)) {
      const message = await startError({ ...base, ...bad });
      expect(message, JSON.stringify(bad)).toMatch(expected);
      expect(message).not.toContain(s3.secretAccessKey);
      expect(message).not.toContain('not-the-secret-at-all');
    }
    expect(await startError(base), 'the same settings, corrected').toBe('started');
    // A store that does not answer is not a setting to refuse: the server starts, and /readyz
    // reports it (test/integration/operations.test.ts).
    expect(await startError({ ...base, S3_ENDPOINT: 'http://127.0.0.1:1' })).toBe('started');
  }, 120_000);

  it('`pactum serve` prints one line and exits with 2', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pactum-s3-cli-'));
    try {
      const r = await pactum(['serve'], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ...(await backendEnv(dataDir)), ...s3Env(newPrefix()), S3_BUCKET: 'no-such-bucket-here' });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n').filter((l) => !/NodeVersionSupportWarning|node >=22|AWS SDK|a\.co\/|trace-warnings|^\s*$|versions published|To continue|security updates/.test(l))).toEqual([
        expect.stringMatching(/^pactum serve: S3_BUCKET no-such-bucket-here: no such bucket at http:\/\/127\.0\.0\.1:\d+; create it first \(NoSuchBucket\)$/),
      ]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the SDK settings the backend needs', () => {
  it('the backend turns off the SDK default request checksums, which this S3 server refuses in streamed bodies', async () => {
    const defaults = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    const { Readable } = await import('node:stream');
    const body = () => Readable.from([randomBytes(1000)]);
    try {
      const withDefaults = await defaults.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'checksums/defaults', Body: body(), ContentLength: 1000 })).then(() => 'stored', (err: Error) => err.name);
      const asTheBackend = await raw.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'checksums/backend', Body: body(), ContentLength: 1000 })).then(() => 'stored', (err: Error) => err.name);
      expect(asTheBackend).toBe('stored');
      if (s3.kind === 'ceph-rgw') expect(withDefaults, 'the SDK defaults against Ceph RGW').not.toBe('stored');
      console.log(`[s3-store] ${s3.label} with the SDK's default checksums: ${withDefaults}`);
    } finally {
      defaults.destroy();
    }
  });
});
