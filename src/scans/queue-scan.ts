/**
 * Storing a scan and queueing it, within its org's limits: what dashboard_scan_site, a rescan of
 * dashboard_verify_fixes and a schedule's run all go through, so each waits in the same fair
 * queue under the same quotas. An org with SCAN_MAX_QUEUED_PER_ORG scans waiting is refused
 * before anything is stored, not even the site.
 */
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import { siteOf, type ScanRow } from '../db/scans.js';
import { newId } from '../ground/ids.js';
import { admitScan, queuedOf, retryAfter } from './claims.js';
import { failScan } from './execute.js';
import type { ScanRunner } from './runner.js';

/** What a new scan is asked to do; the rest of its row is the queue's. */
export type ScanRequest = Pick<ScanRow, 'site_url' | 'standard' | 'scan_mode' | 'max_pages' | 'concurrency' | 'jurisdictions'> & Pick<ScanRow, 'page_urls' | 'baseline_scan_id'>;

export type QueueOutcome =
  | { kind: 'queued'; row: ScanRow }
  /** The org's queue is full: `waiting` scans, the most it may have (`max`); a retry may succeed after `retryAfterSeconds`. */
  | { kind: 'full'; waiting: number; max: number; retryAfterSeconds: number };

export async function queueScanRequest(s: { config: Config; db: Db; scans: Pick<ScanRunner, 'enqueue'> }, orgId: string, request: ScanRequest): Promise<QueueOutcome> {
  const { db, config } = s;
  const limits = { maxQueued: config.scanMaxQueuedPerOrg, maxRunning: config.scanMaxRunningPerOrg };
  // admitScan checks again, atomically.
  const waiting = await queuedOf(db, orgId);
  if (waiting >= limits.maxQueued) return { kind: 'full', waiting, max: limits.maxQueued, retryAfterSeconds: await retryAfter(db, orgId, limits.maxRunning) };
  const t = new Date().toISOString();
  const row: ScanRow = {
    id: newId('scn'), org_id: orgId, site_id: await siteOf(db, orgId, request.site_url), ...request, status: 'queued', pages_scanned: 0, total_pages: null, total_issues: null,
    summary: null, error: null, attempts: 0, created_at: t, started_at: null, finished_at: null, last_updated: t,
  };
  const admission = await admitScan(db, row, limits);
  if (!admission.admitted) return { kind: 'full', waiting: admission.queued, max: limits.maxQueued, retryAfterSeconds: admission.retryAfterSeconds };
  try {
    await s.scans.enqueue(row.id);
  } catch (err) {
    await failScan(db, row.id, 'the scan could not be queued');
    throw err;
  }
  return { kind: 'queued', row };
}
