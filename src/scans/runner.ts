/**
 * Runs scans off the request path, on one of two queues behind the same three calls:
 *
 * - SQLite (one machine): a queue in this process, at most SCAN_CONCURRENCY scans at once. On
 *   start-up, scans a previous process left running go back to the queue and run again; a scan
 *   interrupted three times is marked failed with the reason.
 * - PostgreSQL (any number of instances): pg-boss jobs, which any instance may pick up. A job
 *   whose worker dies (SIGKILL, lost machine) misses its heartbeat and is retried elsewhere; after
 *   the last retry the dead-letter queue marks the scan failed.
 *
 * Either way a scan is never left "running".
 *
 * A scan is cancelled through its row (execute.ts cancelScan, for tasks/cancel): its place frees at
 * once, the instance that cancelled it stops it if it runs there, and any other instance running
 * it sees the row every SCAN_QUEUE_POLL_SECONDS and stops it then.
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
 * (a worker's heartbeat, expiry, retries, dead letter), but a job is a turn to run some scan, not a
 * particular scan: its id is recorded on the scan it claims (scans.job_id), so its retry runs that
 * scan again and the dead-letter handler fails that scan. pg-boss alone cannot do it: it fetches
 * by priority then age, and its group concurrency caps an org but does not choose among orgs; the
 * fair choice needs what runs everywhere, which the scans table has. A worker that dies stops its
 * job's heartbeat, and the job is failed and retried within about HEARTBEAT_SECONDS.
 * When nothing is eligible (every waiting scan's org is at its cap) the job waits in its worker,
 * looking again every SCAN_QUEUE_POLL_SECONDS (or at once when this instance queues or finishes a
 * scan), for at most WAIT_POLLS polls; then it hands its turn on (a fresh job) and completes, so
 * it never burns a retry, and the churn is one job per worker per wait, whatever the queue's length.
 * The job's expiry allows for that wait. On SQLite, the in-process queue asks claims.ts the same way.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Job, PgBoss, Queue as PgBossQueue } from 'pg-boss';
import type { Config } from '../ground/config.js';
import { isPostgres, type Db } from '../db/knex.js';
import type { ScanRow } from '../db/scans.js';
import type { ScanEngine } from '../domain/scan/engine.js';
import type { EngineName } from '../domain/scan/types.js';
import { createEngines, engineName, pageSlotsPerOrg, warnUnsandboxed, type Engines } from './engine-choice.js';
import type { ChromiumEngine } from '../domain/scan/chromium/engine.js';
import { PageCalls } from './page-calls.js';
import { measuredEngine } from './engine-metrics.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { Logger } from '../telemetry/log.js';
import { claimedBy, claimScan, releaseScans } from './claims.js';
import { executeScan, failScan, ScanCancelled, type ScanDeps } from './execute.js';
import { inSpan } from '../telemetry/tracing.js';
import type { ScreenshotStore } from '../reports/screenshots.js';

/** Attempts before a scan whose runs keep being cut off (restarts, dead workers) is failed. */
export const MAX_ATTEMPTS = 3;
/** Polls a job waits for an eligible scan before handing its turn on (PostgreSQL). */
export const WAIT_POLLS = 10;

export interface ScanRunnerOptions {
  db: Db;
  config: Config;
  log: Logger;
  /** Where page checks and running scans are counted. */
  metrics?: Metrics;
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
  /**
   * Scan `id` was cancelled (cancelScan): stops it at once if it runs here, and lets the next
   * eligible scan start. An instance that runs it elsewhere stops it at its next look at the row.
   */
  cancelled(id: string): void;
  /** What the operator must hear once the server serves (Chromium without its sandbox). */
  startupWarnings(): void;
  /** For scan_page: the engine and fetch settings. */
  engine(): ScanEngine;
  /** The Chromium engine, when this process runs Chromium (it also prints the ACR as PDF); null with jsdom. */
  chromium(): ChromiumEngine | null;
  fetchOptions(): ReturnType<ScanDeps['fetchOptions']>;
  /** scan_page calls in progress per org, and how many more may wait (page-calls.ts). */
  pageCalls: PageCalls;
}

export function createScanRunner(opts: ScanRunnerOptions): ScanRunner {
  // SCAN_ENGINE=chromium without a browser stops the start, naming the setting.
  engineName(opts.config);
  let engines: Engines | null = null;
  const { screenshots, metrics, ...rest } = opts;
  let engine: ScanEngine | null = null;
  const theEngine = () => {
    if (engine) return engine;
    engines ??= createEngines(opts.config, opts.log);
    const chromium = engines.chromium;
    if (metrics && chromium) metrics.scans.browserLaunches = () => chromium.stats().launches;
    engine = metrics ? measuredEngine(engines.engine, metrics) : engines.engine;
    return engine;
  };
  const shots = opts.config.screenshots;
  const deps: ScanDeps = {
    ...rest,
    ...(screenshots && shots.perPage > 0 && shots.perScan > 0 ? { screenshots: { store: screenshots, budget: shots } } : {}),
    engine: theEngine,
    ...(metrics ? { storeTimed: (name: EngineName, seconds: number) => metrics.scans.phaseDuration.observe({ engine: name, phase: 'store' }, seconds) } : {}),
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
    chromium: () => {
      theEngine();
      return engines?.chromium ?? null;
    },
    fetchOptions: deps.fetchOptions,
    pageCalls: new PageCalls(pageSlotsPerOrg(opts.config) + opts.config.scanPageMaxQueuedPerOrg, opts.config.scanPageTimeoutSeconds),
  };
}

type Queue = Pick<ScanRunner, 'enqueue' | 'recover' | 'stop' | 'cancelled'>;

/** Tracks the scans this process is running, so stop() can abort them and wait. */
function inFlight() {
  const running = new Map<string, AbortController>();
  let closing = false;
  return {
    /** `lost`: aborted when the queue finds the claim gone (the job failed elsewhere): the scan stops. */
    async run(deps: ScanDeps, scan: ScanRow, lost?: AbortSignal) {
      const controller = new AbortController();
      // Claimed while stopping: put straight back, for the claimant's retry (or the next start).
      if (closing) controller.abort(new Error('shutting down'));
      const onLost = () => controller.abort(new Error('the job of this scan was failed elsewhere'));
      lost?.addEventListener('abort', onLost, { once: true });
      running.set(scan.id, controller);
      // Cancelled through another instance: the row says so, and the run stops at the next look.
      const watch = setInterval(() => {
        deps.db<ScanRow>('scans').where({ id: scan.id }).first('status')
          .then((row) => {
            if (!row || (row.status !== 'running' && row.status !== 'queued')) controller.abort(new ScanCancelled());
          })
          .catch(() => {});
      }, deps.config.scanQueue.pollSeconds * 1000);
      watch.unref();
      try {
        // A trace of its own: the request that queued the scan (or finished the one before) has long ended.
        const attributes = { 'pactum.scan.id': scan.id, 'pactum.scan.mode': scan.scan_mode, 'pactum.scan.attempt': scan.attempts };
        return await inSpan('scan', attributes, () => executeScan(deps, scan, controller.signal), { root: true });
      } finally {
        clearInterval(watch);
        lost?.removeEventListener('abort', onLost);
        running.delete(scan.id);
      }
    },
    get size() {
      return running.size;
    },
    /** Stops scan `id` if it runs here; whether it did. */
    cancel(id: string) {
      const controller = running.get(id);
      controller?.abort(new ScanCancelled());
      return controller !== undefined;
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
    cancelled(id) {
      // Its worker frees when the run ends (and pumps then); a waiting scan frees nothing here.
      if (!flight.cancel(id)) pump();
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
 * pg-boss keeps its tables in a schema of their own. The release before used pg-boss 10 in the
 * schema `pgboss`, which later pg-boss versions cannot migrate: this one starts clean in its own
 * schema, and the scans table, which is the truth of what waits and runs, gives it the turns.
 */
export const JOB_SCHEMA = 'pactum_jobs';
const PREVIOUS_JOB_SCHEMA = 'pgboss';
/**
 * A worker proves it is alive this often (pg-boss refreshes the job at half this); a job whose
 * heartbeat stops (a SIGKILLed instance, a lost machine) is failed and retried at the next
 * supervision pass, in seconds rather than after the scan's whole time limit.
 */
export const HEARTBEAT_SECONDS = 10;
/** The lock the start-up reconciliation takes, so instances starting together agree. */
const RECONCILE_LOCK = 'pactum:scan-queue-start';

/** A job's data: its own id (a dead-letter copy gets a new id, so the copy finds the scan by it). */
interface TurnData {
  turn: string;
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
      const { PgBoss: PgBossClass } = await import('pg-boss');
      // pg-boss keeps its own tables (schema pactum_jobs) and its own small pool in the same database.
      boss = new PgBossClass({
        connectionString: config.databaseUrl!,
        max: 4,
        schema: JOB_SCHEMA,
        schedule: false, // no cron jobs: nothing to clock
        // How often dead workers' jobs are looked for (expired or silent), and queues maintained.
        superviseIntervalSeconds: config.scanQueue.maintenanceSeconds,
        monitorIntervalSeconds: config.scanQueue.maintenanceSeconds,
      });
      boss.on('error', (err: unknown) => log.error({ err }, 'scan queue error'));
      await boss.start();
      // The scan times itself out first and records why; the job outlives it only by a margin for
      // that, and by the time it may have waited for an eligible scan. A worker that dies is found
      // sooner, by its missing heartbeat.
      const expireInSeconds = config.scanTimeoutSeconds + Math.min(60, config.scanTimeoutSeconds) + waitSeconds;
      await ensureQueue(boss, DEAD_SCANS, {});
      await ensureQueue(boss, SCANS, { retryLimit: MAX_ATTEMPTS - 1, retryDelay: 1, expireInSeconds, heartbeatSeconds: HEARTBEAT_SECONDS, deadLetter: DEAD_SCANS });
      await reconcile(boss);
    })());

  /** A turn to run a scan: a job whose data names its own id, so its dead-letter copy can find its scan. */
  const sendTurn = async (b: PgBoss = boss!) => {
    const id = randomUUID();
    await b.send(SCANS, { turn: id } satisfies TurnData, { id });
  };

  /**
   * At start-up, under one lock for every instance: the previous release's job schema goes (it only
   * held pactum's scan queues); a scan marked running whose job is not alive here goes back among
   * the waiting (its worker is gone); and every waiting scan has a turn.
   */
  async function reconcile(b: PgBoss) {
    await db.transaction(async (tx) => {
      await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [RECONCILE_LOCK]);
      await dropPreviousJobSchema(tx, log);
      // pg-boss's own table, read in this transaction: its queue counts are refreshed only by its
      // monitor, and the turns must be counted exactly. (Job states are ordered: created, retry, active, …)
      const jobs = `"${JOB_SCHEMA}".job`;
      const alive = (await tx.raw<{ rows: { id: string }[] }>(`select id::text from ${jobs} where name = ? and state = 'active'`, [SCANS])).rows.map((r) => r.id);
      for (const scan of await tx<ScanRow>('scans').where({ status: 'running' })) {
        if (!scan.job_id || !alive.includes(scan.job_id)) await releaseScans(tx, { id: scan.id });
      }
      const waiting = Number((await tx('scans').where({ status: 'queued' }).count<{ n: string }[]>({ n: '*' }).first())?.n ?? 0);
      const pending = await tx.raw<{ rows: { n: string }[] }>(`select count(*) as n from ${jobs} where name = ? and state <= 'active'`, [SCANS]);
      for (let i = Number(pending.rows[0]?.n ?? 0); i < waiting; i++) await sendTurn(b);
    });
  }

  /** A job's turn: its own scan again (a retry), else the fairest eligible one; waits while none is. */
  async function takeTurn(job: Job<TurnData>) {
    for (let polls = 0; ; polls++) {
      const claim = await claimScan(db, job.id, { maxRunningPerOrg: config.scanMaxRunningPerOrg });
      if (claim.kind === 'claimed') {
        const outcome = await flight.run(deps, claim.scan, job.signal).finally(wake);
        // Failing the job hands it to another instance (a retry), which runs its scan from scratch.
        if (outcome === 'interrupted') throw new Error('interrupted by shutdown');
        return;
      }
      // Nothing waits: the scan this turn was queued for was run by another turn.
      if (claim.kind === 'idle') return;
      // Waited long enough (or stopping): a fresh job takes the turn, so waiting never burns a retry.
      if (stopping || polls >= WAIT_POLLS) {
        await releaseScans(db, { job_id: job.id, status: 'queued' });
        await sendTurn();
        return;
      }
      await nap(config.scanQueue.pollSeconds);
    }
  }

  return {
    async enqueue() {
      await start();
      await sendTurn();
      wake();
    },
    cancelled(id) {
      flight.cancel(id);
      // Its org may now run another: waiting turns look again.
      wake();
    },
    async recover() {
      await start();
      for (let i = 0; i < config.scanConcurrency; i++) {
        await boss!.work<TurnData>(SCANS, { batchSize: 1, pollingIntervalSeconds: config.scanQueue.pollSeconds }, async ([job]) => takeTurn(job!));
      }
      // Every retry used up (worker died or was stopped each time): the scan fails with the reason.
      await boss!.work<TurnData>(DEAD_SCANS, { batchSize: 1, pollingIntervalSeconds: config.scanQueue.pollSeconds }, async ([job]) => {
        const row = await claimedBy(db, job!.data.turn);
        // A turn that died before claiming a scan: a fresh one takes it, so no waiting scan is left without one.
        if (!row) return sendTurn();
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
      await boss?.stop({ graceful: true, timeout: 5000 });
    },
  };
}

/**
 * The previous release's pg-boss 10 schema, which this pg-boss cannot migrate, is dropped when it
 * holds nothing but pactum's own scan queues (a schema shared with another application is left
 * alone, with a warning). Its jobs were turns; the scans table keeps what waited.
 */
async function dropPreviousJobSchema(tx: Knex.Transaction, log: Logger) {
  const exists = await tx.raw<{ rows: unknown[] }>("select 1 from information_schema.tables where table_schema = ? and table_name = 'queue'", [PREVIOUS_JOB_SCHEMA]);
  if (!exists.rows.length) return;
  const queues = await tx.raw<{ rows: { name: string }[] }>(`select name from "${PREVIOUS_JOB_SCHEMA}".queue`);
  const foreign = queues.rows.map((r) => r.name).filter((n) => n !== SCANS && n !== DEAD_SCANS);
  if (foreign.length) {
    log.warn({ schema: PREVIOUS_JOB_SCHEMA, queues: foreign }, 'the previous release\'s job schema also holds queues that are not pactum\'s; left in place');
    return;
  }
  await tx.raw(`drop schema "${PREVIOUS_JOB_SCHEMA}" cascade`);
  log.info({ schema: PREVIOUS_JOB_SCHEMA, now: JOB_SCHEMA }, 'removed the previous release\'s job schema; waiting scans get their turns in the new one');
}

/**
 * Creates the queue or brings its policy up to date (settings may change between deployments;
 * instances may race). Its dead letter and heartbeat are set when it is created.
 */
async function ensureQueue(boss: PgBoss, name: string, options: Omit<PgBossQueue, 'name'>) {
  const { deadLetter: _deadLetter, heartbeatSeconds: _heartbeat, ...changeable } = options;
  if (await boss.getQueue(name)) return Object.keys(changeable).length ? boss.updateQueue(name, changeable) : undefined;
  try {
    await boss.createQueue(name, options);
  } catch (err) {
    if (!(await boss.getQueue(name))) throw err;
  }
}
