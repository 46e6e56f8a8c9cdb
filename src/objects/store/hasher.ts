/**
 * SHA-256 off the event loop. Hashing a GiB costs about 0.7 s of CPU; done inline it stalls the
 * socket reads of the very upload it hashes (and every other request). A worker thread hashes
 * while the main thread keeps reading and writing; the stream waits only when the worker falls a
 * ring buffer (1 MiB) behind, so memory stays bounded and nothing is allocated per chunk.
 *
 * The worker is a few lines of plain JavaScript evaluated from a string, so the same code runs
 * from the TypeScript sources and from dist/ without a separate file to resolve.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { Worker } from 'node:worker_threads';

const RING = 1 << 20; // bytes of a stream's ring buffer: how far hashing may lag behind
const PIECE = RING / 4;
// Rings are reused, never left to the garbage collector: a SharedArrayBuffer is freed only when
// both threads have collected it, and the worker, which allocates almost nothing, rarely
// collects; under many concurrent uploads dropped rings piled up by gigabytes. The pool holds as
// many as were ever in use at once, up to this many.
const MAX_SPARE_RINGS = 64;

// Each stream copies its bytes into its own shared ring buffer and posts only (start, length),
// once per PIECE rather than per chunk (a message costs more than copying 64 KiB): no buffer is
// allocated per chunk, so nothing piles up for the garbage collector.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const RING = ${RING};
const streams = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'open') streams.set(m.id, { hash: createHash('sha256'), view: new Uint8Array(m.ring) });
  else if (m.op === 'attach') streams.get(m.id).view = new Uint8Array(m.ring);
  else if (m.op === 'detach') {
    streams.get(m.id).view = null;
    parentPort.postMessage({ id: m.id, released: true });
  } else if (m.op === 'update') {
    const s = streams.get(m.id);
    const end = m.start + m.length;
    if (end <= RING) s.hash.update(s.view.subarray(m.start, end));
    else {
      s.hash.update(s.view.subarray(m.start));
      s.hash.update(s.view.subarray(0, end - RING));
    }
    parentPort.postMessage({ id: m.id, hashed: m.length });
  } else if (m.op === 'digest') {
    const s = streams.get(m.id);
    streams.delete(m.id);
    parentPort.postMessage({ id: m.id, digest: s.hash.digest('hex') });
  } else if (m.op === 'drop') {
    streams.delete(m.id);
    parentPort.postMessage({ id: m.id, released: true });
  }
});`;

interface Pending {
  onHashed(bytes: number): void;
  onDigest(hex: string): void;
  /** The worker died: nothing more will be hashed for this stream. */
  onFailed(err: Error): void;
}

const SUSPENDED: Pending = { onHashed() {}, onDigest() {}, onFailed() {} };

/** The hashing thread failed; the upload it was hashing cannot be verified and is refused. */
export class HasherFailed extends Error {
  constructor(cause: string) {
    super(`the hashing thread failed (${cause}); the upload was not stored, retry it`);
  }
}

class HashWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  /** Called once the worker no longer reads a stream's ring (after its digest, drop or detach). */
  // A queue per stream: a resumed stream's new ring is queued behind the old one's release, and
  // the worker answers in order, so each answer frees the ring it is about.
  private readonly releases = new Map<number, (() => void)[]>();
  streams = 0;
  dead = false;
  constructor() {
    this.worker = new Worker(WORKER_SOURCE, { eval: true });
    // A worker that throws or exits takes every hash it held with it: those uploads fail with a
    // clear error (never hang), and the next upload gets a new worker.
    this.worker.on('error', (err: Error) => this.fail(err.message));
    this.worker.on('exit', (code) => this.fail(`exit code ${code}`));
    this.worker.on('message', (m: { id: number; hashed?: number; digest?: string; released?: true }) => {
      if (m.digest !== undefined || m.released) {
        const queue = this.releases.get(m.id);
        queue?.shift()?.();
        if (queue?.length === 0) this.releases.delete(m.id);
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.digest !== undefined) {
        this.pending.delete(m.id);
        p.onDigest(m.digest);
      } else if (m.hashed !== undefined) p.onHashed(m.hashed);
    });
    // After the listener: adding one re-references the port, and an idle hasher must not keep
    // the process alive.
    this.worker.unref();
  }
  private fail(cause: string) {
    if (this.dead) return;
    this.dead = true;
    workers = workers.filter((w) => w !== this);
    const err = new HasherFailed(cause);
    const pending = [...this.pending.values()];
    this.pending.clear();
    // The rings were shared with a thread that is gone; dropping them is safe.
    this.releases.clear();
    for (const p of pending) p.onFailed(err);
  }
  /** Starts a hash (`resume` false) or gives a suspended one a ring again (`resume` true). */
  open(id: number, ring: SharedArrayBuffer, p: Pending, release: () => void, resume: boolean) {
    this.pending.set(id, p);
    this.releases.set(id, [...(this.releases.get(id) ?? []), release]);
    this.streams++;
    this.post({ op: resume ? 'attach' : 'open', id, ring });
  }
  post(message: object) {
    if (!this.dead) this.worker.postMessage(message);
  }
  /** Ends a stream: `keep` keeps its hash state on the worker (to resume later) and frees only its ring. */
  close(id: number, keep = false) {
    if (this.pending.has(id)) this.post({ op: keep ? 'detach' : 'drop', id });
    // A kept hash has no stream to tell any more; holds() still sees it.
    if (keep && this.pending.has(id)) this.pending.set(id, SUSPENDED);
    else this.pending.delete(id);
    this.streams--;
  }
  /** Forgets a suspended hash. */
  drop(id: number) {
    if (this.pending.delete(id)) this.post({ op: 'drop', id });
  }
  holds(id: number) {
    return !this.dead && this.pending.has(id);
  }
  terminate() {
    return this.worker.terminate();
  }
}

let workers: HashWorker[] = [];
const spareRings: SharedArrayBuffer[] = [];
let nextId = 1;

/** The least busy of up to two hashing threads (this kind of machine has two cores). */
function workerFor(): HashWorker {
  if (workers.length < 2 && !workers.some((w) => w.streams === 0)) workers.push(new HashWorker());
  return workers.reduce((a, b) => (b.streams < a.streams ? b : a));
}

/**
 * A hash kept on its worker between two requests of one resumable upload: only the SHA-256 state
 * (about a hundred bytes) stays; the ring goes back to the pool. Lost when the worker dies.
 */
export interface SuspendedHash {
  readonly bytes: number;
  /** False once the worker that holds it has died or it was dropped. */
  alive(): boolean;
  drop(): void;
}

interface Suspension extends SuspendedHash {
  worker: HashWorker;
  id: number;
}

/**
 * A pass-through stream that counts its bytes and hashes them on a worker thread. `digest()`
 * resolves once every byte that passed is hashed. A chunk beyond `limit` bytes fails the stream
 * with `tooLong()`; a worker that dies fails it with HasherFailed. `resume` continues a hash that
 * `suspend()` kept, so its count and digest cover the earlier bytes too.
 */
export function hashingStream(limit: number, tooLong: () => Error, resume?: SuspendedHash) {
  const from = resume as Suspension | undefined;
  if (from && !from.alive()) throw new Error('that hash is gone; start a new one');
  const worker = from?.worker ?? workerFor();
  const id = from?.id ?? nextId++;
  const ring = spareRings.pop() ?? new SharedArrayBuffer(RING);
  const view = new Uint8Array(ring);
  let at = 0; // where the next byte goes in the ring
  let sent = 0;
  let hashed = 0;
  const before = from?.bytes ?? 0;
  let waiting: { need: number; go: () => void } | null = null;
  let caughtUp: (() => void) | null = null;
  let failure: Error | null = null;
  let resolveDigest: (hex: string) => void = () => {};
  let rejectDigest: (err: Error) => void = () => {};
  const digestPromise = new Promise<string>((ok, fail) => ((resolveDigest = ok), (rejectDigest = fail)));
  digestPromise.catch(() => {}); // observed by digest(); a stream nobody digests must not leave it unhandled
  worker.open(id, ring, {
    onHashed(bytes) {
      hashed += bytes;
      if (hashed === sent) caughtUp?.();
      if (waiting && RING - (sent - hashed) >= waiting.need) {
        const w = waiting;
        waiting = null;
        w.go();
      }
    },
    onDigest: (hex) => resolveDigest(hex),
    onFailed(err) {
      failure = err;
      rejectDigest(err);
      waiting?.go();
      caughtUp?.();
      stream.destroy(err);
    },
  }, () => {
    if (spareRings.length < MAX_SPARE_RINGS) spareRings.push(ring);
  }, Boolean(from));
  let closed = false;
  const close = (keep = false) => {
    if (closed) return;
    closed = true;
    // The ring goes back to the pool when the worker says it is done with it.
    worker.close(id, keep);
  };

  let posted = 0; // bytes the worker was told about; the rest of `sent` waits to be batched
  /** Tells the worker about the bytes copied since the last message: one message per PIECE, not per chunk. */
  const flush = () => {
    if (posted === sent || closed) return;
    worker.post({ op: 'update', id, start: posted % RING, length: sent - posted });
    posted = sent;
  };
  const push = (piece: Buffer) => {
    const first = Math.min(piece.length, RING - at);
    view.set(piece.subarray(0, first), at);
    if (first < piece.length) view.set(piece.subarray(first), 0);
    at = (at + piece.length) % RING;
    sent += piece.length;
    if (sent - posted >= PIECE) flush();
  };
  const room = (need: number) => {
    if (RING - (sent - hashed) >= need) return Promise.resolve();
    flush(); // the worker can only catch up on bytes it was told about
    return new Promise<void>((go) => (waiting = { need, go }));
  };
  /** Hashes `chunk`, waiting while the worker is a ring behind. */
  const feed = async (chunk: Buffer) => {
    for (let offset = 0; offset < chunk.length; offset += PIECE) {
      const piece = chunk.subarray(offset, offset + PIECE);
      await room(piece.length);
      if (failure) throw failure;
      push(piece);
    }
  };

  const stream = new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      if (before + sent + chunk.length > limit) return cb(tooLong());
      feed(chunk).then(() => cb(null, chunk), cb);
    },
  });
  stream.once('error', () => close());
  return {
    stream,
    /** Bytes hashed in all, a resumed hash's earlier bytes included. */
    count: () => before + sent,
    feed,
    /** The hex SHA-256 of everything that passed. */
    async digest(): Promise<string> {
      if (failure) throw failure;
      flush();
      worker.post({ op: 'digest', id });
      try {
        return await digestPromise;
      } finally {
        close();
      }
    },
    /** Keeps the hash state on the worker, frees the ring; `hashingStream(…, suspended)` goes on. */
    async suspend(): Promise<SuspendedHash | null> {
      // A closed stream's hash is gone from the worker (and its acks with it): nothing to keep or wait for.
      if (failure || closed) return null;
      // Every ack must be in first: a late one would count toward the resumed stream's ring.
      flush();
      if (hashed < sent) await new Promise<void>((r) => (caughtUp = r));
      caughtUp = null;
      if (failure || closed) return null;
      close(true);
      const bytes = before + sent;
      const s: Suspension = { worker, id, bytes, alive: () => worker.holds(id), drop: () => worker.drop(id) };
      return s;
    },
    discard: () => close(),
  };
}

/** Kills a hashing thread as a crash would (tests of the failure path). */
export async function crashHasherForTests() {
  await Promise.all(workers.map((w) => w.terminate()));
}

/** Stops the hashing threads (tests and shutdown). */
export async function closeHashers() {
  const old = workers;
  workers = [];
  await Promise.all(old.map((w) => w.terminate()));
}
