/**
 * The young generation's size. V8 grows its young generation when many objects survive its
 * collections (doubling each time, up to 2 × 64 MiB on a large machine), and once grown it stays
 * grown and resident. Two moments grow it for nothing:
 *   - while the process starts (modules load, migrations run), though an idle server needs a
 *     fraction of it: so it may not grow until `serve` listens;
 *   - under a flood of cheap requests (anonymous bodies refused before they are read, a burst of
 *     small calls): the refusals cost little each, but their short-lived garbage made the young
 *     generation grow by 60-70 MB, memory a shared host did not get back.
 * V8's ceiling (`--max-semi-space-size`) can only be set when the process starts, which a launcher
 * may not do; its growth factor can be changed at any time. So once the server listens the young
 * generation grows as V8 decides, and after each collection it is watched: once one more doubling
 * would pass HEAP_YOUNG_GENERATION_MB, growing stops. A larger setting trades memory for fewer
 * collections under heavy load (scripts/bench/fairness.ts and mcp.ts print both sides).
 *
 * Starting leaves garbage behind (parsed specs, module compilation, migrations) and a young
 * generation of 8 MiB that start-up filled: V8's memory reducer gives it back only after several
 * seconds without work. One collection of the last-resort kind, as the server starts listening,
 * gives it back at once (~10 MB; `scripts/bench/objects.ts` prints the idle figure): it shrinks
 * the young generation to its least, from which it grows again under load as above.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { v8Gc } from '../ground/v8-gc.js';

setFlagsFromString('--semi-space-growth-factor=1');

const MiB = 1024 * 1024;
const youngGeneration = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

/**
 * Gives back what starting left behind, then lets the young generation grow again, up to
 * `limitMb` MiB (both semi-spaces). Called once the server listens. Returns a function that stops watching (for tests).
 */
export function governYoungGeneration(limitMb: number): () => void {
  v8Gc()?.({ type: 'major', flavor: 'last-resort' });
  const limit = limitMb * MiB;
  // Already at or past the limit (a small limit): it stays as it is.
  if (youngGeneration() * 2 > limit) return () => {};
  setFlagsFromString('--semi-space-growth-factor=2');
  // A collection's entry arrives after it; one check per collection costs a few microseconds.
  const observer = new PerformanceObserver(() => {
    if (youngGeneration() * 2 <= limit) return;
    setFlagsFromString('--semi-space-growth-factor=1');
    observer.disconnect();
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
