/**
 * The compute pool: tools and scan post-processing hand it the work whose cost grows with its
 * input (tasks.ts), so that work never runs on the event loop. One pool for all of it, sized
 * from the cores (COMPUTE_THREADS), with a bounded queue (COMPUTE_QUEUE) and a time limit per
 * task (COMPUTE_TIMEOUT_MS). Its threads start on the first task and exit when idle, and run at
 * a lower scheduling priority than the event loop (COMPUTE_NICE), so that when they and the loop
 * want the same core, the loop's short requests go first.
 *
 * What stays on the event loop, and why, is said where it happens: work whose worst case under
 * the schemas' limits is well under ~10 ms of CPU (summaries of one page, the fleet's per-site
 * totals) is not worth a copy to a thread and back.
 */
import type { Config } from '../ground/config.js';
import { createWorkerPool, taskModule, WorkerPoolError, type RunOptions, type WorkerPool } from './worker-pool.js';
import type { ComputeKind, ComputeOutput, ComputeTask } from './tasks.js';

export type { ComputeKind, ComputeOutput, ComputeTask } from './tasks.js';

export interface ComputeRun<K extends ComputeKind> {
  value: ComputeOutput<K>;
  /** The worker thread that computed it (never 0, the main thread). */
  threadId: number;
}

export interface Compute {
  run<K extends ComputeKind>(task: Extract<ComputeTask, { kind: K }>, options?: RunOptions): Promise<ComputeRun<K>>;
  /** When a refused task (queue full) may succeed: the queue ahead of it at the recent pace. */
  retryAfterSeconds(): number;
  readonly threads: number;
  readonly pending: number;
  close(): Promise<void>;
}

export interface ComputeOptions {
  /** Another task module (tests: one that crashes on demand); tasks.js next to this module by default. */
  module?: URL;
}

type ComputeSettings = Pick<Config, 'compute'>;

export function createCompute(config: ComputeSettings, options: ComputeOptions = {}): Compute {
  const { threads, maxQueue, timeoutMs, nice } = config.compute;
  const pool: WorkerPool<ComputeTask, unknown> = createWorkerPool({
    module: taskModule(import.meta.url, 'tasks', options.module),
    threads,
    maxQueue,
    timeoutMs,
    niceIncrement: nice,
    name: 'compute',
  });
  return {
    async run<K extends ComputeKind>(task: Extract<ComputeTask, { kind: K }>, runOptions?: RunOptions) {
      const { value, threadId } = await pool.run(task, runOptions);
      return { value: value as ComputeOutput<K>, threadId };
    },
    retryAfterSeconds() {
      const perTaskMs = pool.meanRunMs || timeoutMs / 10;
      const ahead = pool.pending + 1;
      return Math.min(60, Math.max(1, Math.ceil((ahead * perTaskMs) / threads / 1000)));
    },
    get threads() { return pool.threads; },
    get pending() { return pool.pending; },
    close: () => pool.close(),
  };
}

export { WorkerPoolError as ComputeError };
