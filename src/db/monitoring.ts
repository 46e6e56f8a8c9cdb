/**
 * Monitoring's rows: schedules, their runs, webhooks, deliveries and delivery attempts (migration
 * 026). Claims are conditional updates (a run's comparison, a delivery's attempt): whichever
 * instance's update changes the row holds it, the others move on.
 */
import type { Knex } from 'knex';
import type { Db } from './knex.js';
import type { components } from '../../generated/types/dashboard.js';

export type MonitorSchedule = components['schemas']['monitor-schedule'];
export type Webhook = components['schemas']['webhook'];
export type WebhookEvent = components['schemas']['webhook-event'];
type RunStatus = MonitorSchedule['recentRuns'][number]['status'];

export interface ScheduleRow {
  id: string;
  org_id: string;
  site_url: string;
  cron: string;
  standard: MonitorSchedule['standard'];
  scan_mode: MonitorSchedule['scanMode'];
  max_pages: number;
  concurrency: number;
  enabled: boolean | number;
  next_run_at: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface RunRow {
  id: string;
  schedule_id: string;
  org_id: string;
  tick_at: string;
  scan_id: string | null;
  previous_scan_id: string | null;
  status: RunStatus;
  error: string | null;
  new_count: number | null;
  fixed_count: number | null;
  still_present_count: number | null;
  claimed_until: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface WebhookRow {
  id: string;
  org_id: string;
  url: string;
  secret_sealed: string;
  events: string;
  enabled: boolean | number;
  disabled_reason: string | null;
  disabled_at: string | null;
  consecutive_failures: number;
  created_by: string;
  created_at: string;
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  org_id: string;
  event: WebhookEvent;
  schedule_id: string | null;
  scan_id: string | null;
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  claimed_until: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface AttemptRow {
  id: string;
  delivery_id: string;
  attempt: number;
  at: string;
  outcome: 'delivered' | 'failed';
  http_status: number | null;
  duration_ms: number;
  error_class: string | null;
}

/** Rows no instance holds at `now`: never claimed, or their claim has run out. */
const unheld = (column: string, now: string) => (q: Knex.QueryBuilder) => {
  void q.whereNull(column).orWhere(column, '<', now);
};

/** The runs a schedule lists, newest first. */
export const RECENT_RUNS = 10;

export function toRun(r: RunRow): MonitorSchedule['recentRuns'][number] {
  return {
    runId: r.id, tickAt: r.tick_at, scanId: r.scan_id, previousScanId: r.previous_scan_id, status: r.status, error: r.error,
    counts: r.new_count === null ? null : { new: r.new_count, fixed: r.fixed_count ?? 0, still_present: r.still_present_count ?? 0 },
  };
}

export function toSchedule(s: ScheduleRow, runs: RunRow[]): MonitorSchedule {
  return {
    scheduleId: s.id, siteUrl: s.site_url, cron: s.cron, standard: s.standard, scanMode: s.scan_mode, maxPages: s.max_pages, concurrency: s.concurrency,
    enabled: Boolean(s.enabled), nextRunAt: s.enabled ? s.next_run_at : null, createdAt: s.created_at, updatedAt: s.updated_at, recentRuns: runs.map(toRun),
  };
}

export function toWebhook(w: WebhookRow): Webhook {
  return {
    webhookId: w.id, url: w.url, events: JSON.parse(w.events) as WebhookEvent[], enabled: Boolean(w.enabled), disabledReason: w.disabled_reason,
    disabledAt: w.disabled_at, consecutiveFailures: w.consecutive_failures, createdAt: w.created_at,
  };
}

export async function recentRuns(db: Db, scheduleId: string): Promise<RunRow[]> {
  return db<RunRow>('monitor_runs').where({ schedule_id: scheduleId }).orderBy('tick_at', 'desc').limit(RECENT_RUNS);
}

export async function schedulesOf(db: Db, orgId: string): Promise<ScheduleRow[]> {
  return db<ScheduleRow>('monitor_schedules').where({ org_id: orgId }).orderBy('created_at').orderBy('id');
}

export async function countSchedules(db: Db, orgId: string): Promise<number> {
  const row = await db('monitor_schedules').where({ org_id: orgId }).count<{ n: number | string }[]>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** Schedules whose run is due at `now`, the earliest first, at most `limit`. */
export async function dueSchedules(db: Db, now: string, limit: number): Promise<ScheduleRow[]> {
  return db<ScheduleRow>('monitor_schedules').where({ enabled: true }).whereNotNull('next_run_at').where('next_run_at', '<=', now).orderBy('next_run_at').limit(limit);
}

/**
 * Records the run of `schedule` for the tick `tickAt`, unless an instance already did: the
 * (schedule, tick) key is unique. Whether this call made it.
 */
export async function claimTick(db: Db, run: RunRow): Promise<boolean> {
  await db('monitor_runs').insert(run).onConflict(['schedule_id', 'tick_at']).ignore();
  const row = await db<RunRow>('monitor_runs').where({ schedule_id: run.schedule_id, tick_at: run.tick_at }).first('id');
  return row?.id === run.id;
}

/**
 * Whether the schedule has a run still scanning: its scan queued or running, or the run recorded
 * after `startingSince` and its scan not queued yet.
 */
export async function scanInProgress(db: Db, scheduleId: string, startingSince: string): Promise<boolean> {
  const row: { id: string } | undefined = await db('monitor_runs as r')
    .leftJoin('scans as s', 's.id', 'r.scan_id')
    .where({ 'r.schedule_id': scheduleId, 'r.status': 'scanning' })
    .where((q) => {
      q.whereIn('s.status', ['queued', 'running']).orWhere((q2) => {
        q2.whereNull('r.scan_id').where('r.created_at', '>', startingSince);
      });
    })
    .first<{ id: string } | undefined>('r.id');
  return row !== undefined;
}

/** Moves the schedule's next run on from `tickAt` (only if no one moved it meanwhile). */
export async function advanceSchedule(db: Db, scheduleId: string, tickAt: string, next: string | null) {
  await db('monitor_schedules').where({ id: scheduleId, next_run_at: tickAt }).update({ next_run_at: next });
}

/** Scheduled runs whose scan has finished and that no instance is comparing now, at most `limit`. */
export async function runsToCompare(db: Db, now: string, limit: number): Promise<(RunRow & { scan_status: string })[]> {
  return db('monitor_runs as r')
    .join('scans as s', 's.id', 'r.scan_id')
    .where('r.status', 'scanning')
    .whereIn('s.status', ['completed', 'completed_with_errors', 'failed'])
    .where(unheld('r.claimed_until', now))
    .orderBy('r.created_at')
    .limit(limit)
    .select('r.*', 's.status as scan_status');
}

/** Holds run `id` for comparing until `until`; whether this call got it. */
export async function claimRun(db: Db, id: string, now: string, until: string): Promise<boolean> {
  const n = await db('monitor_runs').where({ id, status: 'scanning' }).where(unheld('claimed_until', now)).update({ claimed_until: until });
  return n === 1;
}

/** The schedule's latest run before `run` whose scan completed (what `run` is compared with). */
export async function previousCompletedRun(db: Db, run: RunRow): Promise<RunRow | undefined> {
  return db<RunRow>('monitor_runs')
    .where({ schedule_id: run.schedule_id })
    .where('tick_at', '<', run.tick_at)
    .whereIn('status', ['compared', 'first'])
    .orderBy('tick_at', 'desc')
    .first();
}

export async function finishRun(db: Db, id: string, changes: Partial<RunRow>) {
  await db('monitor_runs').where({ id }).update({ ...changes, claimed_until: null, finished_at: new Date().toISOString() });
}

export async function webhooksOf(db: Db, orgId: string): Promise<WebhookRow[]> {
  return db<WebhookRow>('webhooks').where({ org_id: orgId }).orderBy('created_at').orderBy('id');
}

export async function countWebhooks(db: Db, orgId: string): Promise<number> {
  const row = await db('webhooks').where({ org_id: orgId }).count<{ n: number | string }[]>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** Deliveries whose attempt is due and that no instance holds, the oldest first, at most `limit`. */
export async function dueDeliveries(db: Db, now: string, limit: number): Promise<DeliveryRow[]> {
  return db<DeliveryRow>('webhook_deliveries')
    .where({ status: 'pending' })
    .where('next_attempt_at', '<=', now)
    .where(unheld('claimed_until', now))
    .orderBy('next_attempt_at')
    .limit(limit);
}

/** Holds delivery `id` for an attempt until `until`; whether this call got it. */
export async function claimDelivery(db: Db, d: DeliveryRow, now: string, until: string): Promise<boolean> {
  const n = await db('webhook_deliveries')
    .where({ id: d.id, status: 'pending', attempts: d.attempts })
    .where(unheld('claimed_until', now))
    .update({ claimed_until: until });
  return n === 1;
}

export async function deliveriesOf(db: Db, webhookId: string, limit: number): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] }[]> {
  const rows = await db<DeliveryRow>('webhook_deliveries').where({ webhook_id: webhookId }).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
  const attempts = rows.length ? await db<AttemptRow>('webhook_attempts').whereIn('delivery_id', rows.map((r) => r.id)).orderBy('attempt') : [];
  return rows.map((delivery) => ({ delivery, attempts: attempts.filter((a) => a.delivery_id === delivery.id) }));
}
