/**
 * V8's `gc` function, reached without exposing it to the process: the flag that makes it exist
 * applies to contexts created afterwards, so one new context yields it, and the flag is cleared
 * again at once (contexts and worker threads made later, such as a page check's, do not get it).
 * Null on a runtime without it: memory is then reclaimed as V8 decides.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The options V8's gc extension reads. `last-resort` collects until nothing more is freed and shrinks the heap's spaces. */
export interface GcOptions {
  type: 'minor' | 'major';
  flavor?: 'regular' | 'last-resort';
}
export type V8Gc = (options: GcOptions) => void;

let found: V8Gc | null | undefined;

export function v8Gc(): V8Gc | null {
  if (found !== undefined) return found;
  try {
    const exposed = (globalThis as { gc?: V8Gc }).gc;
    if (exposed) return (found = exposed);
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as V8Gc;
    setFlagsFromString('--no-expose-gc');
    return (found = gc);
  } catch {
    return (found = null);
  }
}
