/**
 * Resumable uploads are hashed as their bytes arrive and the hash is kept on the worker between
 * requests: the request that completes an upload reads nothing back. Without a kept hash (a
 * restart, another instance, a body cut between hash and disk) the stored prefix is hashed again.
 * A hashing thread that dies fails the uploads it held with HasherFailed and is replaced.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { BlobBackend } from '../../../src/objects/store/backend.js';
import { ContentMismatch, contentStore } from '../../../src/objects/store/content-store.js';
import { fsBackend } from '../../../src/objects/store/fs.js';
import { crashHasherForTests, HasherFailed } from '../../../src/objects/store/hasher.js';
import { body, brokenBody, readAll, sha256 } from './helpers.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** An fs backend whose partial reads are counted. */
async function countingBackend() {
  const dir = await mkdtemp(join(tmpdir(), 'pactum-incremental-'));
  dirs.push(dir);
  const inner = fsBackend(dir);
  const reads = { count: 0 };
  const backend: BlobBackend = {
    ...inner,
    partials: {
      ...inner.partials,
      read: (key, range) => {
        reads.count++;
        return inner.partials.read(key, range);
      },
    },
  };
  return { backend, reads };
}

/** A body that sends `data` and then never ends until `release()` is called. */
/**
 * A body that sends `data` and then waits, like a stalled client, until released. A plain
 * Readable, so that destroying it closes it at once, as destroying a request does (a generator
 * waiting inside an await could only close once released, and since Node 22 pipeline waits for that).
 */
function heldBody(data: Buffer) {
  let sent = false;
  const stream = new Readable({
    read() {
      if (!sent) this.push(data);
      sent = true;
    },
  });
  return { stream, release: () => void (stream.destroyed || stream.push(null)) };
}

describe('incremental hashing of resumable uploads', () => {
  it('commits an upload sent in four requests without reading any stored byte back', async () => {
    const { backend, reads } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const oid = sha256(data);
    const cuts = [0, 700_000, 1_900_000, 2_500_000, data.length];
    for (let i = 0; i < 4; i++) {
      const r = await store.appendUpload('a', oid, data.length, cuts[i]!, body(data.subarray(cuts[i], cuts[i + 1])));
      expect(r).toEqual({ offset: cuts[i + 1], committed: i === 3 });
    }
    expect(reads.count).toBe(0);
    expect(sha256(await readAll(await store.read(oid)))).toBe(oid);
  });

  it('hashes the stored prefix again when no hash was kept (as after a restart) and still verifies', async () => {
    const { backend, reads } = await countingBackend();
    const data = randomBytes(2 * 1024 * 1024);
    const oid = sha256(data);
    await contentStore(backend).appendUpload('b', oid, data.length, 0, body(data.subarray(0, 1_000_000)));
    // A new content store is a new process: it kept nothing.
    const restarted = contentStore(backend);
    expect(await restarted.appendUpload('b', oid, data.length, 1_000_000, body(data.subarray(1_000_000)))).toEqual({ offset: data.length, committed: true });
    expect(reads.count).toBe(1);
    expect(sha256(await readAll(await restarted.read(oid)))).toBe(oid);
  });

  it('refuses, and discards, an upload whose bytes do not hash to its oid, kept hash or not', async () => {
    const { backend } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(500_000);
    const wrong = sha256(Buffer.from('another object'));
    await store.appendUpload('c', wrong, data.length, 0, body(data.subarray(0, 200_000)));
    await expect(store.appendUpload('c', wrong, data.length, 200_000, body(data.subarray(200_000)))).rejects.toBeInstanceOf(ContentMismatch);
    expect(await store.uploadOffset('c')).toBe(0);
    expect(await backend.stat(wrong)).toBeNull();
  });

  it('resumes correctly after a body cut off mid-request', async () => {
    const { backend } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(1_500_000);
    const oid = sha256(data);
    const first = await store.appendUpload('d', oid, data.length, 0, brokenBody(data.subarray(0, 600_000)));
    expect(first.committed).toBe(false);
    const r = await store.appendUpload('d', oid, data.length, first.offset, body(data.subarray(first.offset)));
    expect(r).toEqual({ offset: data.length, committed: true });
    expect(sha256(await readAll(await store.read(oid)))).toBe(oid);
  });

  it('a hash kept longer than its upload could stay unexpired is not trusted: the stored bytes are hashed', async () => {
    const { backend, reads } = await countingBackend();
    const store = contentStore(backend, { keptHashMaxAgeMs: 0 });
    const data = randomBytes(800_000);
    const oid = sha256(data);
    await store.appendUpload('h', oid, data.length, 0, body(data.subarray(0, 300_000)));
    expect(await store.appendUpload('h', oid, data.length, 300_000, body(data.subarray(300_000)))).toEqual({ offset: data.length, committed: true });
    expect(reads.count).toBe(1);
  });

  it('a hash kept for another offset is not trusted (the upload was removed and started over)', async () => {
    const { backend } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(900_000);
    const oid = sha256(data);
    await store.appendUpload('e', oid, data.length, 0, body(randomBytes(300_000))); // wrong bytes, kept hash at 300000
    await store.discardUpload('e');
    await store.appendUpload('e', oid, data.length, 0, body(data.subarray(0, 300_000)));
    expect(await store.appendUpload('e', oid, data.length, 300_000, body(data.subarray(300_000)))).toEqual({ offset: data.length, committed: true });
  });
});

describe('a hashing thread that dies', () => {
  it('fails a basic upload it was hashing with HasherFailed, stores nothing, and the next upload works', async () => {
    const { backend } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(2 * 1024 * 1024);
    const oid = sha256(data);
    const held = heldBody(data.subarray(0, 1024 * 1024));
    const put = store.put(oid, data.length, held.stream);
    await new Promise((r) => setTimeout(r, 100));
    await crashHasherForTests();
    await expect(put).rejects.toBeInstanceOf(HasherFailed);
    held.release();
    expect(await backend.stat(oid)).toBeNull();
    await store.put(oid, data.length, body(data));
    expect(sha256(await readAll(await store.read(oid)))).toBe(oid);
  });

  it('loses the kept hash of a resumable upload, which then verifies by hashing what is stored on a new thread', async () => {
    const { backend, reads } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(1_200_000);
    const oid = sha256(data);
    await store.appendUpload('f', oid, data.length, 0, body(data.subarray(0, 500_000)));
    await crashHasherForTests();
    expect(await store.appendUpload('f', oid, data.length, 500_000, body(data.subarray(500_000)))).toEqual({ offset: data.length, committed: true });
    expect(reads.count).toBe(1);
  });

  it('keeps the bytes of a resumable request it was hashing: the client resumes and the upload verifies', async () => {
    const { backend } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(1_000_000);
    const oid = sha256(data);
    const held = heldBody(data.subarray(0, 400_000));
    const append = store.appendUpload('g', oid, data.length, 0, held.stream);
    await new Promise((r) => setTimeout(r, 100));
    await crashHasherForTests();
    const r = await append.catch((err: Error) => err);
    held.release();
    // Either answer is honest: the stored offset to resume from, or the failure itself.
    const offset = r instanceof Error ? await store.uploadOffset('g') : r.offset;
    if (r instanceof Error) expect(r).toBeInstanceOf(HasherFailed);
    expect(await store.appendUpload('g', oid, data.length, offset, body(data.subarray(offset)))).toEqual({ offset: data.length, committed: true });
    expect(sha256(await readAll(await store.read(oid)))).toBe(oid);
  });
});
