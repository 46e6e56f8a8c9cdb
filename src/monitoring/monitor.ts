/**
 * Monitoring runs on its own, in every instance, one bounded tick every MONITOR_TICK_SECONDS:
 *
 * 1. Due schedules (at most MONITOR_SCHEDULES_PER_TICK, the earliest first) start their run. Each
 *    instance that finds a schedule due tries to record the run of its tick; the run table's
 *    unique (schedule, tick) key lets exactly one succeed, and only that one queues the scan,
 *    through the same fair queue and quotas as dashboard_scan_site. The schedule's next run moves
 *    to the cron's next time after now (runs missed while no instance ran are not made up).
 * 2. Runs whose scan has finished (as many) are compared with the schedule's previous completed
 *    run, finding by finding (the comparison of dashboard_verify_fixes, in the compute pool): the
 *    counts of new, fixed and still present findings are stored on the run, and new findings
 *    queue a findings.new delivery to each of the org's enabled webhooks.
 * 3. Due deliveries (as many) are attempted, each held by one instance for its attempt: signed,
 *    posted through the outbound address policy, logged (never the secret), retried with doubling
 *    waits up to WEBHOOK_MAX_ATTEMPTS; WEBHOOK_DISABLE_AFTER failed deliveries in a row disable
 *    the webhook, with a reason, an audit row and a log line.
 *
 * On SQLite (one instance) the same loop runs alone. A finished scan wakes the loop at once.
 */
import type { Config } from '../ground/config.js';
import { newId } from '../ground/ids.js';
import type { SecretBox } from '../ground/secret-box.js';
import type { Db } from '../db/knex.js';
import { readPages, type ScanRow } from '../db/scans.js';
import { marksOnPages } from '../db/marks.js';
import {
  advanceSchedule, scanInProgress, claimDelivery, claimRun, claimTick, dueDeliveries, dueSchedules, finishRun, previousCompletedRun, runsToCompare,
  type AttemptRow, type DeliveryRow, type RunRow, type ScheduleRow, type WebhookRow,
} from '../db/monitoring.js';
import { stablePage } from '../domain/report/fingerprint.js';
import { nextRun } from '../domain/monitoring/cron.js';
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signatureHeader } from '../domain/monitoring/signature.js';
import { postWebhook } from '../domain/monitoring/post-webhook.js';
import { ScanFetchError } from '../domain/scan/fetch-page.js';
import type { Compute } from '../compute/compute.js';
import type { Logger } from '../telemetry/log.js';
import { checkScanTarget } from '../scans/target.js';
import { queueScanRequest } from '../scans/queue-scan.js';
import type { ScanRunner } from '../scans/runner.js';

/** New findings a delivery's body lists at most (the counts are always whole). */
export const MAX_FINDINGS_IN_BODY = 100;
/** How long an instance holds a run it compares (a comparison that outlives it is taken over). */
const COMPARE_HOLD_MS = 5 * 60_000;
/** Background comparisons may wait behind the tools' tasks. */
const COMPARE_TIMEOUT_MS = 120_000;
/** Delivery attempts made at once by one instance. */
const ATTEMPTS_AT_ONCE = 4;
/** A run recorded this recently without its scan yet is still starting (an older one was cut off before queueing). */
const STARTING_RUN_MS = 5 * 60_000;
/** How soon after a scan's follow-up work the loop looks for its run. */
const WAKE_DELAY_MS = 300;

/** The context a webhook's secret is sealed with: a sealed secret copied to another row does not open. */
export const webhookSecretContext = (webhookId: string) => `webhook:${webhookId}`;

export interface MonitorDeps {
  db: Db;
  config: Config;
  log: Logger;
  compute: Compute;
  secrets: SecretBox;
  scans: Pick<ScanRunner, 'enqueue'>;
  /** Writes an audit row (a webhook disabled by its failures). */
  audit: { write(e: { requestId: null; subject: string; orgId: string; tool: string; args: unknown; outcome: string; message?: string; durationMs: number }): Promise<void> };
}

export interface Monitor {
  start(): void;
  /** Looks again now (a scan finished). */
  wake(): void;
  stop(): Promise<void>;
  /** One tick, awaited (tests). */
  tick(): Promise<void>;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function createMonitor(deps: MonitorDeps): Monitor {
  const { db, config, log } = deps;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = true;

  async function tick() {
    await startDueRuns();
    await compareFinishedRuns();
    await attemptDueDeliveries();
  }

  /** One tick at a time; a wake during one makes another follow it. */
  function runTick() {
    if (running) {
      again = true;
      return;
    }
    if (timer) clearTimeout(timer);
    timer = null;
    running = (async () => {
      do {
        again = false;
        await tick().catch((err: unknown) => log.error({ err }, 'monitoring tick failed'));
      } while (again && !stopped);
    })().finally(() => {
      running = null;
      if (!stopped) {
        timer = setTimeout(runTick, config.monitor.tickSeconds * 1000);
        timer.unref();
      }
    });
  }

  async function startDueRuns() {
    const now = Date.now();
    for (const schedule of await dueSchedules(db, iso(now), config.monitor.perTick)) {
      if (stopped) return;
      await startRun(schedule, now).catch((err: unknown) => log.error({ err, scheduleId: schedule.id }, 'a scheduled run could not start'));
    }
  }

  async function startRun(schedule: ScheduleRow, now: number) {
    const tickAt = schedule.next_run_at!;
    const run: RunRow = {
      id: newId('run'), schedule_id: schedule.id, org_id: schedule.org_id, tick_at: tickAt, scan_id: null, previous_scan_id: null, status: 'scanning', error: null,
      new_count: null, fixed_count: null, still_present_count: null, claimed_until: null, created_at: iso(now), finished_at: null,
    };
    const next = nextRun(schedule.cron, new Date(Math.max(now, Date.parse(tickAt))));
    // A run still scanning: this tick is let go (runs never pile up behind a slow scan or a full queue).
    if (await scanInProgress(db, schedule.id, iso(now - STARTING_RUN_MS))) {
      await advanceSchedule(db, schedule.id, tickAt, next ? next.toISOString() : null);
      log.debug({ scheduleId: schedule.id, tickAt }, 'scheduled run skipped: the previous run is still scanning');
      return;
    }
    const mine = await claimTick(db, run);
    // Whoever recorded the tick, the schedule moves on (the holder may have stopped before moving it).
    await advanceSchedule(db, schedule.id, tickAt, next ? next.toISOString() : null);
    if (!mine) return;
    let url: URL;
    try {
      url = await checkScanTarget(schedule.site_url, config.scanAllowPrivateNetworks);
    } catch (err) {
      if (!(err instanceof ScanFetchError)) throw err;
      await finishRun(db, run.id, { status: 'refused', error: err.message });
      log.warn({ scheduleId: schedule.id, runId: run.id }, 'a scheduled run was refused: its site is not an allowed scan target');
      return;
    }
    const outcome = await queueScanRequest(deps, schedule.org_id, {
      site_url: url.href, standard: schedule.standard, scan_mode: schedule.scan_mode, max_pages: schedule.scan_mode === 'single' ? 1 : schedule.max_pages,
      concurrency: schedule.concurrency, jurisdictions: '[]', page_urls: null, baseline_scan_id: null,
    });
    if (outcome.kind === 'full') {
      const error = `the organization had ${outcome.waiting} scans waiting, the most it may have (SCAN_MAX_QUEUED_PER_ORG=${outcome.max}); this run was skipped`;
      await finishRun(db, run.id, { status: 'refused', error });
      log.warn({ scheduleId: schedule.id, runId: run.id, orgId: schedule.org_id }, 'a scheduled run was refused: the organization\'s scan queue is full');
      return;
    }
    await db('monitor_runs').where({ id: run.id }).update({ scan_id: outcome.row.id });
    log.info({ scheduleId: schedule.id, runId: run.id, scanId: outcome.row.id, tickAt }, 'scheduled run started');
  }

  async function compareFinishedRuns() {
    const now = Date.now();
    for (const run of await runsToCompare(db, iso(now), config.monitor.perTick)) {
      if (stopped) return;
      if (!(await claimRun(db, run.id, iso(now), iso(now + COMPARE_HOLD_MS)))) continue;
      await compareRun(run).catch(async (err: unknown) => {
        log.error({ err, runId: run.id }, 'a scheduled run could not be compared');
        // Let go, so a later tick (here or elsewhere) tries again.
        await db('monitor_runs').where({ id: run.id }).update({ claimed_until: null }).catch(() => {});
      });
    }
  }

  async function compareRun(run: RunRow & { scan_status: string }) {
    const scan = (await db<ScanRow>('scans').where({ id: run.scan_id! }).first())!;
    if (run.scan_status === 'failed') {
      await finishRun(db, run.id, { status: 'failed', error: `the scan failed: ${scan.error ?? 'no reason recorded'}`.slice(0, 2000) });
      return;
    }
    const previous = await previousCompletedRun(db, run);
    if (!previous?.scan_id) {
      await finishRun(db, run.id, { status: 'first' });
      return;
    }
    const current = (await readPages(db, scan.id)).map(({ url, issues, error }) => ({ url, issues, error }));
    const before = (await readPages(db, previous.scan_id)).map(({ url, issues }) => ({ url, issues }));
    const marks = await marksOnPages(db, run.org_id, [...current, ...before].map((p) => stablePage(p.url)));
    const { value } = await deps.compute.run(
      { kind: 'compare-findings', baseline: before, current, marks, now: new Date().toISOString() },
      { background: true, owner: run.org_id, timeoutMs: COMPARE_TIMEOUT_MS },
    );
    const { summary } = value;
    const fresh = value.findings.filter((f) => f.verdict === 'new');
    const schedule = await db<ScheduleRow>('monitor_schedules').where({ id: run.schedule_id }).first();
    await db.transaction(async (tx) => {
      await tx('monitor_runs').where({ id: run.id }).update({
        status: 'compared', previous_scan_id: previous.scan_id, new_count: summary.new, fixed_count: summary.fixed, still_present_count: summary.still_present,
        claimed_until: null, finished_at: new Date().toISOString(),
      });
      if (!fresh.length || !schedule) return;
      const hooks = (await tx<WebhookRow>('webhooks').where({ org_id: run.org_id, enabled: true })).filter((w) => (JSON.parse(w.events) as string[]).includes('findings.new'));
      const at = new Date().toISOString();
      for (const hook of hooks) {
        const id = newId('dlv');
        const body = {
          id, event: 'findings.new', createdAt: at, orgId: run.org_id,
          schedule: { scheduleId: schedule.id, siteUrl: schedule.site_url, cron: schedule.cron },
          runId: run.id, scanId: scan.id, previousScanId: previous.scan_id,
          counts: { new: summary.new, fixed: summary.fixed, still_present: summary.still_present, newByLevel: summary.newByLevel },
          findings: fresh.slice(0, MAX_FINDINGS_IN_BODY).map((f) => ({
            fingerprint: f.fingerprint, rule: f.issue.code, page: f.issue.pageUrl, level: f.issue.type, wcagCriterion: f.issue.wcagCriterion, selector: f.issue.selector, message: f.issue.message,
          })),
          findingsTruncated: fresh.length > MAX_FINDINGS_IN_BODY,
        };
        const delivery: DeliveryRow = {
          id, webhook_id: hook.id, org_id: run.org_id, event: 'findings.new', schedule_id: schedule.id, scan_id: scan.id, payload: JSON.stringify(body),
          status: 'pending', attempts: 0, next_attempt_at: at, claimed_until: null, created_at: at, finished_at: null,
        };
        await tx('webhook_deliveries').insert(delivery);
      }
    });
    log.info({ runId: run.id, scheduleId: run.schedule_id, scanId: scan.id, previousScanId: previous.scan_id, ...summary }, 'scheduled run compared with the previous one');
  }

  async function attemptDueDeliveries() {
    const now = Date.now();
    const due = await dueDeliveries(db, iso(now), config.monitor.perTick);
    for (let i = 0; i < due.length && !stopped; i += ATTEMPTS_AT_ONCE) {
      await Promise.all(due.slice(i, i + ATTEMPTS_AT_ONCE).map((d) => attempt(d).catch((err: unknown) => log.error({ err, deliveryId: d.id }, 'a webhook delivery attempt failed to run'))));
    }
  }

  async function attempt(d: DeliveryRow) {
    const { webhooks } = config;
    const now = Date.now();
    if (!(await claimDelivery(db, d, iso(now), iso(now + webhooks.timeoutMs + 30_000)))) return;
    const hook = await db<WebhookRow>('webhooks').where({ id: d.webhook_id }).first();
    if (!hook) return;
    if (!hook.enabled) {
      await db('webhook_deliveries').where({ id: d.id }).update({ status: 'failed', next_attempt_at: null, claimed_until: null, finished_at: iso(now) });
      return;
    }
    const secret = deps.secrets.open(hook.secret_sealed, webhookSecretContext(hook.id));
    const number = d.attempts + 1;
    const outcome = await postWebhook(hook.url, d.payload, { [SIGNATURE_HEADER]: signatureHeader(secret, d.payload), [DELIVERY_HEADER]: d.id, [EVENT_HEADER]: d.event }, {
      policy: { allowPrivateNetworks: config.outboundAllowPrivateNetworks }, timeoutMs: webhooks.timeoutMs, maxResponseBytes: webhooks.maxResponseBytes,
    });
    const at = iso(now);
    const row: AttemptRow = {
      id: newId('wat'), delivery_id: d.id, attempt: number, at, outcome: outcome.delivered ? 'delivered' : 'failed', http_status: outcome.httpStatus, duration_ms: outcome.durationMs, error_class: outcome.errorClass,
    };
    const fields = { webhookId: hook.id, deliveryId: d.id, orgId: hook.org_id, event: d.event, attempt: number, outcome: row.outcome, httpStatus: outcome.httpStatus, durationMs: outcome.durationMs, errorClass: outcome.errorClass };
    if (outcome.delivered) {
      await db.transaction(async (tx) => {
        await tx('webhook_attempts').insert(row);
        await tx('webhook_deliveries').where({ id: d.id }).update({ status: 'delivered', attempts: number, next_attempt_at: null, claimed_until: null, finished_at: iso(Date.now()) });
        await tx('webhooks').where({ id: hook.id }).update({ consecutive_failures: 0 });
      });
      log.info(fields, 'webhook delivered');
      return;
    }
    const last = number >= webhooks.maxAttempts;
    let disabled: string | null = null;
    await db.transaction(async (tx) => {
      await tx('webhook_attempts').insert(row);
      if (!last) {
        const wait = webhooks.retryBaseMs * 2 ** (number - 1);
        await tx('webhook_deliveries').where({ id: d.id }).update({ attempts: number, next_attempt_at: iso(Date.now() + wait), claimed_until: null });
        return;
      }
      await tx('webhook_deliveries').where({ id: d.id }).update({ status: 'failed', attempts: number, next_attempt_at: null, claimed_until: null, finished_at: iso(Date.now()) });
      const current = await tx<WebhookRow>('webhooks').where({ id: hook.id }).first();
      if (!current) return;
      const failures = current.consecutive_failures + 1;
      if (failures >= webhooks.disableAfter && current.enabled) {
        disabled = `disabled after ${failures} deliveries in a row failed every attempt (WEBHOOK_DISABLE_AFTER=${webhooks.disableAfter}); the last attempt: ${outcome.errorClass}${outcome.httpStatus ? ` ${outcome.httpStatus}` : ''}`;
        await tx('webhooks').where({ id: hook.id }).update({ consecutive_failures: failures, enabled: false, disabled_reason: disabled, disabled_at: at });
        // Its other deliveries will not be attempted.
        await tx('webhook_deliveries').where({ webhook_id: hook.id, status: 'pending' }).update({ status: 'failed', next_attempt_at: null, finished_at: at });
      } else {
        await tx('webhooks').where({ id: hook.id }).update({ consecutive_failures: failures });
      }
    });
    log.warn({ ...fields, finalAttempt: last }, 'webhook delivery attempt failed');
    if (disabled) {
      log.warn({ webhookId: hook.id, orgId: hook.org_id, reason: disabled }, 'webhook disabled');
      await deps.audit.write({ requestId: null, subject: 'pactum', orgId: hook.org_id, tool: 'monitoring.webhook_disabled', args: { webhookId: hook.id }, outcome: 'disabled', message: disabled, durationMs: 0 });
    }
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      runTick();
    },
    wake() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      // The scan's row says it finished a moment after the scan's follow-up work: look then.
      if (timer) clearTimeout(timer);
      timer = setTimeout(runTick, WAKE_DELAY_MS);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
    tick,
  };
}
