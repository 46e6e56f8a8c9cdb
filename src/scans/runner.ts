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
 *
 * Fairness between orgs (one org's flood must not hold every other org's scans): neither queue
 * decides which scan runs next by arrival. A free worker asks claims.ts, which picks from the
 * scans table: among orgs with a scan waiting and fewer than SCAN_MAX_RUNNING_PER_ORG running, the
 * one with the fewest running, then the one that least recently started a scan (round robin),
 * its oldest scan first. The claim is atomic across instances (an advisory lock), so the running
 * cap is global. It defaults to SCAN_CONCURRENCY − 1 (at least 1): an instance always has a worker
 * free for a second org, whose scan then starts at once instead of after a flood's scan (which may
 * run for up to SCAN_TIMEOUT_SECONDS). SCAN_MAX_QUEUED_PER_ORG (default 100, room for a flood of 50)
 * bounds what an org may have waiting (dashboard_scan_site refuses beyond it: rate_limited, with
 * retryAfterSeconds). Inside the engine, the orgs' pages take turns for its page slots the same
 * way (fair-queue.ts), so a running flood's pages do not hold the bystander's page either.
 *
 * Why this design, on PostgreSQL: pg-boss stays the durable transport and the liveness mechanism
 * (expiry of a dead worker's job, retries, dead letter), but a job is a turn to run some scan, not
 * a particular scan: its id is recorded on the scan it claims (scans.job_id), so its retry runs that
 * scan again and the dead-letter handler fails that scan. A job also names the scan it was queued
 * for: found marked running but claimed by nobody (a job of an older release, which named only its
 * scan, died running it), that scan is the job's own and runs again; such an older job runs only
 * that scan, and otherwise hands its turn to a fresh job. pg-boss alone cannot do it: it fetches
 * by priority then age, and its `singleton` policy does not skip a job whose key is active (the
 * fetch would hit the unique index), so it cannot cap an org's running scans; a priority fixed at
 * enqueue (minus the org's backlog) orders but does not cap, and cannot see what runs elsewhere.
 * When nothing is eligible (every waiting scan's org is at its cap) the job waits in its worker,
 * looking again every SCAN_QUEUE_POLL_SECONDS (or at once when this instance queues or finishes a
 * scan), for at most WAIT_POLLS polls; then it hands its turn on (a fresh job) and completes, so
 * it never burns a retry, and the churn is one job per worker per wait, whatever the queue's length.
 * The job's expiry allows for that wait. On SQLite, the in-process queue asks claims.ts the same way.
 */
import { randomUUID } from 'node:crypto';
import type PgBoss from 'pg-boss';
import type { Config } from '../config.js';
import { isPostgres, type Db } from '../db/knex.js';
import type { ScanRow } from '../db/scans.js';
import type { ScanEngine } from '../domain/scan/engine.js';
import { createEngines, engineName, warnUnsandboxed, type Engines } from './engine-choice.js';
import type { Logger } from '../log.js';
import { claimedBy, claimScan, releaseScans } from './claims.js';
import { executeScan, failScan, type ScanDeps } from './execute.js';
import type { ScreenshotStore } from '../reports/screenshots.js';

/** Attempts before a scan whose runs keep being cut off (restarts, dead workers) is failed. */
export const MAX_ATTEMPTS = 3;
/** Polls a job waits for an eligible scan before handing its turn on (PostgreSQL). */
export const WAIT_POLLS = 10;

export interface ScanRunnerOptions {
  db: Db;
  config: Config;
  log: Logger;
  /** Called when a scan completes (brand score, fleet totals). */
  onCompleted?(scan: ScanRow): Promise<void>;
  /** Where screenshots of failing elements are kept (Chromium); absent: none are taken. */
  screenshots?: ScreenshotStore;
}

export interface ScanRunner {
  /** Queues scan `id` (already stored as `queued`). */
  enqueue(id: string): Promise<void>;
  /** Starts working the queue, picking up what a previous process left. */
  recover(): Promise<void>;
  /** Stops: scans in flight are aborted and go back to the queue. */
  stop(): Promise<void>;
  /** What the operator must hear once the server serves (Chromium without its sandbox). */
  startupWarnings(): void;
  /** For scan_page: the engine and fetch settings. */
  engine(): ScanEngine;
  fetchOptions(): ReturnType<ScanDeps['fetchOptions']>;
}

export function createScanRunner(opts: ScanRunnerOptions): ScanRunner {
  // SCAN_ENGINE=chromium without a browser stops the start, naming the setting.
  engineName(opts.config);
  let engines: Engines | null = null;
  const { screenshots, ...rest } = opts;
  const shots = opts.config.screenshots;
  const deps: ScanDeps = {
    ...rest,
    ...(screenshots && shots.perPage > 0 && shots.perScan > 0 ? { screenshots: { store: screenshots, budget: shots } } : {}),
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
    startupWarnings: () => {
      if (engineName(opts.config) === 'chromium') warnUnsandboxed(opts.log);
    },
    engine: deps.engine,
    fetchOptions: deps.fetchOptions,
  };
}

type Queue = Pick<ScanRunner, 'enqueue' | 'recover' | 'stop'>;

/** Tracks the scans this process is running, so stop() can abort them and wait. */
function inFlight() {
  const running = new Map<string, AbortController>();
  let closing = false;
  return {
    async run(deps: ScanDeps, scan: ScanRow) {
      const controller = new AbortController();
      // Claimed while stopping: put straight back, for the claimant's retry (or the next start).
      if (closing) controller.abort(new Error('shutting down'));
      running.set(scan.id, controller);
      try {
        return await executeScan(deps, scan, controller.signal);
      } finally {
        running.delete(scan.id);
      }
    },
    get size() {
      return running.size;
    },
    async abortAll(waitMs: number) {
      closing = true;
      for (const c of running.values()) c.abort(new Error('shutting down'));
      const deadline = Date.now() + waitMs;
      while (running.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    },
  };
}

function inProcessQueue(deps: ScanDeps): Queue {
  const { db, config, log } = deps;
  const flight = inFlight();
  let stopping = false;
  let pumping: Promise<void> | null = null;
  let again = false;

  /** Claims and starts scans while a worker is free and some org's scan is eligible. */
  async function fill() {
    while (!stopping && flight.size < config.scanConcurrency) {
      const claim = await claimScan(db, `local:${randomUUID()}`, { maxRunningPerOrg: config.scanMaxRunningPerOrg });
      if (claim.kind !== 'claimed') return;
      void flight
        .run(deps, claim.scan)
        .catch((err) => log.error({ err, scanId: claim.scan.id }, 'scan runner failed'))
        .finally(pump);
    }
  }

  /** One fill at a time (claims are sequential here); a call meanwhile makes it look again. */
  function pump() {
    if (pumping) {
      again = true;
      return;
    }
    pumping = (async () => {
      do {
        again = false;
        await fill();
      } while (again && !stopping);
    })()
      .catch((err) => log.error({ err }, 'scan queue failed'))
      .finally(() => (pumping = null));
  }

  return {
    enqueue() {
      pump();
      return Promise.resolve();
    },
    async recover() {
      for (const s of await db<ScanRow>('scans').where({ status: 'running' })) {
        if (s.attempts >= MAX_ATTEMPTS) await failScan(db, s.id, `interrupted ${s.attempts} times by a restart; giving up`);
      }
      // This process is the only one: nothing a previous one claimed is still held.
      await releaseScans(db, { status: 'running' });
      await releaseScans(db, { status: 'queued' });
      pump();
    },
    async stop() {
      stopping = true;
      await pumping;
      await flight.abortAll(5000);
    },
  };
}

const SCANS = 'scans';
const DEAD_SCANS = 'scans-dead';

/**
 * A job's data: its own id (a dead-letter copy gets a new id, so the copy finds the scan by it)
 * and the scan it was queued for. A job of an older release has only the scan: it was that scan's
 * job, and runs nothing else.
 */
interface TurnData {
  turn?: string;
  scanId?: string;
}

function pgBossQueue(deps: ScanDeps): Queue {
  const { db, config, log } = deps;
  const flight = inFlight();
  const waitSeconds = WAIT_POLLS * config.scanQueue.pollSeconds;
  let boss: PgBoss | undefined;
  let started: Promise<void> | null = null;
  let stopping = false;
  /** Jobs waiting for an eligible scan; woken when this instance queues or finishes one. */
  const sleepers = new Set<() => void>();
  const wake = () => {
    for (const w of sleepers) w();
    sleepers.clear();
  };
  const nap = (seconds: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, seconds * 1000);
      function done() {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      }
      sleepers.add(done);
    });

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
      // that, and by the time it may have waited for an eligible scan. Past it, the worker is
      // taken for dead and the job is retried.
      const expireInSeconds = config.scanTimeoutSeconds + Math.min(60, config.scanTimeoutSeconds) + waitSeconds;
      await ensureQueue(boss, { name: DEAD_SCANS });
      await ensureQueue(boss, { name: SCANS, retryLimit: MAX_ATTEMPTS - 1, retryDelay: 1, expireInSeconds, deadLetter: DEAD_SCANS });
    })());

  /** A turn to run a scan: a job whose data names its own id, so its dead-letter copy can find its scan. */
  const sendTurn = async (scanId?: string) => {
    const id = randomUUID();
    await boss!.send(SCANS, { turn: id, scanId } satisfies TurnData, { id });
  };

  /** A job's turn: its own scan again (a retry), else the fairest eligible one; waits while none is. */
  async function takeTurn(job: PgBoss.Job<TurnData>) {
    const { turn, scanId: queuedFor } = job.data;
    for (let polls = 0; ; polls++) {
      const claim = await claimScan(db, job.id, { maxRunningPerOrg: config.scanMaxRunningPerOrg, queuedFor, ownOnly: !turn });
      if (claim.kind === 'claimed') {
        const outcome = await flight.run(deps, claim.scan).finally(wake);
        // Failing the job hands it to another instance (a retry), which runs its scan from scratch.
        if (outcome === 'interrupted') throw new Error('interrupted by shutdown');
        return;
      }
      // Nothing waits: the scan this turn was queued for was run by another turn.
      if (claim.kind === 'idle' && turn) return;
      // Waited long enough (or stopping), or an older release's job whose scan is not left running:
      // its own scan (put back by a shutdown) goes back among the waiting, and a fresh job takes the turn.
      if (!turn || stopping || polls >= WAIT_POLLS) {
        await releaseScans(db, { job_id: job.id, status: 'queued' });
        await sendTurn(queuedFor);
        return;
      }
      await nap(config.scanQueue.pollSeconds);
    }
  }

  return {
    async enqueue(id) {
      await start();
      await sendTurn(id);
      wake();
    },
    async recover() {
      await start();
      for (let i = 0; i < config.scanConcurrency; i++) {
        await boss!.work<TurnData>(SCANS, { batchSize: 1, pollingIntervalSeconds: config.scanQueue.pollSeconds }, async ([job]) => takeTurn(job!));
      }
      // Every retry used up (worker died or was stopped each time): the scan fails with the reason.
      await boss!.work<TurnData>(DEAD_SCANS, { batchSize: 1, pollingIntervalSeconds: config.scanQueue.pollSeconds }, async ([job]) => {
        const { turn, scanId } = job!.data;
        // An older release's job ran only its own scan (one claimed by nobody since).
        const row = turn ? await claimedBy(db, turn) : scanId ? await db<ScanRow>('scans').where({ id: scanId }).whereNull('job_id').first() : undefined;
        if (!row) {
          // A turn that died before claiming a scan: a fresh one takes it, so no waiting scan is left without one.
          if (turn) await sendTurn(scanId);
          return;
        }
        await failScan(db, row.id, `the scan's worker stopped before finishing, ${row.attempts} times; giving up`);
        log.warn({ scanId: row.id }, 'scan failed after its last retry');
      });
    },
    async stop() {
      if (!started) return;
      stopping = true;
      wake();
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
