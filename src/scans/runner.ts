/**
 * Runs scans off the request path, on one of two queues behind the same three calls:
 *
 * - SQLite (one machine): a queue in this process, at most SCAN_CONCURRENCY scans at once. On
 *   start-up, scans a previous process left running go back to the queue and run again; a scan
 *   interrupted three times is marked failed with the reason.
 * - PostgreSQL (any number of instances): pg-boss jobs, which any instance may pick up. A job
 *   whose worker dies (SIGKILL, lost machine) expires after SCAN_TIMEOUT_SECONDS plus a margin
 *   and is retried elsewhere; after the last retry the dead-letter queue marks the scan failed.
 *
 * Either way a scan is never left "running".
 */
import type PgBoss from 'pg-boss';
import type { Config } from '../config.js';
import { isPostgres, type Db } from '../db/knex.js';
import type { ScanRow } from '../db/scans.js';
import type { ScanEngine } from '../domain/scan/engine.js';
import { createEngines, engineName, type Engines } from './engine-choice.js';
import type { Logger } from '../log.js';
import { executeScan, failScan, requeueScan, type ScanDeps } from './execute.js';

/** Attempts before a scan whose runs keep being cut off (restarts, dead workers) is failed. */
export const MAX_ATTEMPTS = 3;

export interface ScanRunnerOptions {
  db: Db;
  config: Config;
  log: Logger;
  /** Called when a scan completes (brand score, fleet totals). */
  onCompleted?(scan: ScanRow): Promise<void>;
}

export interface ScanRunner {
  /** Queues scan `id` (already stored as `queued`). */
  enqueue(id: string): Promise<void>;
  /** Starts working the queue, picking up what a previous process left. */
  recover(): Promise<void>;
  /** Stops: scans in flight are aborted and go back to the queue. */
  stop(): Promise<void>;
  /** For scan_page: the engine and fetch settings. */
  engine(): ScanEngine;
  fetchOptions(): ReturnType<ScanDeps['fetchOptions']>;
}

export function createScanRunner(opts: ScanRunnerOptions): ScanRunner {
  engineName(opts.config); // SCAN_ENGINE=chromium without a browser stops the start, naming the setting
  let engines: Engines | null = null;
  const deps: ScanDeps = {
    ...opts,
    engine: () => (engines ??= createEngines(opts.config, opts.log)).engine,
    fetchOptions: () => ({ allowPrivateNetworks: opts.config.scanAllowPrivateNetworks, userAgent: 'pactum-scanner/3.4 (+accessibility scan)' }),
  };
  const queue = isPostgres(opts.db) ? pgBossQueue(deps) : inProcessQueue(deps);
  return {
    ...queue,
    async stop() {
      await queue.stop();
      await engines?.engine.close();
    },
    engine: deps.engine,
    fetchOptions: deps.fetchOptions,
  };
}

type Queue = Pick<ScanRunner, 'enqueue' | 'recover' | 'stop'>;

/** Tracks the scans this process is running, so stop() can abort them and wait. */
function inFlight() {
  const running = new Map<string, AbortController>();
  return {
    async run(deps: ScanDeps, id: string) {
      const controller = new AbortController();
      running.set(id, controller);
      try {
        return await executeScan(deps, id, controller.signal);
      } finally {
        running.delete(id);
      }
    },
    has: (id: string) => running.has(id),
    async abortAll(waitMs: number) {
      for (const c of running.values()) c.abort(new Error('shutting down'));
      const deadline = Date.now() + waitMs;
      while (running.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    },
  };
}

function inProcessQueue(deps: ScanDeps): Queue {
  const { db, config, log } = deps;
  const waiting: string[] = [];
  const flight = inFlight();
  let active = 0;
  let stopping = false;

  function pump() {
    while (!stopping && active < config.scanConcurrency && waiting.length) {
      const id = waiting.shift()!;
      active++;
      void flight
        .run(deps, id)
        .catch((err) => log.error({ err, scanId: id }, 'scan runner failed'))
        .finally(() => {
          active--;
          pump();
        });
    }
  }

  return {
    enqueue(id) {
      waiting.push(id);
      pump();
      return Promise.resolve();
    },
    async recover() {
      for (const s of await db<ScanRow>('scans').where({ status: 'running' })) {
        if (s.attempts >= MAX_ATTEMPTS) await failScan(db, s.id, `interrupted ${s.attempts} times by a restart; giving up`);
        else await requeueScan(db, s.id);
      }
      for (const s of await db<ScanRow>('scans').where({ status: 'queued' }).orderBy('id')) if (!waiting.includes(s.id) && !flight.has(s.id)) waiting.push(s.id);
      pump();
    },
    async stop() {
      stopping = true;
      await flight.abortAll(5000);
    },
  };
}

const SCANS = 'scans';
const DEAD_SCANS = 'scans-dead';

function pgBossQueue(deps: ScanDeps): Queue {
  const { db, config, log } = deps;
  const flight = inFlight();
  let boss: PgBoss | undefined;
  let started: Promise<void> | null = null;
  const start = () =>
    (started ??= (async () => {
      // Loaded on first use (with pg, about 18 MB resident): SQLite servers never need it.
      const { default: PgBossClass } = await import('pg-boss');
      // pg-boss keeps its own tables (schema pgboss) and its own small pool in the same database.
      boss = new PgBossClass({
        connectionString: config.databaseUrl!,
        max: 4,
        schedule: false, // no cron jobs: nothing to clock
        maintenanceIntervalSeconds: config.scanQueue.maintenanceSeconds,
      });
      boss.on('error', (err) => log.error({ err }, 'scan queue error'));
      await boss.start();
      // The scan times itself out first and records why; the job outlives it only by a margin for
      // that. Past it, the worker is taken for dead and the job is retried.
      const expireInSeconds = config.scanTimeoutSeconds + Math.min(60, config.scanTimeoutSeconds);
      await ensureQueue(boss, { name: DEAD_SCANS });
      await ensureQueue(boss, { name: SCANS, retryLimit: MAX_ATTEMPTS - 1, retryDelay: 1, expireInSeconds, deadLetter: DEAD_SCANS });
    })());

  return {
    async enqueue(id) {
      await start();
      await boss!.send(SCANS, { scanId: id });
    },
    async recover() {
      await start();
      for (let i = 0; i < config.scanConcurrency; i++) {
        await boss!.work<{ scanId: string }>(SCANS, { batchSize: 1, pollingIntervalSeconds: config.scanQueue.pollSeconds }, async ([job]) => {
          const outcome = await flight.run(deps, job!.data.scanId);
          // Failing the job hands it to another instance (a retry), which runs it from scratch.
          if (outcome === 'interrupted') throw new Error('interrupted by shutdown');
        });
      }
      // Every retry used up (worker died or was stopped each time): the scan fails with the reason.
      await boss!.work<{ scanId: string }>(DEAD_SCANS, { batchSize: 1, pollingIntervalSeconds: config.scanQueue.pollSeconds }, async ([job]) => {
        const scanId = job!.data.scanId;
        const row = await db<ScanRow>('scans').where({ id: scanId }).first();
        await failScan(db, scanId, `the scan's worker stopped before finishing, ${row?.attempts ?? MAX_ATTEMPTS} times; giving up`);
        log.warn({ scanId }, 'scan failed after its last retry');
      });
    },
    async stop() {
      if (!started) return;
      await started.catch(() => {});
      await flight.abortAll(5000);
      await boss?.stop({ graceful: true, wait: true, timeout: 5000 });
    },
  };
}

/** Creates the queue or brings its policy up to date (settings may change between deployments; instances may race). */
async function ensureQueue(boss: PgBoss, queue: PgBoss.Queue) {
  if (await boss.getQueue(queue.name)) return boss.updateQueue(queue.name, queue);
  try {
    await boss.createQueue(queue.name, queue);
  } catch (err) {
    if (!(await boss.getQueue(queue.name))) throw err;
  }
}

