/**
 * Resumable uploads are hashed as their bytes arrive and the hash state is kept between requests:
 * the request that completes an upload reads nothing back. Without a kept hash (a restart,
 * another instance, a body cut between hash and disk, a hash dropped as the least recently used)
 * the stored prefix is hashed again. Hashing runs in the request's pass, in slices that let the
 * event loop turn.
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
import { hashingStream } from '../../../src/objects/store/hasher.js';
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

describe('a hash that cannot go on', () => {
  it('a basic upload whose body breaks off mid-hash stores nothing, and the next upload of the object works', async () => {
    const { backend } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(2 * 1024 * 1024);
    const oid = sha256(data);
    await expect(store.put(oid, data.length, brokenBody(data.subarray(0, 1024 * 1024)))).rejects.toThrow('aborted');
    expect(await backend.stat(oid)).toBeNull();
    await store.put(oid, data.length, body(data));
    expect(sha256(await readAll(await store.read(oid)))).toBe(oid);
  });

  it('a kept hash dropped as the least recently used is not missed: the stored bytes are hashed again and the upload verifies', async () => {
    const { backend, reads } = await countingBackend();
    const store = contentStore(backend, { maxKeptHashes: 1 });
    const data = randomBytes(1_200_000);
    const oid = sha256(data);
    const other = randomBytes(600_000);
    await store.appendUpload('f', oid, data.length, 0, body(data.subarray(0, 500_000)));
    await store.appendUpload('f2', sha256(other), other.length, 0, body(other.subarray(0, 100_000))); // pushes f's hash out
    expect(await store.appendUpload('f', oid, data.length, 500_000, body(data.subarray(500_000)))).toEqual({ offset: data.length, committed: true });
    expect(reads.count).toBe(1);
    // f2's hash was kept: it completes without reading anything back.
    expect(await store.appendUpload('f2', sha256(other), other.length, 100_000, body(other.subarray(100_000)))).toEqual({ offset: other.length, committed: true });
    expect(reads.count).toBe(1);
  });

  it('a resumable request held mid-body and then cut keeps its stored bytes: the client resumes and the upload verifies', async () => {
    const { backend } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(1_000_000);
    const oid = sha256(data);
    const held = heldBody(data.subarray(0, 400_000));
    const append = store.appendUpload('g', oid, data.length, 0, held.stream);
    await new Promise((r) => setTimeout(r, 100));
    held.stream.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    const r = await append;
    expect(r.committed).toBe(false);
    expect(await store.uploadOffset('g')).toBe(r.offset);
    expect(await store.appendUpload('g', oid, data.length, r.offset, body(data.subarray(r.offset)))).toEqual({ offset: data.length, committed: true });
    expect(sha256(await readAll(await store.read(oid)))).toBe(oid);
  });

  it('a resumable request whose body fails after its last byte still verifies, from what is stored', async () => {
    const { backend, reads } = await countingBackend();
    const store = contentStore(backend);
    const data = randomBytes(700_000);
    const oid = sha256(data);
    await store.appendUpload('i', oid, data.length, 0, body(data.subarray(0, 200_000)));
    expect(await store.appendUpload('i', oid, data.length, 200_000, brokenBody(data.subarray(200_000)))).toEqual({ offset: data.length, committed: true });
    expect(reads.count).toBe(1);
    expect(sha256(await readAll(await store.read(oid)))).toBe(oid);
  });

  it('a kept hash goes on once only', async () => {
    const first = hashingStream(Infinity, () => new Error('too long'));
    await first.feed(Buffer.from('abc'));
    const kept = first.suspend()!;
    const next = hashingStream(Infinity, () => new Error('too long'), kept);
    expect(kept.alive()).toBe(false);
    expect(() => hashingStream(Infinity, () => new Error('too long'), kept)).toThrow('that hash is gone');
    await next.feed(Buffer.from('def'));
    expect(next.digest()).toBe(sha256(Buffer.from('abcdef')));
  });

  it('a chunk larger than a slice is hashed in slices, the event loop turning between them', async () => {
    const data = randomBytes(8 * 1024 * 1024 + 5);
    const hashing = hashingStream(Infinity, () => new Error('too long'));
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await hashing.feed(data);
    const during = turns;
    ticking = false;
    // Nine slices of at most 1 MiB: the loop turned at least once between each two.
    expect(during).toBeGreaterThanOrEqual(8);
    expect(hashing.digest()).toBe(sha256(data));
  });
});
