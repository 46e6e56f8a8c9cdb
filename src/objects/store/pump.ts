/**
 * Sends a range of a file to a writable (an HTTP response) through two reused buffers (from the
 * pools of buffer-pool.ts: large ones for up to LARGE_READERS downloads at once, which makes a
 * download read a quarter as often, and the pool uploads share for the rest). A read stream would
 * allocate a fresh buffer per read: at GiB scale that is a GiB of garbage that V8 collects only
 * when tens of MiB of it have piled up, and resident memory follows. Here memory is two buffers,
 * whatever the size, and a slow client slows the reads (each buffer is reused only once the
 * socket has taken its bytes).
 *
 * Abort-safe: when the sink closes or fails first (the client went away), the pump stops reading,
 * closes the file and rejects with SinkGone; no write's outcome is ever left unobserved.
 */
import { open } from 'node:fs/promises';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { LARGE_READERS, largeTransferBuffers, transferBuffers, type BufferPool } from './buffer-pool.js';

/** The sink closed or failed before it took every byte: the client went away. */
export class SinkGone extends Error {
  constructor(cause?: unknown) {
    super('the receiver went away before the transfer ended', { cause });
  }
}

/** Rejects (with SinkGone) once `sink` closes or fails; `release` stops listening. Never an unhandled rejection. */
function whenGone(sink: Writable) {
  let release = () => {};
  const gone = new Promise<never>((_, reject) => {
    const onClose = () => reject(new SinkGone());
    const onError = (err: Error) => reject(new SinkGone(err));
    sink.once('close', onClose);
    sink.once('error', onError);
    release = () => {
      sink.off('close', onClose);
      sink.off('error', onError);
    };
    if (sink.destroyed) onClose();
  });
  gone.catch(() => {}); // observed where it is raced; this only keeps an unraced one quiet
  return { gone, release };
}

/** Resolves once `sink` has taken `chunk`; the rejection of a failed write is marked handled here and observed by whoever awaits it. */
function write(sink: Writable, chunk: Buffer): Promise<void> {
  const done = new Promise<void>((resolve, reject) => {
    sink.write(chunk, (err) => (err ? reject(new SinkGone(err)) : resolve()));
  });
  done.catch(() => {});
  return done;
}

let largeReaders = 0;
/** Downloads reading with large buffers now (for tests). */
export const largeReadersNow = () => largeReaders;

/**
 * The pool a pump of `bytes` takes its buffers from, and what gives its place back: a large one
 * while fewer than LARGE_READERS pumps hold one and the range fills more than two small buffers.
 */
function poolFor(bytes: number): { pool: BufferPool; done: () => void } {
  if (bytes <= 2 * transferBuffers.size || largeReaders >= LARGE_READERS) return { pool: transferBuffers, done: () => {} };
  largeReaders++;
  return { pool: largeTransferBuffers, done: () => void largeReaders-- };
}

export async function pumpFile(path: string, start: number, end: number, sink: Writable): Promise<void> {
  if (sink.destroyed) throw new SinkGone();
  const { gone, release } = whenGone(sink);
  const handle = await open(path, 'r');
  const { pool, done } = poolFor(end - start + 1);
  const SIZE = pool.size;
  const buffers = [pool.take(), pool.take()];
  const flushed: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
  try {
    // A BigInt from the first byte: a number position stops being a small integer at 2 GiB, and
    // the optimized code of this loop and of fs's read was thrown away there and compiled again,
    // mid-transfer.
    let position = BigInt(start);
    const last = BigInt(end);
    const whole = BigInt(SIZE);
    for (let i = 0; position <= last; i ^= 1) {
      await Promise.race([flushed[i], gone]); // the socket is done with this buffer, or gone
      const left = last - position + 1n;
      const want = left < whole ? Number(left) : SIZE;
      const { bytesRead } = await handle.read(buffers[i]!, 0, want, position);
      if (bytesRead === 0) throw new Error(`${path} ended at ${position}, before ${end + 1}`);
      if (sink.destroyed) throw new SinkGone();
      position += BigInt(bytesRead);
      flushed[i] = write(sink, buffers[i]!.subarray(0, bytesRead));
    }
    await Promise.race([Promise.all(flushed), gone]);
    sink.end();
  } finally {
    release();
    // Each buffer goes back once the socket is done with it (a cut-off write settles when the
    // socket is destroyed); one whose write never settles is left to the collector.
    for (let i = 0; i < 2; i++) {
      const b = buffers[i]!;
      void flushed[i]!.then(() => pool.give(b), () => pool.give(b));
    }
    done();
    await handle.close();
  }
}

/**
 * Relays a network stream (an S3 GET) into `sink` with up to `window` bytes queued on the sink:
 * the next chunk is read while the socket still sends the last ones, and the queued chunks go out
 * in one writev, where a pipe would stop the source at the sink's 16 KiB mark and send chunk by
 * chunk. Memory is the window, whatever the object's size. Rejects with SinkGone when the
 * receiver goes first; the source is destroyed on every early exit.
 */
export async function relay(source: Readable, sink: Writable, window = 4 << 20): Promise<void> {
  if (sink.destroyed) throw new SinkGone();
  const { gone, release } = whenGone(sink);
  try {
    for await (const chunk of source) {
      if (sink.destroyed) throw new SinkGone();
      sink.write(chunk as Buffer);
      if (sink.writableLength > window) await Promise.race([once(sink, 'drain'), gone]);
    }
    await Promise.race([new Promise<void>((resolve) => sink.end(resolve)), gone]);
  } finally {
    release();
  }
}
