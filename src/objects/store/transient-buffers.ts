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
 * The collection is V8's `gc` function, reached without exposing it to the process: the flag
 * that makes it exist applies to contexts created afterwards, so one new context yields it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Bytes of transient buffers between two young-generation collections. */
export const PACE = 4 << 20;

type Collect = () => void;

function v8MinorGc(): Collect | null {
  try {
    const exposed = (globalThis as { gc?: (o?: object) => void }).gc;
    if (exposed) return () => exposed({ type: 'minor' });
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (o?: object) => void;
    // Flags are process-wide: contexts and worker threads made later (a page check's) do not get it.
    setFlagsFromString('--no-expose-gc');
    return () => gc({ type: 'minor' });
  } catch {
    return null; // a runtime without it: memory is reclaimed as V8 decides
  }
}

let collect: Collect | null | undefined;
let since = 0;

/** Counts `bytes` of buffers that die once handled; runs a young-generation collection every PACE bytes. */
export function transientBytes(bytes: number): void {
  since += bytes;
  if (since < PACE) return;
  since = 0;
  if (collect === undefined) collect = v8MinorGc();
  collect?.();
}

/** Replaces the collection (tests); returns a function restoring V8's. */
export function setCollector(c: Collect | null): () => void {
  const before = collect;
  collect = c;
  since = 0;
  return () => {
    collect = before;
    since = 0;
  };
}
