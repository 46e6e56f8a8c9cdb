/**
 * V8 grows its young generation (up to 2 × 16 MiB) when many objects survive collections, as
 * they do while modules load and migrations run; once grown it stays grown, and resident, though
 * an idle server needs a fraction of it. So the young generation may not grow while the process
 * starts (imported first by main.ts, before any other module loads), and `serve` lets it grow
 * again once it listens, for the load it then meets (restoreYoungGenerationGrowth).
 * About 12 MB less resident at idle (scripts/bench/objects.ts prints the idle RSS).
 */
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');

/** V8's default factor: the young generation doubles when it must. */
export function restoreYoungGenerationGrowth() {
  setFlagsFromString('--semi-space-growth-factor=2');
}
