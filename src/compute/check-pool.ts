/**
 * The page checker's threads (domain/scan/check-pool.ts says what it does): checkPage (axe-core
 * on jsdom) and style statistics run in a worker pool (worker-pool.ts, the same implementation as
 * the tools' compute), so axe's long
 * synchronous runs never block the server's event loop. Jobs queue while every thread is busy,
 * owners (orgs) taking turns for the threads (fair-queue.ts) rather than first come, first served
 * (the scan runner bounds how many it submits, so the queue is not bounded here); a thread that
 * crashes, or runs past the job deadline, is dropped, its job fails with a clear error, and a
 * fresh thread takes its place for the next job.
 */
import { existsSync } from 'node:fs';
import { createWorkerPool, listed, taskModule, WorkerPoolError, type WorkerPool } from './worker-pool.js';
import { CheckPoolError, type CheckPool } from '../domain/scan/check-pool.js';
import type { CheckedPage, Issue, StyleStats, WcagStandard } from '../domain/scan/types.js';
import type { CheckRequest, JobOutput } from '../domain/scan/worker-protocol.js';
import { FairSemaphore } from '../domain/scan/fair-queue.js';

export interface CheckPoolOptions {
  /** The worker's task module; by default check-task.js next to this module (check-task.ts when running from sources). */
  workerFile?: URL;
  /** A check still running after this long is abandoned and its worker replaced. Default 120000. */
  jobTimeoutMs?: number;
}

const DEFAULT_JOB_TIMEOUT_MS = 120_000;
/** A thread left idle this long exits; the next job starts a new one (about a second to load jsdom and axe-core). */
const IDLE_TIMEOUT_MS = 5 * 60_000;

export function createCheckPool(size: number, options: CheckPoolOptions = {}): CheckPool {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`A check pool needs at least one worker (got ${size})`);
  if (options.workerFile && !existsSync(options.workerFile)) throw new Error(`Scan worker not found at ${options.workerFile.pathname}`);
  const jobTimeoutMs = options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  const pool: WorkerPool<CheckRequest, JobOutput> = createWorkerPool({
    module: taskModule(import.meta.url, 'check-task', options.workerFile),
    threads: size,
    maxQueue: Infinity,
    timeoutMs: jobTimeoutMs,
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    name: null,
  });

  // Jobs wait here, in turns by owner, until a thread is free; the pool below then never queues.
  const turns = new FairSemaphore(size);
  // In the metrics, what waits is what waits for a turn.
  const view = { get queued() { return turns.queued; }, get pending() { return pool.pending + turns.queued; } };
  const live = listed('page-check');
  live.add(view);

  async function submit(request: CheckRequest, owner: string, signal?: AbortSignal): Promise<JobOutput> {
    await turns.acquire(owner, signal);
    try {
      return (await pool.run(request, { signal })).value;
    } catch (err) {
      if (!(err instanceof WorkerPoolError)) throw err; // the signal's reason
      const url = request.url;
      switch (err.code) {
        case 'failed': throw new CheckPoolError('check-failed', `Checking ${url} failed: ${err.message}`);
        case 'timeout': throw new CheckPoolError('timeout', `Checking ${url} took longer than ${duration(jobTimeoutMs)}; the page is too large or complex to check.`);
        case 'closed': throw new CheckPoolError('closed', 'The page checker was shut down before the page was checked.');
        default: throw new CheckPoolError('worker-crashed', `The page checker crashed while checking ${url} (${err.message}); the page was skipped and the checker restarted.`);
      }
    } finally {
      turns.release(owner);
    }
  }

  async function check(html: string, url: string, standard: WcagStandard, signal?: AbortSignal, opts: { styles?: boolean; owner?: string } = {}): Promise<CheckedPage> {
    const output = await submit({ kind: 'check', html, url, standard, styles: opts.styles ?? true }, opts.owner ?? '', signal);
    if (output.kind !== 'check') throw new CheckPoolError('check-failed', `Checking ${url} gave no result`);
    return output.page;
  }

  async function styleStats(html: string, url: string, issues: Issue[], signal?: AbortSignal, owner = ''): Promise<StyleStats> {
    const output = await submit({ kind: 'style', html, url, issues }, owner, signal);
    if (output.kind !== 'style') throw new CheckPoolError('check-failed', `Reading the styles of ${url} gave no result`);
    return output.style;
  }

  let closing: Promise<void> | null = null;
  return {
    check,
    styleStats,
    close: () => {
      live.delete(view);
      return (closing ??= pool.close());
    },
  };
}

function duration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}
