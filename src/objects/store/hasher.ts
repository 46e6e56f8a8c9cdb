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

// Each stream copies its bytes into its own shared ring buffer and posts only (start, length):
// no buffer is allocated per chunk, so nothing piles up for the garbage collector.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const RING = ${RING};
const streams = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'open') streams.set(m.id, { hash: createHash('sha256'), view: new Uint8Array(m.ring) });
  else if (m.op === 'update') {
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
}

class HashWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  /** Called once the worker no longer reads a stream's ring (after its digest or its drop). */
  private readonly releases = new Map<number, () => void>();
  streams = 0;
  constructor() {
    this.worker = new Worker(WORKER_SOURCE, { eval: true });
    this.worker.on('message', (m: { id: number; hashed?: number; digest?: string; released?: true }) => {
      if (m.digest !== undefined || m.released) {
        this.releases.get(m.id)?.();
        this.releases.delete(m.id);
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
  open(id: number, ring: SharedArrayBuffer, p: Pending, release: () => void) {
    this.pending.set(id, p);
    this.releases.set(id, release);
    this.streams++;
    this.worker.postMessage({ op: 'open', id, ring });
  }
  post(message: object) {
    this.worker.postMessage(message);
  }
  close(id: number) {
    if (this.pending.delete(id)) this.worker.postMessage({ op: 'drop', id });
    this.streams--;
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
 * A pass-through stream that counts its bytes and hashes them on a worker thread. `digest()`
 * resolves once every byte that passed is hashed. A chunk beyond `limit` bytes fails the stream
 * with `tooLong()`.
 */
export function hashingStream(limit: number, tooLong: () => Error) {
  const worker = workerFor();
  const id = nextId++;
  const ring = spareRings.pop() ?? new SharedArrayBuffer(RING);
  const view = new Uint8Array(ring);
  let at = 0; // where the next byte goes in the ring
  let sent = 0;
  let hashed = 0;
  let waiting: { need: number; go: () => void } | null = null;
  let resolveDigest: (hex: string) => void = () => {};
  const digestPromise = new Promise<string>((r) => (resolveDigest = r));
  worker.open(id, ring, {
    onHashed(bytes) {
      hashed += bytes;
      if (waiting && RING - (sent - hashed) >= waiting.need) {
        const w = waiting;
        waiting = null;
        w.go();
      }
    },
    onDigest: (hex) => resolveDigest(hex),
  }, () => {
    if (spareRings.length < MAX_SPARE_RINGS) spareRings.push(ring);
  });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    // The ring goes back to the pool when the worker says it is done with it.
    worker.close(id);
  };

  const push = (piece: Buffer) => {
    const first = Math.min(piece.length, RING - at);
    view.set(piece.subarray(0, first), at);
    if (first < piece.length) view.set(piece.subarray(first), 0);
    worker.post({ op: 'update', id, start: at, length: piece.length });
    at = (at + piece.length) % RING;
    sent += piece.length;
  };
  const room = (need: number) => (RING - (sent - hashed) >= need ? Promise.resolve() : new Promise<void>((go) => (waiting = { need, go })));

  const stream = new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      if (sent + chunk.length > limit) return cb(tooLong());
      (async () => {
        for (let offset = 0; offset < chunk.length; offset += PIECE) {
          const piece = chunk.subarray(offset, offset + PIECE);
          await room(piece.length);
          push(piece);
        }
      })().then(() => cb(null, chunk), cb);
    },
  });
  stream.once('error', close);
  return {
    stream,
    count: () => sent,
    /** The hex SHA-256 of everything that passed. */
    async digest(): Promise<string> {
      worker.post({ op: 'digest', id });
      const hex = await digestPromise;
      close();
      return hex;
    },
    discard: close,
  };
}

/** Stops the hashing threads (tests and shutdown). */
export async function closeHashers() {
  const old = workers;
  workers = [];
  await Promise.all(old.map((w) => w.terminate()));
}
