/**
 * A Writable into a file that copies what it is given into pooled buffers (buffer-pool.ts) and
 * writes each one whole, one write at a time. A request body arrives in fresh chunks of up to 64
 * KiB; written as they are, each would stay alive until the disk took it, long enough to outlive
 * a young-generation collection, so under many concurrent uploads tens of MB of them waited for
 * a full collection. Copied, a chunk is dead as soon as it is hashed and copied (freed at once
 * when the writer owns it, else by the next scavenge: transient-buffers.ts), and what an upload holds is two pooled buffers: one
 * filling, one being written. When both are busy the stream stops taking chunks, which pauses
 * the body (backpressure).
 *
 * A buffer goes back to the pool only once its write has settled. Destroyed (an aborted upload),
 * the stream takes nothing more, waits for the write in flight, writes what it had taken (unless
 * a write failed), then closes the file; callers go by the file's size after an fsync.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { transferBuffers, type BufferPool } from './buffer-pool.js';
import { freeNow } from '../../http/transient-buffers.js';

async function writeAll(handle: FileHandle, buffer: Buffer, length: number, position: number): Promise<void> {
  for (let done = 0; done < length; ) {
    const { bytesWritten } = await handle.write(buffer, done, length - done, position + done);
    done += bytesWritten;
  }
}

export interface FileWriterOptions {
  /** fs open flags: 'wx' for a new file, 'r+' to write into an existing one. */
  flags: string;
  mode?: number;
  /** The offset of the first byte written. */
  start?: number;
  pool?: BufferPool;
  /**
   * The chunks written are the writer's alone (a request's body, which nothing else holds, after
   * the hasher counted them as transient): each is freed as soon as it has been copied
   * (transient-buffers.ts, freeNow) rather than left for a collection. Off by default: a caller
   * may still hold what it writes.
   */
  ownsChunks?: boolean;
}

export function pooledFileWriter(path: string, opts: FileWriterOptions): Writable {
  const pool = opts.pool ?? transferBuffers;
  let handle: FileHandle | null = null;
  let position = opts.start ?? 0;
  let filling: Buffer | null = null;
  let filled = 0;
  /** The write in flight; null when none. */
  let inFlight: Promise<void> | null = null;
  let destroyed = false;

  function startWrite() {
    const buffer = filling!;
    const length = filled;
    const at = position;
    filling = null;
    filled = 0;
    position += length;
    const p: Promise<void> = writeAll(handle!, buffer, length, at).finally(() => {
      pool.give(buffer);
      if (inFlight === p) inFlight = null;
    });
    p.catch(() => {}); // observed by the next write, the final flush or destroy
    inFlight = p;
  }

  return new Writable({
    // No chunk queued while both buffers are busy: the body waits in the socket instead.
    highWaterMark: 0,
    construct(cb) {
      open(path, opts.flags, opts.mode).then((h) => {
        handle = h;
        cb();
      }, cb);
    },
    write(chunk: Buffer, _enc, cb) {
      let at = 0;
      // Synchronous unless a full buffer must wait for the write in flight: no promise per chunk.
      const step = (): void => {
        while (at < chunk.length) {
          if (destroyed) return;
          if (!filling) {
            filling = pool.take();
            filled = 0;
          }
          const n = chunk.copy(filling, filled, at);
          filled += n;
          at += n;
          if (filled === filling.length) {
            if (inFlight) {
              inFlight.then(() => {
                if (destroyed) return;
                startWrite();
                step();
              }, cb);
              return;
            }
            startWrite();
          }
        }
        if (opts.ownsChunks) freeNow(chunk, true);
        cb();
      };
      step();
    },
    final(cb) {
      (async () => {
        if (inFlight) await inFlight;
        if (filling && filled > 0) {
          startWrite();
          await inFlight;
        }
        const h = handle;
        handle = null;
        await h?.close();
      })().then(() => cb(), cb);
    },
    destroy(err, cb) {
      destroyed = true;
      const h = handle;
      handle = null;
      (async () => {
        let failed = false;
        if (inFlight) await inFlight.catch(() => (failed = true));
        // What was taken is written unless the file refused a write: a resumable upload cut off
        // mid-body keeps every byte that arrived, as when chunks were written as they came.
        if (filling && filled > 0 && h && !failed) await writeAll(h, filling, filled, position).catch(() => {});
        if (filling) pool.give(filling);
        filling = null;
        await h?.close();
      })().then(() => cb(err), (closeErr: Error) => cb(err ?? closeErr));
    },
  });
}
