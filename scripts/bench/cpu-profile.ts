/**
 * V8 CPU profiles (`node --cpu-prof`) read sample by sample: each sample's frame, the frames that
 * called it, when it was taken and the time it stands for. profile-top.ts sums them by area and
 * function; observability.ts sums those of the code that exists only for metrics.
 */
import { readFileSync } from 'node:fs';

export interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber?: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number }

export interface Sample {
  frame: CallFrame;
  /** The frames that called it, innermost first. */
  callers: CallFrame[];
  /** When it was taken, in µs of CLOCK_MONOTONIC: the clock of monotonicMicros() in any process. */
  at: number;
  /** The time it stands for, in µs. */
  us: number;
}

/** Now, on the clock the profiles' timestamps use (V8's TimeTicks and libuv's hrtime both read CLOCK_MONOTONIC). */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

export const isIdle = (frame: CallFrame) => frame.functionName === '(idle)';

/** The samples of one profile file, in the order they were taken. */
export function samplesOf(file: string): Sample[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // A profile has a few thousand nodes and hundreds of thousands of samples: each node's callers once.
  const callers = new Map<number, CallFrame[]>();
  const callersOf = (id: number): CallFrame[] => {
    let known = callers.get(id);
    if (!known) {
      const p = parent.get(id);
      known = p === undefined ? [] : [byId.get(p)!.callFrame, ...callersOf(p)];
      callers.set(id, known);
    }
    return known;
  };
  let at = profile.startTime;
  return profile.samples.map((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    return { frame: byId.get(id)!.callFrame, callers: callersOf(id), at, us };
  });
}
