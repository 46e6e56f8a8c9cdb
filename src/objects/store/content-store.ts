/**
 * The content store the object APIs use: a backend wrapped in the layer that owns integrity.
 * Bytes are hashed (SHA-256, on a worker thread) and counted while they stream to the backend; an object becomes
 * visible only when both match the oid and the announced size, otherwise nothing is kept. Memory
 * stays constant whatever the object's size: bytes flow through with backpressure.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobBackend, ByteRange } from './backend.js';
import { hashingStream } from './hasher.js';

export class ContentMismatch extends Error {}

function meter(limit: number, hash: Hash | null) {
  let count = 0;
  const t = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      count += chunk.length;
      if (count > limit) return cb(new ContentMismatch(`the body is longer than the announced ${limit} bytes`));
      hash?.update(chunk);
      cb(null, chunk);
    },
  });
  return { stream: t, count: () => count };
}

async function digestOf(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export function contentStore(backend: BlobBackend) {
  return {
    backend,

    /** Stores `body` as object `oid` if it is exactly `size` bytes hashing to `oid`; else throws ContentMismatch and keeps nothing. */
    async put(oid: string, size: number, body: Readable): Promise<void> {
      const write = await backend.beginWrite(oid);
      const hashing = hashingStream(size, () => new ContentMismatch(`the body is longer than the announced ${size} bytes`));
      try {
        await pipeline(body, hashing.stream, write.stream);
      } catch (err) {
        hashing.discard();
        await write.abort();
        throw err;
      }
      if (hashing.count() !== size) {
        hashing.discard();
        await write.abort();
        throw new ContentMismatch(`the body has ${hashing.count()} bytes; ${size} were announced`);
      }
      const digest = await hashing.digest();
      if (digest !== oid) {
        await write.abort();
        throw new ContentMismatch(`the content hashes to ${digest}, not to the oid ${oid}`);
      }
      await write.commit();
    },

    read: (oid: string, range?: ByteRange) => backend.read(oid, range),
    /** Sends the object (or a range of it) into `sink`, ending it. */
    async writeTo(oid: string, range: ByteRange, sink: Writable) {
      if (backend.writeTo) return backend.writeTo(oid, range, sink);
      await pipeline(await backend.read(oid, range), sink);
    },
    stat: (oid: string) => backend.stat(oid),
    delete: (oid: string) => backend.delete(oid),
    freeBytes: () => backend.freeBytes(),

    /** Bytes stored so far of a resumable upload. */
    uploadOffset: (key: string) => backend.partials.size(key),

    /**
     * Appends to a resumable upload of `size` bytes. When the upload is complete its hash is
     * checked: on a match it becomes object `oid`, otherwise it is discarded (ContentMismatch).
     * `completing` says the body is expected to finish the upload, so it is hashed as it streams
     * (seeded with the bytes already stored) instead of being read back afterwards.
     */
    async appendUpload(key: string, oid: string, size: number, offset: number, body: Readable, completing: boolean) {
      let hash: Hash | null = null;
      if (completing) {
        hash = createHash('sha256');
        if (offset > 0) for await (const chunk of await backend.partials.read(key, { start: 0, end: offset - 1 })) hash.update(chunk as Buffer);
      }
      // The backend enforces the limit (TooLarge); the meter here only hashes and counts.
      const m = meter(Number.POSITIVE_INFINITY, hash);
      body.on('error', (err) => m.stream.destroy(err));
      const reached = await backend.partials.append(key, offset, body.pipe(m.stream), size - offset);
      if (reached < size) return { offset: reached, committed: false };
      // Trust the streamed hash only if it saw exactly the bytes that were stored.
      const digest = hash && m.count() === reached - offset ? hash.digest('hex') : await digestOf(await backend.partials.read(key, { start: 0, end: size - 1 }));
      if (digest !== oid) {
        await backend.partials.remove(key);
        throw new ContentMismatch(`the uploaded content hashes to ${digest}, not to the oid ${oid}; the upload was discarded`);
      }
      await backend.partials.promote(key, oid);
      return { offset: size, committed: true };
    },

    discardUpload: (key: string) => backend.partials.remove(key),
  };
}

export type ContentStore = ReturnType<typeof contentStore>;
