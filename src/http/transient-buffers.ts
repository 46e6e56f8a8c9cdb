/**
 * Frees the memory of request bodies' buffers soon after they die, rather than tens of MB later.
 *
 * Node's HTTP parser hands each piece of a body over in a fresh buffer (a copy of one socket
 * read, up to 64 KiB) whose bytes live outside the JS heap, and an S3 response's chunks arrive
 * the same way. Such a buffer is dead once it has been hashed and written, but its memory is
 * returned only when V8 collects its small wrapper object: a young-generation collection comes
 * only after the JS heap itself has allocated the young generation's size (a GiB of body costs
 * the heap little), a full one only once memory outside the heap has grown by ~64 MiB since the
 * last. An upload therefore held 65-85 MB more resident memory than its buffers need, and malloc
 * kept those pages afterwards.
 *
 * So the bytes of such buffers are counted here, process-wide, and after every PACE bytes a
 * young-generation collection (a scavenge) runs: with almost nothing to keep it takes a fraction
 * of a millisecond, and every buffer that died since the last one goes with it. A buffer still
 * queued for the disk survives one scavenge and is freed by the next; PACE is several times
 * the bytes a transfer queues.
 *
 * Many uploads at once queue more: each holds a chunk in hand and up to a socket read in its
 * request's buffer, and with 32 of them that is several MiB waiting, often for the disk. A
 * chunk that is still waiting at two collections is promoted to the old generation, and is then
 * freed only by a full collection, which V8 starts once tens of MiB more of such memory exist:
 * at a fixed PACE, 32 concurrent clients peaked at idle + 71-107 MB, against + 63-79 with the
 * pace below (and + 56-64 once transfer buffers were halved, buffer-pool.ts; 20-second runs).
 * So the pace grows with the number of transfers that gave bytes since the last collection
 * (PACE_PER_HOLDER each, at least PACE, at most MAX_PACE): a chunk waits behind every other
 * transfer's chunks and still dies young. `scripts/bench/concurrency.ts` prints the peak.
 *
 * Better still is not to wait for a collection at all: a buffer its holder has alone can be
 * freed outright (freeNow), as the filesystem backend does with an upload's chunks once copied
 * and the JSON reader once decoded. The paced collections are for the rest: chunks handed on to
 * the S3 client, the first read of a refused body.
 *
 * The collection is V8's `gc` function, reached without exposing it to the process (ground/v8-gc.ts).
 */
import { v8Gc } from '../ground/v8-gc.js';

/** Bytes of transient buffers between two young-generation collections, at least. */
export const PACE = 4 << 20;
/** More bytes between two collections per transfer that gave bytes since the last one. */
export const PACE_PER_HOLDER = 512 << 10;
/** Transient bytes between two collections, at most: the garbage the process may hold for them. */
export const MAX_PACE = 32 << 20;

type Collect = () => void;

function v8MinorGc(): Collect | null {
  const gc = v8Gc();
  return gc && (() => gc({ type: 'minor' }));
}

let collect: Collect | null | undefined;
let since = 0;
/**
 * The transfers that gave bytes in this interval (each marked with the interval's number, held
 * weakly: a flood of small uploads leaves nothing behind), their count, the count of the
 * interval before, and the pace they make.
 */
let interval = 0;
const lastGave = new WeakMap<object, number>();
let holders = 0;
let holdersBefore = 0;
let pace = PACE;

/** Bytes between two collections, for this many transfers at once. */
export const paceFor = (transfers: number) => Math.min(MAX_PACE, Math.max(PACE, transfers * PACE_PER_HOLDER));

/**
 * Counts `bytes` of buffers that die once handled, given by `holder` (an upload; none for a
 * refused body), and runs a young-generation collection every paceFor(transfers) bytes.
 */
export function transientBytes(bytes: number, holder?: object): void {
  since += bytes;
  if (holder && lastGave.get(holder) !== interval) {
    lastGave.set(holder, interval);
    if (++holders > holdersBefore) pace = paceFor(holders);
  }
  if (since < pace) return;
  since = 0;
  interval++;
  holdersBefore = holders;
  holders = 0;
  pace = paceFor(holdersBefore);
  if (collect === undefined) collect = v8MinorGc();
  collect?.();
}

type Detachable = ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };

/**
 * Smaller chunks are left to the collector: malloc reuses their memory soon anyway, and a
 * request with a small body (an MCP call) then pays nothing for a detach.
 */
export const FREED_FROM = 8 << 10;

/**
 * Frees `chunk`'s memory now instead of at a collection: for a buffer its caller holds alone and
 * is done with. It works when the chunk spans a whole ArrayBuffer of its own, as every piece of a
 * request body does (Node's HTTP parser copies each into a fresh one) and a file read's chunk
 * does: detaching that ArrayBuffer (`transfer(0)`) hands its bytes back to malloc at once, and
 * the chunk reads as empty afterwards. Anything else (a slice of a larger buffer, a piece of
 * Node's shared pool, a chunk under FREED_FROM) is left to the collector. `counted`: the chunk
 * went through transientBytes (an upload's chunk, which the hasher counts); its bytes no longer
 * wait for a collection, so they leave the count, and uploads whose chunks are freed this way need
 * no paced collections at all. A chunk never counted (a JSON body's) must not take its bytes off
 * the count, or it would put off the collection that other transfers' buffers wait for.
 */
export function freeNow(chunk: Buffer, counted = false): boolean {
  if (chunk.byteLength < FREED_FROM || chunk.byteOffset !== 0) return false;
  const whole = chunk.buffer as Detachable;
  if (chunk.byteLength !== whole.byteLength || typeof whole.transfer !== 'function') return false;
  const bytes = chunk.byteLength; // 0 once detached
  try {
    whole.transfer(0);
  } catch {
    return false; // not detachable (a SharedArrayBuffer, WebAssembly memory): the collector's
  }
  if (counted) since = Math.max(0, since - bytes);
  return true;
}

/** Replaces the collection (tests); returns a function restoring V8's. */
export function setCollector(c: Collect | null): () => void {
  const before = collect;
  collect = c;
  const reset = () => {
    since = 0;
    interval++;
    holders = 0;
    holdersBefore = 0;
    pace = PACE;
  };
  reset();
  return () => {
    collect = before;
    reset();
  };
}
