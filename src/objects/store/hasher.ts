/**
 * SHA-256 of an upload, in the request's own pass: each chunk is hashed as it goes by, the way a
 * bare server that checks a hash would write it.
 *
 * Why not a worker thread: a worker hashes in parallel only after each chunk is copied to it
 * (a shared ring, 1 MiB a stream, plus a message per slice), and on a machine whose cores also
 * run the clients and the disk's work, those copies, messages and the garbage they leave cost
 * more than the second core gains; the rings and the worker's own heap also cost resident memory
 * per concurrent upload. Measured side by side (`scripts/bench/objects.ts`), hashing in the pass
 * matches a bare server that hashes, and the longest event-loop stall during a 1 GiB upload stays
 * a few milliseconds: a socket delivers at most 64 KiB at a time (well under a millisecond of
 * hashing), and a larger chunk (from a file, a test) is hashed in SLICE pieces with a turn of the
 * event loop between them, so other requests keep being served.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { transientBytes } from '../../http/transient-buffers.js';

/** Most bytes hashed without giving the event loop a turn: ~2 ms of SHA-256. */
const SLICE = 1 << 20;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A hash kept between two requests of one resumable upload: only the SHA-256 state (about a
 * hundred bytes). Lost with the process.
 */
export interface SuspendedHash {
  readonly bytes: number;
  /** False once it was dropped or resumed. */
  alive(): boolean;
  drop(): void;
}

interface Suspension extends SuspendedHash {
  /** Hands the state over to the stream that goes on with it; the suspension is spent. */
  take(): Hash;
}

function suspension(hash: Hash, bytes: number): Suspension {
  let state: Hash | null = hash;
  return {
    bytes,
    alive: () => state !== null,
    drop: () => void (state = null),
    take() {
      if (!state) throw new Error('that hash is gone; start a new one');
      const h = state;
      state = null;
      return h;
    },
  };
}

/**
 * A pass-through stream that counts its bytes and hashes them. `digest()` gives the hex SHA-256
 * of every byte that passed. A chunk beyond `limit` bytes fails the stream with `tooLong()`.
 * `resume` continues a hash that `suspend()` kept, so its count and digest cover the earlier
 * bytes too.
 */
export function hashingStream(limit: number, tooLong: () => Error, resume?: SuspendedHash) {
  const from = resume as Suspension | undefined;
  if (from && !from.alive()) throw new Error('that hash is gone; start a new one');
  const hash = from?.take() ?? createHash('sha256');
  let bytes = from?.bytes ?? 0;
  let closed = false;

  /** Hashes `chunk`, a SLICE at a time with a turn of the event loop between slices. */
  const feed = async (chunk: Buffer) => {
    if (closed) throw new Error('this hash is finished');
    bytes += chunk.length;
    transientBytes(chunk.length, hash); // a stored prefix read back, a large chunk: dead once hashed
    if (chunk.length <= SLICE) return void hash.update(chunk);
    for (let at = 0; at < chunk.length; at += SLICE) {
      if (at > 0) await nextTurn();
      hash.update(chunk.subarray(at, at + SLICE));
    }
  };

  const stream = new Transform({
    // No chunk queued on either side beyond the one in hand: a body's chunks are dead once written
    // (transient-buffers.ts), and one that waits in a queue may outlive the collections meant to free it.
    highWaterMark: 0,
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      if (bytes + chunk.length > limit) return cb(tooLong());
      // The common case (a socket's chunk) stays synchronous: no promise per chunk.
      if (chunk.length <= SLICE) {
        // Each chunk of a body is a fresh buffer, dead once written: see transient-buffers.ts.
        transientBytes(chunk.length, hash);
        hash.update(chunk);
        bytes += chunk.length;
        return cb(null, chunk);
      }
      feed(chunk).then(() => cb(null, chunk), cb);
    },
  });
  stream.once('error', () => (closed = true));
  return {
    stream,
    /** Bytes hashed in all, a resumed hash's earlier bytes included. */
    count: () => bytes,
    /** False once the stream failed, or its hash was digested, kept or discarded. */
    usable: () => !closed,
    feed,
    /** The hex SHA-256 of everything that passed. */
    digest(): string {
      if (closed) throw new Error('this hash is finished');
      closed = true;
      return hash.digest('hex');
    },
    /** Keeps the hash state for `hashingStream(…, suspended)` to go on with; null once the stream is finished. */
    suspend(): SuspendedHash | null {
      if (closed) return null;
      closed = true;
      return suspension(hash, bytes);
    },
    discard: () => void (closed = true),
  };
}
