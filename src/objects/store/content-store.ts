/**
 * The content store the object APIs use: a backend wrapped in the layer that owns integrity.
 * Bytes are hashed (SHA-256, in the request's own pass: see hasher.ts) and counted while they stream to the backend; an object becomes
 * visible only when both match the oid and the announced size, otherwise nothing is kept. Memory
 * stays constant whatever the object's size: bytes flow through with backpressure.
 */
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobBackend, BodyOptions, ByteRange } from './backend.js';
import { hashingStream, type SuspendedHash } from './hasher.js';
import { freeNow } from '../../http/transient-buffers.js';

type HashingStream = ReturnType<typeof hashingStream>;

/** The bytes do not match what was announced: their size, or the hash the oid names. */
export class ContentMismatch extends Error {
  constructor(message: string, readonly kind: 'size' | 'hash') {
    super(message);
  }
}

/** Most upload hashes kept between requests; beyond, the least recently used is dropped (and rehashed if it comes back). */
const MAX_KEPT_HASHES = 10_000;

/** Hashes of resumable uploads kept between requests, by upload key. */
function keptHashes(maxAgeMs: number, maxKept: number) {
  const kept = new Map<string, { h: SuspendedHash; at: number }>();
  return {
    /**
     * The kept hash of `key` if it covers exactly `offset` bytes and is younger than `maxAgeMs`
     * (an upload idle longer may have expired and been sent again, elsewhere); forgets it either way.
     */
    take(key: string, offset: number): SuspendedHash | null {
      const k = kept.get(key);
      kept.delete(key);
      if (k && k.h.alive() && k.h.bytes === offset && Date.now() - k.at < maxAgeMs) return k.h;
      k?.h.drop();
      return null;
    },
    keep(key: string, h: SuspendedHash | null) {
      if (!h) return;
      kept.set(key, { h, at: Date.now() });
      if (kept.size > maxKept) {
        const [oldest, old] = kept.entries().next().value as [string, { h: SuspendedHash }];
        kept.delete(oldest);
        old.h.drop();
      }
    },
    forget(key: string) {
      kept.get(key)?.h.drop();
      kept.delete(key);
    },
  };
}

/** `keptHashMaxAgeMs`: less than the time an idle resumable upload takes to expire. */
export function contentStore(backend: BlobBackend, opts: { keptHashMaxAgeMs?: number; maxKeptHashes?: number } = {}) {
  const suspended = keptHashes(opts.keptHashMaxAgeMs ?? 3600_000, opts.maxKeptHashes ?? MAX_KEPT_HASHES);
  const unbounded = () => new Error('unreachable: resumable uploads are bounded by the backend');

  /** A hash of the first `length` stored bytes of upload `key`. */
  async function hashPrefix(key: string, length: number) {
    const hashing = hashingStream(Number.POSITIVE_INFINITY, unbounded);
    try {
      if (length > 0) {
        for await (const chunk of await backend.partials.read(key, { start: 0, end: length - 1 })) {
          await hashing.feed(chunk as Buffer);
          freeNow(chunk as Buffer, true); // read here for the hash alone, and counted by feed
        }
      }
    } catch (err) {
      hashing.discard();
      throw err;
    }
    return hashing;
  }

  /**
   * The digest of the `length` stored bytes: from the stream's hash when it saw exactly those, else
   * (or when the stream failed, as when a client resets after its last byte) by hashing what is stored.
   */
  async function finalDigest(hashing: HashingStream, key: string, length: number) {
    if (hashing.count() === length && hashing.usable()) return hashing.digest();
    hashing.discard();
    return (await hashPrefix(key, length)).digest();
  }

  /** A hashing stream that already covers the `offset` bytes stored for `key`. */
  async function resumeHash(key: string, offset: number) {
    const kept = suspended.take(key, offset);
    if (kept) return hashingStream(Number.POSITIVE_INFINITY, unbounded, kept);
    return hashPrefix(key, offset);
  }

  return {
    backend,

    /**
     * Stores `body` as object `oid` if it is exactly `size` bytes hashing to `oid`; else throws
     * ContentMismatch and keeps nothing. `opts.ownsChunks`: see BodyOptions.
     */
    async put(oid: string, size: number, body: Readable, opts?: BodyOptions): Promise<void> {
      const write = await backend.beginWrite(oid, size, opts);
      const hashing = hashingStream(size, () => new ContentMismatch(`the body is longer than the announced ${size} bytes`, 'size'));
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
        throw new ContentMismatch(`the body has ${hashing.count()} bytes; ${size} were announced`, 'size');
      }
      const digest = hashing.digest();
      if (digest !== oid) {
        await write.abort();
        throw new ContentMismatch(`the content hashes to ${digest}, not to the oid ${oid}`, 'hash');
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
     * Every body is hashed as it streams, and the hash state is kept between requests, so the
     * last PATCH costs only its own bytes. Without a kept hash that covers exactly the stored
     * bytes (a restart, another instance, a body cut between the hash and the disk, a hash
     * dropped as the least recently used), the stored prefix is hashed again.
     */
    async appendUpload(key: string, oid: string, size: number, offset: number, body: Readable, opts?: BodyOptions) {
      const hashing = await resumeHash(key, offset);
      body.on('error', (err) => hashing.stream.destroy(err));
      let reached: number;
      try {
        // The backend enforces the limit (TooLarge); the hashing stream only hashes and counts.
        reached = await backend.partials.append(key, offset, body.pipe(hashing.stream), size - offset, opts);
      } catch (err) {
        hashing.discard();
        throw err;
      }
      if (reached < size) {
        // Keep the hash only if it saw exactly the bytes now stored.
        if (hashing.count() === reached) suspended.keep(key, hashing.suspend());
        else hashing.discard();
        return { offset: reached, committed: false };
      }
      const digest = await finalDigest(hashing, key, reached);
      if (digest !== oid) {
        await backend.partials.remove(key);
        throw new ContentMismatch(`the uploaded content hashes to ${digest}, not to the oid ${oid}; the upload was discarded`, 'hash');
      }
      await backend.partials.promote(key, oid);
      return { offset: size, committed: true };
    },

    discardUpload: (key: string) => {
      suspended.forget(key);
      return backend.partials.remove(key);
    },
  };
}

export type ContentStore = ReturnType<typeof contentStore>;
