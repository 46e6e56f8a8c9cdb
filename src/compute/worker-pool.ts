/**
 * A bounded pool of worker threads for work whose cost grows with its input, so that it never
 * runs on the server's event loop: page checks (axe-core on jsdom) and the compute behind tools
 * (fix drafting, diffs, report digests, brand scoring).
 *
 * Built on piscina, the field's worker pool, rather than on a hand-written one. It already does
 * what such a pool must do well: threads start lazily (minThreads 0: an idle server holds none,
 * so idle RSS does not grow) and an idle one exits after idleTimeoutMs; a task whose signal
 * aborts is taken off the queue, or, when running, its thread is terminated and replaced; a
 * thread that dies fails its task and a new one takes the next. It loads the task module from
 * dist as plain JavaScript and, run from sources (tsx, vitest), through a small bootstrap that
 * registers tsx's loader in the thread first (tsx-worker.mjs).
 *
 * What this module adds on top, the same for every pool:
 * - the time limit counts from when a thread starts the task (the task module tells, see
 *   worker-task.ts), so neither queueing nor a thread's start-up eats into it; past it the task is
 *   abandoned and its thread replaced (synchronous code cannot be interrupted any other way);
 * - a bounded queue: past maxQueue waiting tasks, run() fails at once with 'queue-full';
 * - one error type with a code per way a task can fail, so callers answer each properly.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { TaskMessage, TaskReply, TaskStarted } from './worker-task.js';

export type WorkerPoolErrorCode =
  /** More tasks wait than the pool queues. */
  | 'queue-full'
  /** The task ran past its time limit; its thread was replaced. */
  | 'timeout'
  /** The thread died while running the task (an uncaught error, process.exit, out of memory). */
  | 'crashed'
  /** The task threw; the thread is fine. */
  | 'failed'
  /** The pool was closed before the task ended. */
  | 'closed';

export class WorkerPoolError extends Error {
  constructor(readonly code: WorkerPoolErrorCode, message: string) {
    super(message);
    this.name = 'WorkerPoolError';
  }
}

export interface WorkerPoolOptions {
  /** The task module (its default export made with workerTask); see taskModule(). */
  module: TaskModule;
  /** Most threads at once. */
  threads: number;
  /** Most tasks waiting for a thread; Infinity: no bound (the caller bounds the work it submits). */
  maxQueue: number;
  /** A task still running this long after its thread started it is abandoned. */
  timeoutMs: number;
  /** An idle thread exits after this long (its memory goes with it). */
  idleTimeoutMs?: number;
}

export interface RunOptions {
  /** Withdraws a waiting task, or abandons a running one (its thread is replaced); rejects with the signal's reason. */
  signal?: AbortSignal;
  /** This task's time limit instead of the pool's. */
  timeoutMs?: number;
  /** Background work (what follows a scan) waits however long the queue is: its callers bound how much they submit. */
  background?: boolean;
}

/** A task's answer and the thread that computed it. */
export interface Ran<Out> {
  value: Out;
  threadId: number;
}

export interface WorkerPool<In, Out> {
  run(input: In, options?: RunOptions): Promise<Ran<Out>>;
  /** Tasks waiting for a thread. */
  readonly queued: number;
  /** Tasks submitted and not yet settled (waiting or running). */
  readonly pending: number;
  /** Threads alive now (0 until the first task). */
  readonly threads: number;
  /** Mean run time of the last tasks, in ms (0 before any): what a retry estimate is based on. */
  readonly meanRunMs: number;
  /** Fails waiting and running tasks with 'closed' and stops every thread. */
  close(): Promise<void>;
}

export interface TaskModule {
  filename: string;
  /** What the thread is given: from sources, the .ts module that tsx-worker.mjs loads. */
  workerData: { taskModule?: string };
}

/** A task as tracked here: piscina's own abort is how a time limit or the caller's signal reaches it. */
interface Job {
  controller: AbortController;
  /** Why it was aborted: what the caller gets instead of piscina's AbortError. */
  outcome: Error | null;
  timer: NodeJS.Timeout | null;
  started: number | null;
  timeoutMs: number;
  settled: boolean;
}

const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const RUN_TIME_SAMPLES = 20;

export function createWorkerPool<In, Out>(options: WorkerPoolOptions): WorkerPool<In, Out> {
  if (!Number.isInteger(options.threads) || options.threads < 1) throw new RangeError(`A worker pool needs at least one thread (got ${options.threads})`);
  const piscina = new Piscina<TaskMessage<In>, TaskReply<Out>>({
    filename: options.module.filename,
    workerData: options.module.workerData,
    execArgv: [],
    minThreads: 0,
    maxThreads: options.threads,
    idleTimeout: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    // Answers come by message: a thread that waited with Atomics between tasks would hold timers
    // a task left (jsdom's) frozen, and our tasks are long enough that the saving does not matter.
    atomics: 'disabled',
  });
  const jobs = new Map<number, Job>();
  const runTimes: number[] = [];
  let nextKey = 1;
  let closed = false;

  piscina.on('message', (message: TaskStarted) => {
    const job = typeof message?.started === 'number' ? jobs.get(message.started) : undefined;
    if (!job || job.settled || job.started !== null) return;
    job.started = performance.now();
    job.timer = setTimeout(() => {
      job.outcome = new WorkerPoolError('timeout', `the task took longer than ${duration(job.timeoutMs)}`);
      job.controller.abort(job.outcome);
    }, job.timeoutMs);
  });
  // A thread that fails to start: its tasks are failed by piscina as well; nothing more to do here.
  piscina.on('error', () => {});

  function record(ms: number) {
    runTimes.push(ms);
    if (runTimes.length > RUN_TIME_SAMPLES) runTimes.shift();
  }

  async function run(input: In, runOptions: RunOptions = {}): Promise<Ran<Out>> {
    if (closed) throw new WorkerPoolError('closed', 'the worker pool is shut down');
    const { signal } = runOptions;
    signal?.throwIfAborted();
    if (!runOptions.background && piscina.queueSize >= options.maxQueue) throw new WorkerPoolError('queue-full', `${piscina.queueSize} tasks are already waiting`);
    const key = nextKey++;
    const job: Job = { controller: new AbortController(), outcome: null, timer: null, started: null, timeoutMs: runOptions.timeoutMs ?? options.timeoutMs, settled: false };
    const onAbort = () => {
      job.outcome = signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason));
      job.controller.abort(job.outcome);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    jobs.set(key, job);
    try {
      const reply = await piscina.run({ key, input }, { signal: job.controller.signal });
      if (job.started !== null) record(performance.now() - job.started);
      if (!reply.ok) throw new WorkerPoolError('failed', reply.error);
      return { value: reply.value, threadId: reply.threadId };
    } catch (err) {
      if (err instanceof WorkerPoolError) throw err;
      if (job.outcome) throw job.outcome;
      if (closed) throw new WorkerPoolError('closed', 'the worker pool was shut down before the task ended');
      // The task module answers every error it catches, so anything else is the thread dying.
      throw new WorkerPoolError('crashed', (err as Error)?.message ?? String(err));
    } finally {
      job.settled = true;
      if (job.timer) clearTimeout(job.timer);
      signal?.removeEventListener('abort', onAbort);
      jobs.delete(key);
    }
  }

  return {
    run,
    get queued() { return piscina.queueSize; },
    get pending() { return jobs.size; },
    get threads() { return piscina.threads.length; },
    get meanRunMs() { return runTimes.length ? runTimes.reduce((a, b) => a + b, 0) / runTimes.length : 0; },
    async close() {
      closed = true;
      await piscina.destroy();
    },
  };
}

function duration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/**
 * The task module `name` next to `base` (a module's import.meta.url): name.js as built into
 * dist/, or, run from sources, name.ts loaded through tsx (tsx-worker.mjs). `file` overrides it (tests).
 */
export function taskModule(base: string | URL, name: string, file?: URL): TaskModule {
  const candidates = file ? [file] : [new URL(`./${name}.js`, base), new URL(`./${name}.ts`, base)];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new Error(`Worker module not found at ${candidates.map((c) => c.pathname).join(' or ')}`);
  if (!found.pathname.endsWith('.ts')) return { filename: fileURLToPath(found), workerData: {} };
  return { filename: fileURLToPath(new URL('./tsx-worker.mjs', import.meta.url)), workerData: { taskModule: found.href } };
}
