/**
 * Sends a range of a file to a writable (an HTTP response) through two reused buffers. A read stream would
 * allocate a fresh buffer per read: at GiB scale that is a GiB of garbage that V8 collects only
 * when tens of MiB of it have piled up, and resident memory follows. Here memory is two buffers,
 * whatever the size, and a slow client slows the reads (each buffer is reused only once the
 * socket has taken its bytes).
 */
import { open } from 'node:fs/promises';
import type { Writable } from 'node:stream';

const SIZE = 256 * 1024;

export async function pumpFile(path: string, start: number, end: number, res: Writable): Promise<void> {
  const handle = await open(path, 'r');
  const buffers = [Buffer.allocUnsafe(SIZE), Buffer.allocUnsafe(SIZE)];
  const flushed: (Promise<void> | null)[] = [null, null];
  try {
    let position = start;
    for (let i = 0; position <= end; i ^= 1) {
      if (res.destroyed) return;
      await flushed[i]; // the socket is done with this buffer
      const want = Math.min(SIZE, end - position + 1);
      const { bytesRead } = await handle.read(buffers[i]!, 0, want, position);
      if (bytesRead === 0) throw new Error(`${path} ended at ${position}, before ${end + 1}`);
      position += bytesRead;
      flushed[i] = new Promise<void>((resolve, reject) => res.write(buffers[i]!.subarray(0, bytesRead), (err) => (err ? reject(err) : resolve())));
    }
    await Promise.all(flushed);
    res.end();
  } finally {
    await handle.close();
  }
}
