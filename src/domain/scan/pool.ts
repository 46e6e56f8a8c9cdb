/**
 * A small pool of worker threads that run checkPage, so axe-core's long synchronous runs never
 * block the server's event loop. Jobs queue while every worker is busy, owners (orgs) taking turns
 * (fair-queue.ts) rather than first come, first served; a worker that crashes (or
 * runs past the job deadline) is dropped, its job fails with a clear error, and a fresh worker
 * takes its place for the next job.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CheckedPage, Issue, StyleStats, WcagStandard } from './types.js';
import type { CheckRequest, CheckResponse, JobOutput, WorkerMessage } from './worker-protocol.js';
import { FairQueue } from './fair-queue.js';

export interface CheckPool {
  /**
   * Checks a page in a worker; `signal` withdraws a queued job (a running one is abandoned, not
   * interrupted). Queued jobs of different `owner`s (orgs) take turns for the workers.
   */
  check(html: string, url: string, standard: WcagStandard, signal?: AbortSignal, options?: { styles?: boolean; owner?: string }): Promise<CheckedPage>;
  /** Brand-scoring statistics of markup as served, in a worker (for pages another engine checked). */
  styleStats(html: string, url: string, issues: Issue[], signal?: AbortSignal, owner?: string): Promise<StyleStats>;
  /** Fails queued and running jobs and stops every worker. */
  close(): Promise<void>;
}

export interface CheckPoolOptions {
  /** The worker entry; by default worker.js next to this module (worker.ts when running from sources). */
  workerFile?: URL;
  /** A check still running after this long is abandoned and its worker replaced. Default 120000. */
  jobTimeoutMs?: number;
}

export type CheckPoolErrorCode = 'check-failed' | 'worker-crashed' | 'timeout' | 'closed';

export class CheckPoolError extends Error {
  constructor(readonly code: CheckPoolErrorCode, message: string) {
    super(message);
    this.name = 'CheckPoolError';
  }
}

interface Job {
  request: CheckRequest;
  owner: string;
  resolve(output: JobOutput): void;
  reject(err: unknown): void;
  settled: boolean;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  lastError: Error | null;
  /** Loaded and listening; a job's deadline starts only then. */
  ready: boolean;
}

const DEFAULT_JOB_TIMEOUT_MS = 120_000;

export function createCheckPool(size: number, options: CheckPoolOptions = {}): CheckPool {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`A check pool needs at least one worker (got ${size})`);
  const entry = workerEntry(options.workerFile);
  const jobTimeoutMs = options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  const slots: Slot[] = [];
  const queue = new FairQueue<Job>();
  let nextId = 1;
  let closed = false;

  function settle(job: Job, outcome: { output: JobOutput } | { error: unknown }): void {
    if (job.settled) return;
    job.settled = true;
    if ('output' in outcome) job.resolve(outcome.output);
    else job.reject(outcome.error);
  }

  function spawn(): Slot {
    const worker = new Worker(entry.file, { eval: entry.eval, execArgv: [] });
    const slot: Slot = { worker, job: null, timer: null, lastError: null, ready: false };
    worker.unref(); // idle workers must not keep the process alive
    worker.on('message', (message: WorkerMessage) => (message.kind === 'ready' ? onReady(slot) : onResponse(slot, message)));
    worker.on('error', (err) => { slot.lastError = err; });
    worker.on('exit', (code) => onExit(slot, code));
    slots.push(slot);
    return slot;
  }

  function assign(slot: Slot, job: Job): void {
    slot.job = job;
    slot.worker.ref(); // a pending result keeps the process alive
    if (slot.ready) startDeadline(slot);
    slot.worker.postMessage(job.request); // a starting worker receives it once it listens
  }

  function startDeadline(slot: Slot): void {
    slot.timer = setTimeout(() => abandon(slot), jobTimeoutMs);
  }

  function onReady(slot: Slot): void {
    slot.ready = true;
    if (slot.job && !slot.timer) startDeadline(slot);
  }

  function release(slot: Slot): Job | null {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    slot.worker.unref();
    return job;
  }

  function retire(slot: Slot): void {
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
  }

  function onResponse(slot: Slot, response: CheckResponse): void {
    if (slot.job?.request.id !== response.id) return;
    const job = release(slot)!;
    settle(job, response.ok
      ? { output: response.output }
      : { error: new CheckPoolError('check-failed', `Checking ${job.request.url} failed: ${response.error}`) });
    drain();
  }

  function onExit(slot: Slot, code: number): void {
    retire(slot);
    const job = release(slot);
    if (job && !closed) {
      const why = slot.lastError?.message ?? `exit code ${code}`;
      settle(job, { error: new CheckPoolError('worker-crashed', `The page checker crashed while checking ${job.request.url} (${why}); the page was skipped and the checker restarted.`) });
    }
    drain(); // replaces the worker if jobs are waiting
  }

  /** A job past its deadline: axe cannot be interrupted, so the worker is terminated and replaced. */
  function abandon(slot: Slot): void {
    retire(slot);
    const job = release(slot);
    if (job) settle(job, { error: new CheckPoolError('timeout', `Checking ${job.request.url} took longer than ${duration(jobTimeoutMs)}; the page is too large or complex to check.`) });
    void slot.worker.terminate();
    drain();
  }

  function drain(): void {
    while (!closed && queue.size > 0) {
      const slot = slots.find((s) => s.job === null) ?? (slots.length < size ? spawn() : undefined);
      if (!slot) return;
      assign(slot, queue.shift()!);
    }
  }

  async function check(html: string, url: string, standard: WcagStandard, signal?: AbortSignal, options: { styles?: boolean; owner?: string } = {}): Promise<CheckedPage> {
    const output = await submit({ id: nextId++, kind: 'check', html, url, standard, styles: options.styles ?? true }, options.owner ?? '', signal);
    if (output.kind !== 'check') throw new CheckPoolError('check-failed', `Checking ${url} gave no result`);
    return output.page;
  }

  async function styleStats(html: string, url: string, issues: Issue[], signal?: AbortSignal, owner = ''): Promise<StyleStats> {
    const output = await submit({ id: nextId++, kind: 'style', html, url, issues }, owner, signal);
    if (output.kind !== 'style') throw new CheckPoolError('check-failed', `Reading the styles of ${url} gave no result`);
    return output.style;
  }

  function submit(request: CheckRequest, owner: string, signal?: AbortSignal): Promise<JobOutput> {
    if (closed) return Promise.reject(new CheckPoolError('closed', 'The page checker is shut down.'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<JobOutput>((resolve, reject) => {
      const job: Job = { request, owner, resolve, reject, settled: false };
      if (signal) {
        const onAbort = () => {
          queue.remove(owner, job);
          settle(job, { error: signal.reason });
        };
        signal.addEventListener('abort', onAbort, { once: true });
        const done = () => signal.removeEventListener('abort', onAbort);
        job.resolve = (output) => { done(); resolve(output); };
        job.reject = (err) => { done(); reject(err); };
      }
      queue.push(owner, job);
      drain();
    });
  }

  async function close(): Promise<void> {
    closed = true;
    const error = new CheckPoolError('closed', 'The page checker was shut down before the page was checked.');
    for (const job of queue.drain()) settle(job, { error });
    const running = slots.splice(0);
    for (const slot of running) {
      const job = release(slot);
      if (job) settle(job, { error });
    }
    await Promise.all(running.map((slot) => slot.worker.terminate()));
  }

  return { check, styleStats, close };
}

function duration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

interface WorkerEntry {
  file: URL | string;
  eval: boolean;
}

/**
 * Compiled (dist/) the worker is worker.js next to this module. Run from sources (tsx, vitest) only
 * worker.ts exists and the thread needs tsx's loader; on Node 20 `execArgv: ['--import', 'tsx']`
 * does not reach a worker's entry module, so a two-line bootstrap registers tsx and imports it.
 */
function workerEntry(file?: URL): WorkerEntry {
  const candidates = file ? [file] : [new URL('./worker.js', import.meta.url), new URL('./worker.ts', import.meta.url)];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new Error(`Scan worker not found at ${candidates.map((c) => c.pathname).join(' or ')}`);
  if (!found.pathname.endsWith('.ts')) return { file: found, eval: false };
  const api = JSON.stringify(tsxEsmApi());
  return { file: `import(${api}).then(({ register }) => { register(); return import(${JSON.stringify(found.href)}); });`, eval: true };
}

/** tsx's ESM API as an absolute URL (from its package.json exports), so any working directory will do. */
function tsxEsmApi(): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve('tsx/package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { exports: Record<string, { import?: { default?: string } }> };
  const target = manifest.exports['./esm/api']?.import?.default;
  if (!target) throw new Error('tsx does not export ./esm/api; cannot start the scan worker from TypeScript sources');
  return pathToFileURL(join(dirname(manifestPath), target)).href;
}
