/**
 * A bounded pool of worker threads for work whose cost grows with its input, so that it never
 * runs on the server's event loop: page checks (axe-core on jsdom) and the compute behind tools
 * (fix drafting, diffs, report digests, brand scoring).
 *
 * Built on piscina, the field's worker pool, rather than on a hand-written one. It already does
 * what such a pool must do well: a task whose signal aborts is taken off the queue, or, when
 * running, its thread is terminated and replaced; a thread that dies fails its task and a new
 * one takes the next; threads beyond the first exit when idle. Its instance (and so every
 * thread) is made on the first task and dropped after idleTimeoutMs with nothing to do, so an
 * idle server holds no thread and its RSS does not grow. It loads the task module from
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
import { createRequire } from 'node:module';
import type { Piscina } from 'piscina';
import type { TaskMessage, TaskReply, TaskStarted } from './worker-task.js';

/**
 * piscina, loaded with the first pool that opens (its first task): an idle server that never
 * computes does not hold it. Synchronous (a CommonJS package) so opening a pool stays so.
 */
let piscinaClass: typeof Piscina | null = null;
const loadPiscina = () => (piscinaClass ??= (createRequire(import.meta.url)('piscina') as { Piscina: typeof Piscina }).Piscina);

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
  | 'closed'
  /** Its owner (an organization) already has as many tasks waiting or running as it may (see turns.ts). */
  | 'owner-busy'
  /** It waited for a thread longer than it may (see turns.ts). */
  | 'waited'
  /** Its caller withdrew it (a client that went away). */
  | 'withdrawn';

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
  /**
   * How much lower the threads' scheduling priority is than the event loop's (Linux: niceness
   * per thread, through piscina's optional @napi-rs/nice). 0 by default: a niced thread also
   * yields to every other process on the host, which page checks (beside Chromium) cannot afford.
   */
  niceIncrement?: number;
  /** What the pool is called in the metrics (pactum_worker_pool_tasks{pool}); null: its owner lists it. */
  name?: string | null;
  /** Threads kept started while the pool is in use (1 by default; the rest start when needed and exit when idle). */
  minThreads?: number;
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

type Listed = Pick<WorkerPool<unknown, unknown>, 'queued' | 'pending'>;

/** The open pools of this process by name, read by the metrics when scraped. */
export const livePools = new Map<string, Set<Listed>>();

/** The set of live pools called `name`, where a pool adds itself while open. */
export function listed(name: string): Set<Listed> {
  const set = livePools.get(name) ?? new Set<Listed>();
  livePools.set(name, set);
  return set;
}

const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const RUN_TIME_SAMPLES = 20;

export function createWorkerPool<In, Out>(options: WorkerPoolOptions): WorkerPool<In, Out> {
  if (!Number.isInteger(options.threads) || options.threads < 1) throw new RangeError(`A worker pool needs at least one thread (got ${options.threads})`);
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const jobs = new Map<number, Job>();
  const runTimes: number[] = [];
  let nextKey = 1;
  let closed = false;
  /** Made on the first task and dropped when idle: no thread exists before the work does, or long after. */
  let piscina: Piscina<TaskMessage<In>, TaskReply<Out>> | null = null;
  let idle: NodeJS.Timeout | null = null;

  function open(): Piscina<TaskMessage<In>, TaskReply<Out>> {
    if (idle) clearTimeout(idle);
    idle = null;
    if (piscina) return piscina;
    const Pool = loadPiscina();
    piscina = new Pool<TaskMessage<In>, TaskReply<Out>>({
      filename: options.module.filename,
      workerData: options.module.workerData,
      execArgv: [],
      // At least one thread is kept (and replaced when terminated or dead), so queued tasks always
      // have one to go to: with none, piscina starts a thread only when a task is submitted.
      minThreads: Math.min(options.minThreads ?? 1, options.threads),
      maxThreads: options.threads,
      // Threads beyond the first exit after this long idle; the first goes with the instance (below).
      idleTimeout: idleTimeoutMs,
      niceIncrement: options.niceIncrement ?? 0,
      // Answers come by message: a thread that waited with Atomics between tasks would hold timers
      // a task left (jsdom's) frozen, and our tasks are long enough that the saving does not matter.
      atomics: 'disabled',
    });
    piscina.on('message', onStarted);
    // A thread that fails to start: its tasks are failed by piscina as well; nothing more to do here.
    piscina.on('error', () => {});
    return piscina;
  }

  /** Once nothing is pending for idleTimeoutMs, the instance and its last thread go. */
  function dropWhenIdle() {
    if (jobs.size > 0 || !piscina || idle) return;
    idle = setTimeout(() => {
      idle = null;
      if (jobs.size > 0 || !piscina) return;
      const dropped = piscina;
      piscina = null;
      void dropped.destroy();
    }, idleTimeoutMs);
    idle.unref();
  }

  function onStarted(message: TaskStarted) {
    const job = typeof message?.started === 'number' ? jobs.get(message.started) : undefined;
    if (!job || job.settled || job.started !== null) return;
    job.started = performance.now();
    job.timer = setTimeout(() => {
      job.outcome = new WorkerPoolError('timeout', `the task took longer than ${duration(job.timeoutMs)}`);
      job.controller.abort(job.outcome);
    }, job.timeoutMs);
  }

  function record(ms: number) {
    runTimes.push(ms);
    if (runTimes.length > RUN_TIME_SAMPLES) runTimes.shift();
  }

  async function run(input: In, runOptions: RunOptions = {}): Promise<Ran<Out>> {
    if (closed) throw new WorkerPoolError('closed', 'the worker pool is shut down');
    const { signal } = runOptions;
    signal?.throwIfAborted();
    const waiting = piscina?.queueSize ?? 0;
    if (!runOptions.background && waiting >= options.maxQueue) throw new WorkerPoolError('queue-full', `${waiting} tasks are already waiting`);
    const pool = open();
    const key = nextKey++;
    const job: Job = { controller: new AbortController(), outcome: null, timer: null, started: null, timeoutMs: runOptions.timeoutMs ?? options.timeoutMs, settled: false };
    const onAbort = () => {
      job.outcome = signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason));
      job.controller.abort(job.outcome);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    jobs.set(key, job);
    try {
      const reply = await pool.run({ key, input }, { signal: job.controller.signal });
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
      dropWhenIdle();
    }
  }

  const live = options.name === null ? new Set<WorkerPool<In, Out>>() : listed(options.name ?? 'worker');
  const self: WorkerPool<In, Out> = {
    run,
    get queued() { return piscina?.queueSize ?? 0; },
    get pending() { return jobs.size; },
    get threads() { return piscina?.threads.length ?? 0; },
    get meanRunMs() { return runTimes.length ? runTimes.reduce((a, b) => a + b, 0) / runTimes.length : 0; },
    async close() {
      closed = true;
      live.delete(self);
      if (idle) clearTimeout(idle);
      await piscina?.destroy();
      piscina = null;
    },
  };
  live.add(self);
  return self;
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
