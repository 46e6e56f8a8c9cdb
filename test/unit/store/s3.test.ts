/**
 * The S3 backend against a real S3-protocol server (s3rver, plus the multipart operations it
 * lacks: see test/helpers/s3rver-front.ts). What every backend does is in backend-contract.test.ts; here is what
 * is particular to S3: multipart writes, chunked resumable uploads, server-side copies, sweep, ping.
 */
import { createHash, randomBytes } from 'node:crypto';
import { freePort } from '../../helpers/ports.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OffsetConflict, TooLarge } from '../../../src/objects/store/backend.js';
import { s3Backend, type S3Backend } from '../../../src/objects/store/s3.js';
import { ContentMismatch, contentStore } from '../../../src/objects/store/content-store.js';
import { body, brokenBody, MiB, readAll, sha256, written } from './helpers.js';
import { backendOptions, startS3, type TestS3 } from '../../helpers/s3rver-front.js';

const PART = 5 * MiB;

let s3: TestS3;
let raw: S3Client;
const backends: S3Backend[] = [];
let n = 0;

beforeAll(async () => {
  s3 = await startS3();
  raw = new S3Client({
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
});

afterEach(() => {
  Object.assign(s3.knobs, { multipartAdmin: true, copyParts: true, partGate: null, failParts: false, refusePut: null });
});

afterAll(async () => {
  for (const b of backends) b.destroy();
  raw.destroy();
  await s3.close();
});

/** A backend with a prefix of its own, so each test sees only its own keys. */
function make() {
  const prefix = `s3-${++n}/`;
  const b = s3Backend(backendOptions(s3, prefix, PART));
  backends.push(b);
  return { b, prefix };
}

const keys = async (Prefix: string) =>
  ((await raw.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix }))).Contents ?? []).map((o) => o.Key!).sort();
const uploads = async (Prefix: string) => (await raw.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket, Prefix }))).Uploads ?? [];
const chunkDir = (prefix: string, key: string) => `${prefix}partials/${createHash('sha256').update(key).digest('hex')}/`;
const offsetName = (offset: number) => String(offset).padStart(16, '0');

describe('objects', () => {
  it('a small object is one PutObject at <prefix>objects/ab/cd/<oid>', async () => {
    const { b, prefix } = make();
    const data = randomBytes(1000);
    const oid = sha256(data);
    await (await written(b, data)).commit();
    expect(await keys(prefix)).toEqual([`${prefix}objects/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`]);
    expect(await uploads(prefix)).toEqual([]);
    expect(await b.freeBytes()).toBeNull();
  });

  it('a multi-part object is invisible until commit and reads back byte-identical', async () => {
    const { b, prefix } = make();
    const data = randomBytes(12 * MiB);
    const oid = sha256(data);
    const w = await written(b, data);
    expect(await b.stat(oid)).toBeNull();
    expect(await keys(prefix)).toEqual([]);
    expect(await uploads(prefix)).toHaveLength(1); // parts went up as they filled
    await w.commit();
    expect(await uploads(prefix)).toEqual([]);
    expect(await b.stat(oid)).toBe(data.length);
    expect(sha256(await readAll(await b.read(oid)))).toBe(oid);
    const across = { start: PART - 10, end: 2 * PART + 10 };
    expect((await readAll(await b.read(oid, across))).equals(data.subarray(across.start, across.end + 1))).toBe(true);
  });

  it('an object of exactly one part, and one of a part and a byte', async () => {
    const { b } = make();
    for (const size of [PART, PART + 1]) {
      const data = randomBytes(size);
      await (await written(b, data)).commit();
      expect(sha256(await readAll(await b.read(sha256(data))))).toBe(sha256(data));
    }
  });

  it('an aborted multi-part write leaves no object and no upload', async () => {
    const { b, prefix } = make();
    const data = randomBytes(7 * MiB);
    const w = await written(b, data);
    expect(await uploads(prefix)).toHaveLength(1);
    await w.abort();
    expect(await b.stat(sha256(data))).toBeNull();
    expect(await uploads(prefix)).toEqual([]);
    expect(await keys(prefix)).toEqual([]);
    await expect(w.commit()).rejects.toThrow(/aborted/);
  });

  it('streams each part through without holding it: while S3 holds the parts, the source is read only as far as the sockets take', async () => {
    const { b, prefix } = make();
    const data = randomBytes(40 * MiB);
    let release!: () => void;
    s3.knobs.partGate = new Promise<void>((resolve) => (release = resolve));
    let pulled = 0;
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < data.length; i += 64 * 1024) {
          pulled += 64 * 1024;
          yield data.subarray(i, i + 64 * 1024);
        }
      })(),
      { objectMode: false, highWaterMark: 64 * 1024 },
    );
    const w = await b.beginWrite(sha256(data), data.length);
    const done = pipeline(source, w.stream);
    // Wait until the source stops being read: the parts are held at the server, unread.
    let last = -1;
    while (pulled !== last) {
      last = pulled;
      await sleep(300);
    }
    // A part held in memory before its upload would have pulled 2 parts (one uploading, one filling) and more.
    expect(pulled).toBeGreaterThan(0);
    expect(pulled).toBeLessThan(2 * PART);
    expect(await uploads(prefix)).toHaveLength(1);
    s3.knobs.partGate = null;
    release();
    await done;
    await w.commit();
    expect(sha256(await readAll(await b.read(sha256(data))))).toBe(sha256(data));
  });

  it('under the content store, a streamed body that is short, too long, wrong or broken off leaves no object and no upload', async () => {
    const { b, prefix } = make();
    const store = contentStore(b);
    const data = randomBytes(3 * PART + 1000); // four parts, streamed
    const oid = sha256(data);
    const short = Readable.from([data.subarray(0, 2 * PART + 7)], { objectMode: false });
    await expect(store.put(oid, data.length, short)).rejects.toThrow(new ContentMismatch(`the body has ${2 * PART + 7} bytes; ${data.length} were announced`, 'size'));
    await expect(store.put(oid, data.length - 1, body(data))).rejects.toBeInstanceOf(ContentMismatch);
    await expect(store.put(sha256(Buffer.from('other')), data.length, body(data))).rejects.toBeInstanceOf(ContentMismatch);
    await expect(store.put(oid, data.length, brokenBody(data.subarray(0, 2 * PART + 3)))).rejects.toThrow();
    expect(await uploads(prefix)).toEqual([]);
    expect(await keys(prefix)).toEqual([]);
    await store.put(oid, data.length, body(data));
    expect(sha256(await readAll(await b.read(oid)))).toBe(oid);
    expect(await uploads(prefix)).toEqual([]);
  });

  it('a failing UploadPart fails the stream', async () => {
    const { b, prefix } = make();
    s3.knobs.failParts = true;
    const data = randomBytes(12 * MiB);
    const w = await b.beginWrite(sha256(data), data.length);
    await expect(pipeline(body(data), w.stream)).rejects.toMatchObject({ name: 'NoSuchUpload' });
    await w.abort();
    expect(await uploads(prefix)).toEqual([]);
    expect(await b.stat(sha256(data))).toBeNull();
  });

  it('on an s3rver without AbortMultipartUpload, abort still succeeds (the upload is left to sweep)', async () => {
    const { b } = make();
    s3.knobs.multipartAdmin = false;
    const w = await written(b, randomBytes(6 * MiB));
    await w.abort();
  });
});

describe('resumable uploads', () => {
  it('stores each body as chunks of at most partSize, at their offsets', async () => {
    const { b, prefix } = make();
    const p = b.partials;
    const data = randomBytes(19 * MiB);
    expect(await p.append('k', 0, body(data.subarray(0, 12 * MiB)), data.length)).toBe(12 * MiB);
    expect(await p.append('k', 12 * MiB, body(data.subarray(12 * MiB, 13 * MiB)), data.length)).toBe(13 * MiB);
    const dir = chunkDir(prefix, 'k');
    expect(await keys(prefix)).toEqual([0, PART, 2 * PART, 12 * MiB].map((o) => dir + offsetName(o)));
    expect(await p.size('k')).toBe(13 * MiB);
    await expect(p.append('k', 12 * MiB, body(data.subarray(0, 1)), data.length)).rejects.toEqual(new OffsetConflict(13 * MiB));

    const across = { start: PART - 100, end: 12 * MiB + 100 };
    expect((await readAll(await p.read('k', across))).equals(data.subarray(across.start, across.end + 1))).toBe(true);

    // A body over the limit after a chunk was already stored: that chunk goes again.
    await expect(p.append('k', 13 * MiB, body(data.subarray(13 * MiB)), 5 * MiB)).rejects.toBeInstanceOf(TooLarge);
    expect(await p.size('k')).toBe(13 * MiB);
    expect(await keys(prefix)).toHaveLength(4);
  });

  it('keeps every byte that arrived before the client went away, and resumes there', async () => {
    const { b } = make();
    const p = b.partials;
    const data = randomBytes(9 * MiB);
    const oid = sha256(data);
    expect(await p.append('k', 0, brokenBody(data.subarray(0, 7 * MiB + 123)), data.length)).toBe(7 * MiB + 123);
    expect(await p.size('k')).toBe(7 * MiB + 123);
    expect(await p.append('k', 7 * MiB + 123, body(data.subarray(7 * MiB + 123)), data.length)).toBe(data.length);
    await p.promote('k', oid);
    expect(sha256(await readAll(await b.read(oid)))).toBe(oid);
  });

  it('a failure of S3 during an append is thrown, and the chunks stored before it count', async () => {
    const { b } = make();
    const data = randomBytes(12 * MiB);
    s3.knobs.refusePut = (key) => key.endsWith(offsetName(PART)); // the second chunk
    await expect(b.partials.append('k', 0, body(data), data.length)).rejects.toMatchObject({ name: 'AccessDenied' });
    expect(await b.partials.size('k')).toBe(PART);
    s3.knobs.refusePut = null;
    expect(await b.partials.append('k', PART, body(data.subarray(PART)), data.length - PART)).toBe(data.length);
    expect((await readAll(await b.partials.read('k', { start: 0, end: data.length - 1 }))).equals(data)).toBe(true);
  });

  it('ignores and then cuts chunks that do not continue the upload', async () => {
    const { b, prefix } = make();
    const dir = chunkDir(prefix, 'k');
    // What a cleanup that broke off may leave: a chunk past the end.
    await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: dir + offsetName(1000), Body: Buffer.alloc(10) }));
    await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${dir}not-a-chunk`, Body: Buffer.alloc(10) }));
    expect(await b.partials.size('k')).toBe(0);
    const data = randomBytes(1000);
    expect(await b.partials.append('k', 0, body(data), 5000)).toBe(1000);
    expect(await b.partials.size('k')).toBe(1000); // not 1010: the stray chunk was cut first
    expect(await keys(dir)).toEqual([dir + offsetName(0), `${dir}not-a-chunk`]);
    await b.partials.remove('k');
    expect(await keys(dir)).toEqual([`${dir}not-a-chunk`]); // only chunks are ours to remove
  });

  it('promote copies chunks of at least 5 MiB on the server (UploadPartCopy)', async () => {
    const { b, prefix } = make();
    const data = randomBytes(12 * MiB);
    const oid = sha256(data);
    await b.partials.append('k', 0, body(data), data.length);
    const before = s3.answered.copyPart;
    await b.partials.promote('k', oid);
    expect(s3.answered.copyPart - before).toBe(3);
    expect(sha256(await readAll(await b.read(oid)))).toBe(oid);
    expect(await keys(`${prefix}partials/`)).toEqual([]);
    expect(await uploads(prefix)).toEqual([]);
  });

  it('promote streams the bytes when the server has no UploadPartCopy (s3rver)', async () => {
    const { b, prefix } = make();
    s3.knobs.copyParts = false;
    const data = randomBytes(12 * MiB);
    const oid = sha256(data);
    await b.partials.append('k', 0, body(data), data.length);
    await b.partials.promote('k', oid);
    expect(sha256(await readAll(await b.read(oid)))).toBe(oid);
    expect(await keys(`${prefix}partials/`)).toEqual([]);
  });

  it('promote streams small chunks through a multipart upload, and copies a single chunk whole', async () => {
    const { b, prefix } = make();
    const data = randomBytes(7 * MiB);
    const oid = sha256(data);
    for (let at = 0; at < data.length; at += MiB) await b.partials.append('k', at, body(data.subarray(at, at + MiB)), data.length - at);
    const before = s3.answered.copyPart;
    await b.partials.promote('k', oid);
    expect(s3.answered.copyPart).toBe(before);
    expect(sha256(await readAll(await b.read(oid)))).toBe(oid);

    const one = randomBytes(3000);
    await b.partials.append('one', 0, body(one), one.length);
    await b.partials.promote('one', sha256(one));
    expect((await readAll(await b.read(sha256(one)))).equals(one)).toBe(true);
    expect(await keys(`${prefix}partials/`)).toEqual([]);
  });
});

describe('sweep', () => {
  it('aborts our multipart uploads older than maxAge, and nothing else', async () => {
    const { b, prefix } = make();
    await written(b, randomBytes(6 * MiB)); // neither committed nor aborted: the server crashed
    const [old] = await uploads(prefix);
    await s3.backdateUpload(old!.UploadId!, 2 * 3600_000);
    const young = await written(b, randomBytes(6 * MiB));
    const foreign = await raw.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: 'someone-else/objects/x' }));
    await s3.backdateUpload(foreign.UploadId!, 2 * 3600_000);

    expect(await b.sweep(3600_000)).toBe(1);
    expect((await uploads(prefix)).map((u) => u.UploadId)).not.toContain(old!.UploadId);
    expect(await uploads(prefix)).toHaveLength(1);
    expect(await uploads('someone-else/')).toHaveLength(1);
    expect(await b.sweep(3600_000)).toBe(0);

    await young.abort();
    await raw.send(new AbortMultipartUploadCommand({ Bucket: s3.bucket, Key: 'someone-else/objects/x', UploadId: foreign.UploadId }));
  });

  it('throws where the server cannot list multipart uploads (bare s3rver)', async () => {
    const { b } = make();
    s3.knobs.multipartAdmin = false;
    await expect(b.sweep(0)).rejects.toMatchObject({ name: 'NotImplemented' });
  });
});

describe('ping', () => {
  it('answers when the bucket is there, throws when it is not or the server is unreachable', async () => {
    const { b } = make();
    await b.ping();

    const missing = s3Backend({ ...backendOptions(s3, ''), bucket: 'no-such-bucket' });
    backends.push(missing);
    await expect(missing.ping()).rejects.toThrow();

    const port = await freePort();
    const down = s3Backend({ ...backendOptions(s3, ''), endpoint: `http://127.0.0.1:${port}` });
    backends.push(down);
    await expect(down.ping()).rejects.toThrow();
  });
});

