/**
 * Buffers for moving object bytes between sockets and files, reused across transfers.
 *
 * A transfer that allocated its own buffers (or wrote the body's own chunks) leaves garbage at
 * the rate it moves bytes, and V8 returns that memory late (see transient-buffers.ts): with a few
 * dozen transfers at once, tens of MB. A transfer takes a buffer here, fills it, writes it, and
 * gives it back only once the write that used it has settled: a buffer is never handed out while
 * a write still reads from it. Up to `keep` free buffers are kept (enough for the transfers a
 * server runs at once); any more are left to the collector.
 */
export interface BufferPool {
  readonly size: number;
  take(): Buffer;
  /** Hands `buffer` back; only once nothing reads from or writes to it any more. */
  give(buffer: Buffer): void;
  /** Free buffers held now. */
  readonly free: number;
}

export function bufferPool(size: number, keep: number): BufferPool {
  const free: Buffer[] = [];
  const out = new WeakSet<Buffer>();
  return {
    size,
    take() {
      const b = free.pop() ?? Buffer.allocUnsafeSlow(size);
      out.add(b);
      return b;
    },
    give(b) {
      // Only a buffer this pool handed out, and only once: a double give would hand one buffer to two transfers.
      if (!out.delete(b)) throw new Error('this buffer is not out of this pool');
      if (free.length < keep) free.push(b);
    },
    get free() {
      return free.length;
    },
  };
}

/** Bytes per file read or write of an object transfer. */
export const TRANSFER_BUFFER = 128 * 1024;

/** The pool object transfers share: two buffers per transfer in flight, for up to 32 transfers. */
export const transferBuffers = bufferPool(TRANSFER_BUFFER, 64);

/**
 * Bytes per file read of a download while few run at once: each read is a round trip to libuv's
 * thread pool, and with 128 KiB reads those round trips, not the disk or the socket, set the pace
 * (a 1 GiB download from the page cache: 1.8-1.9 GB/s, against 3.4-4.3 with 512 KiB reads).
 */
export const LARGE_TRANSFER_BUFFER = 512 * 1024;
/** Downloads that may read with large buffers at once; any more use transferBuffers. */
export const LARGE_READERS = 4;
/** Two buffers per large reader; at most eight are kept once they are given back (4 MiB). */
export const largeTransferBuffers = bufferPool(LARGE_TRANSFER_BUFFER, 2 * LARGE_READERS);
