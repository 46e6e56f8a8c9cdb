/**
 * The compute pool: tools and scan post-processing hand it the work whose cost grows with its
 * input (tasks.ts), so that work never runs on the event loop. One pool for all of it, sized
 * from the cores (COMPUTE_THREADS), with a time limit per task (COMPUTE_TIMEOUT_MS). Its threads
 * start on the first task and exit when idle, and run at a lower scheduling priority than the
 * event loop (COMPUTE_NICE), so that when they and the loop want the same core, the loop's short
 * requests go first.
 *
 * Tasks are run for an owner, the caller's organization, and owners take turns for the threads
 * (turns.ts): one organization runs at most COMPUTE_MAX_RUNNING_PER_ORG tasks at once (by default
 * one thread fewer than there are, so another's report page never waits behind its drafts), has at
 * most COMPUTE_MAX_QUEUED_PER_ORG more waiting, and all of them together at most COMPUTE_QUEUE. A
 * task waits at most COMPUTE_WAIT_MS for its turn, and a caller that goes away withdraws it.
 *
 * What stays on the event loop, and why, is said where it happens: work whose worst case under
 * the schemas' limits is well under ~10 ms of CPU (summaries of one page, the fleet's per-site
 * totals) is not worth a copy to a thread and back.
 */
import type { Config } from '../ground/config.js';
import { ComputeTurns } from './turns.js';
import { createWorkerPool, listed, taskModule, WorkerPoolError, type RunOptions, type WorkerPool } from './worker-pool.js';
import type { ComputeKind, ComputeOutput, ComputeTask } from './tasks.js';

export type { ComputeKind, ComputeOutput, ComputeTask } from './tasks.js';

export interface ComputeRun<K extends ComputeKind> {
  value: ComputeOutput<K>;
  /** The worker thread that computed it (never 0, the main thread). */
  threadId: number;
}

export interface ComputeRunOptions extends RunOptions {
  /**
   * Whose task it is (an organization id): owners take turns for the threads, each within its caps.
   * The signal (RunOptions) withdraws the task, waiting or running, with 'withdrawn'.
   */
  owner?: string;
}

export interface Compute {
  run<K extends ComputeKind>(task: Extract<ComputeTask, { kind: K }>, options?: ComputeRunOptions): Promise<ComputeRun<K>>;
  /** When a refused task may succeed: the tasks ahead of it (of `owner`, when its own cap refused it) at the recent pace. */
  retryAfterSeconds(owner?: string): number;
  readonly threads: number;
  /** Tasks waiting for their turn or running. */
  readonly pending: number;
  close(): Promise<void>;
}

export interface ComputeOptions {
  /** Another task module (tests: one that crashes on demand); tasks.js next to this module by default. */
  module?: URL;
}

type ComputeSettings = Pick<Config, 'compute'>;

export function createCompute(config: ComputeSettings, options: ComputeOptions = {}): Compute {
  const { threads, maxQueue, timeoutMs, nice, waitMs, maxRunningPerOrg, maxQueuedPerOrg } = config.compute;
  // The turns below decide what runs; the pool never queues more than a replaced thread's start.
  const pool: WorkerPool<ComputeTask, unknown> = createWorkerPool({
    module: taskModule(import.meta.url, 'tasks', options.module),
    threads,
    maxQueue: Infinity,
    timeoutMs,
    niceIncrement: nice,
    name: null,
    // Every thread ready while the pool is in use: an organization's turn on the thread the others
    // leave free must not wait for that thread to start.
    minThreads: threads,
  });
  const turns = new ComputeTurns({ threads, maxQueue, maxRunningPerOwner: maxRunningPerOrg, maxQueuedPerOwner: maxQueuedPerOrg, waitMs });
  // In the metrics, what waits is what waits for a turn.
  const view = { get queued() { return turns.queued; }, get pending() { return turns.pending; } };
  const live = listed('compute');
  live.add(view);
  const closing = new AbortController();

  return {
    async run<K extends ComputeKind>(task: Extract<ComputeTask, { kind: K }>, runOptions: ComputeRunOptions = {}) {
      const { owner = '', signal, ...rest } = runOptions;
      if (closing.signal.aborted) throw new WorkerPoolError('closed', 'the worker pool is shut down');
      // One signal for the wait and the run: the caller withdrawing, or the pool closing.
      const ended = new AbortController();
      const withdraw = () => ended.abort(new WorkerPoolError('withdrawn', 'its caller went away'));
      const close = () => ended.abort(closing.signal.reason);
      if (signal?.aborted) withdraw();
      signal?.addEventListener('abort', withdraw, { once: true });
      closing.signal.addEventListener('abort', close, { once: true });
      try {
        const release = await turns.acquire(owner, { signal: ended.signal, background: rest.background });
        try {
          const { value, threadId } = await pool.run(task, { ...rest, signal: ended.signal });
          return { value: value as ComputeOutput<K>, threadId };
        } finally {
          release();
        }
      } finally {
        signal?.removeEventListener('abort', withdraw);
        closing.signal.removeEventListener('abort', close);
      }
    },
    retryAfterSeconds(owner?: string) {
      const perTaskMs = pool.meanRunMs || timeoutMs / 10;
      const ahead = owner === undefined ? (turns.pending + 1) / threads : (turns.pendingOf(owner) + 1) / maxRunningPerOrg;
      return Math.min(60, Math.max(1, Math.ceil((ahead * perTaskMs) / 1000)));
    },
    get threads() { return pool.threads; },
    get pending() { return turns.pending; },
    async close() {
      live.delete(view);
      closing.abort(new WorkerPoolError('closed', 'the worker pool was shut down before the task ended'));
      await pool.close();
    },
  };
}

export { WorkerPoolError as ComputeError };
