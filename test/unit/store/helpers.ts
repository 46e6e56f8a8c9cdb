/** Small helpers shared by the store tests. */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline } from 'node:stream/promises';
import type { BlobBackend, PendingWrite } from '../../../src/objects/store/backend.js';

export const MiB = 2 ** 20;

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export async function readAll(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/** `data` as a byte stream of `piece`-sized chunks, like a request body. */
export const body = (data: Buffer, piece = 64 * 1024) =>
  Readable.from(
    (function* () {
      for (let i = 0; i < data.length; i += piece) yield data.subarray(i, i + piece);
    })(),
    { objectMode: false },
  );

/** A body that sends `data` and then breaks off the way a client that went away does. */
export const brokenBody = (data: Buffer, piece = 64 * 1024) =>
  Readable.from(
    (async function* () {
      for (let i = 0; i < data.length; i += piece) yield data.subarray(i, i + piece);
      await sleep(50); // let the reader take what was sent first
      throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    })(),
    { objectMode: false },
  );

/** Streams `data` into a new write of its oid, leaving it uncommitted. */
export async function written(backend: BlobBackend, data: Buffer, oid = sha256(data)): Promise<PendingWrite> {
  const w = await backend.beginWrite(oid, data.length);
  await pipeline(body(data), w.stream);
  return w;
}
