/**
 * What every BlobBackend promises, run against the embedded one (files) and the S3 one (s3rver):
 * the layers above (content-store, the transfers) rely on exactly this and nothing more.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OffsetConflict, TooLarge, type BlobBackend } from '../../../src/objects/store/backend.js';
import { ContentMismatch, contentStore } from '../../../src/objects/store/content-store.js';
import { fsBackend } from '../../../src/objects/store/fs.js';
import { s3Backend, type S3Backend } from '../../../src/objects/store/s3.js';
import { body, brokenBody, readAll, sha256, written } from './helpers.js';
import { backendOptions, startS3, type TestS3 } from '../../helpers/s3rver-front.js';

let s3: TestS3;
const s3Backends: S3Backend[] = [];
const dirs: string[] = [];
let n = 0;

beforeAll(async () => {
  s3 = await startS3();
});

afterAll(async () => {
  for (const b of s3Backends) b.destroy();
  await s3.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A fresh, empty backend per test: its own directory, or its own prefix in the bucket. */
const makers: [string, () => Promise<BlobBackend>][] = [
  [
    'fs',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'pactum-fs-contract-'));
      dirs.push(dir);
      return fsBackend(dir);
    },
  ],
  [
    's3',
    () => {
      const b = s3Backend(backendOptions(s3, `contract-${++n}/`));
      s3Backends.push(b);
      return Promise.resolve(b);
    },
  ],
];

describe.each(makers)('%s backend', (_name, make) => {
  it('stores, reads (whole and ranges), stats and deletes an object', async () => {
    const b = await make();
    const data = randomBytes(100_000);
    const oid = sha256(data);
    await (await written(b, data)).commit();
    expect(await b.stat(oid)).toBe(data.length);
    expect((await readAll(await b.read(oid))).equals(data)).toBe(true);
    expect((await readAll(await b.read(oid, { start: 10, end: 99 }))).equals(data.subarray(10, 100))).toBe(true);
    expect((await readAll(await b.read(oid, { start: 99_999, end: 99_999 }))).equals(data.subarray(99_999))).toBe(true);
    await b.delete(oid);
    expect(await b.stat(oid)).toBeNull();
    await b.delete(oid); // absent: no error
  });

  it('stores an empty object', async () => {
    const b = await make();
    const oid = sha256(Buffer.alloc(0));
    await (await written(b, Buffer.alloc(0))).commit();
    expect(await b.stat(oid)).toBe(0);
    expect((await readAll(await b.read(oid))).length).toBe(0);
  });

  it('fails reading a missing object with ENOENT, before any byte', async () => {
    const b = await make();
    await expect(b.read('0'.repeat(64))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await b.stat('0'.repeat(64))).toBeNull();
  });

  it('shows nothing before commit; abort discards; abort after commit changes nothing', async () => {
    const b = await make();
    const data = randomBytes(5000);
    const oid = sha256(data);
    const w = await written(b, data);
    expect(await b.stat(oid)).toBeNull();
    await w.abort();
    await w.abort(); // twice is fine
    expect(await b.stat(oid)).toBeNull();

    const w2 = await written(b, data);
    await w2.commit();
    await w2.abort();
    expect(await b.stat(oid)).toBe(data.length);
  });

  it('resumable upload: appends, offset conflicts, limits, broken bodies, ranges, promote, remove', async () => {
    const b = await make();
    const p = b.partials;
    const data = randomBytes(300_000);
    const oid = sha256(data);
    const key = `repo-1/${oid}`;
    expect(await p.size(key)).toBe(0);

    expect(await p.append(key, 0, body(data.subarray(0, 100_000)), data.length)).toBe(100_000);
    expect(await p.size(key)).toBe(100_000);

    await expect(p.append(key, 5, body(data.subarray(5, 10)), data.length)).rejects.toEqual(new OffsetConflict(100_000));
    await expect(p.append(key, 0, body(data), data.length)).rejects.toBeInstanceOf(OffsetConflict);

    // More than the limit: refused, and the upload is as it was.
    await expect(p.append(key, 100_000, body(data.subarray(100_000)), 150_000)).rejects.toBeInstanceOf(TooLarge);
    expect(await p.size(key)).toBe(100_000);

    // The client goes away mid-body: what was stored counts, and it resumes from there.
    const sent = data.subarray(100_000, 250_000);
    const reached = await p.append(key, 100_000, brokenBody(sent), data.length - 100_000);
    expect(reached).toBeGreaterThanOrEqual(100_000);
    expect(reached).toBeLessThanOrEqual(250_000);
    expect(await p.size(key)).toBe(reached);
    expect(await p.append(key, reached, body(data.subarray(reached)), data.length - reached)).toBe(data.length);

    expect((await readAll(await p.read(key, { start: 0, end: data.length - 1 }))).equals(data)).toBe(true);
    expect((await readAll(await p.read(key, { start: 99_990, end: 200_009 }))).equals(data.subarray(99_990, 200_010))).toBe(true);

    await p.promote(key, oid);
    expect(await b.stat(oid)).toBe(data.length);
    expect(sha256(await readAll(await b.read(oid)))).toBe(oid);
    expect(await p.size(key)).toBe(0);

    await p.append('other', 0, body(data.subarray(0, 1000)), 1000);
    await p.remove('other');
    expect(await p.size('other')).toBe(0);
    await p.remove('other'); // nothing there: no error
  });

  it('expires resumable uploads idle for longer than asked, except busy ones', async () => {
    const b = await make();
    await b.partials.append('idle', 0, body(randomBytes(5000)), 10_000);
    await b.partials.append('busy', 0, body(randomBytes(3000)), 10_000);
    // Written just now: not idle for a minute.
    expect(await b.partials.expire(60_000)).toBe(0);
    expect(await b.partials.size('idle')).toBe(5000);
    // A negative idle time makes everything count as idle (S3 times cannot be aged): only the busy one stays.
    expect(await b.partials.expire(-60_000, new Set(['busy']))).toBe(1);
    expect(await b.partials.size('idle')).toBe(0);
    expect(await b.partials.size('busy')).toBe(3000);
    // The expired upload starts over from 0.
    expect(await b.partials.append('idle', 0, body(randomBytes(100)), 10_000)).toBe(100);
    expect(await b.partials.expire(-60_000)).toBe(2);
  });

  it('promotes an empty upload', async () => {
    const b = await make();
    const oid = sha256(Buffer.alloc(0));
    expect(await b.partials.append('empty', 0, body(Buffer.alloc(0)), 0)).toBe(0);
    await b.partials.promote('empty', oid);
    expect(await b.stat(oid)).toBe(0);
  });

  it('under the content store: keeps only what hashes to its oid', async () => {
    const b = await make();
    const store = contentStore(b);
    const data = randomBytes(200_000);
    const oid = sha256(data);
    const wrong = sha256(Buffer.from('something else'));
    await expect(store.put(wrong, data.length, body(data))).rejects.toBeInstanceOf(ContentMismatch);
    expect(await b.stat(wrong)).toBeNull();
    await store.put(oid, data.length, body(data));
    expect(await store.stat(oid)).toBe(data.length);

    // A resumable upload in two requests, the second hashed as it streams.
    const data2 = randomBytes(150_000);
    const oid2 = sha256(data2);
    expect(await store.appendUpload('k2', oid2, data2.length, 0, body(data2.subarray(0, 70_000)))).toEqual({ offset: 70_000, committed: false });
    expect(await store.appendUpload('k2', oid2, data2.length, 70_000, body(data2.subarray(70_000)))).toEqual({ offset: data2.length, committed: true });
    expect(sha256(await readAll(await store.read(oid2)))).toBe(oid2);
  });
});
