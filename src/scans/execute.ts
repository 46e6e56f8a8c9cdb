/**
 * One attempt at a scan, once claimed (claims.ts marks it running): crawl and check its pages
 * (each page written as it finishes, so progress is live), then mark it completed or failed. Which
 * queue called it, which scan it chose and how often it was tried is the caller's business
 * (runner.ts, claims.ts).
 */
import type { Knex } from 'knex';
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import { findScan, type ScanRow } from '../db/scans.js';
// Not the engine's index: that would load jsdom and axe-core here, where only workers need them.
import { ScanFetchError } from '../domain/scan/fetch-page.js';
import type { ScanEngine } from '../domain/scan/engine.js';
import { scanSite, type ShotBudget } from '../domain/scan/scan-site.js';
import type { EngineName, Issue } from '../domain/scan/types.js';
import type { ElementShot } from '../domain/scan/types.js';
import type { ScreenshotStore } from '../reports/screenshots.js';
import type { Logger } from '../telemetry/log.js';

const now = () => new Date().toISOString();

export interface ScanDeps {
  db: Db;
  config: Config;
  log: Logger;
  engine: () => ScanEngine;
  fetchOptions: () => { allowPrivateNetworks: boolean; userAgent: string };
  onCompleted?(scan: ScanRow): Promise<void>;
  /** Where screenshots of failing elements go, and how many to take (Chromium); absent: none. */
  screenshots?: { store: ScreenshotStore; budget: ShotBudget };
  /** Told how long storing each page took (its screenshots and its row), by engine: the `store` phase of pactum_scan_phase_seconds. */
  storeTimed?(engine: EngineName, seconds: number): void;
}

/** Screenshots a scan took but did not keep, and why (the last reason given). */
interface SkippedShots { count: number; reason: string | null }

/**
 * Stores a page's screenshots and names each on the issues it shows. A shot the org's quota or the
 * store's free space has no room for is counted in `skipped` (the report says why); one that fails
 * to be written is left out with a warning.
 */
async function storeShots(deps: ScanDeps, scan: { id: string; org_id: string }, issues: Issue[], shots: readonly ElementShot[] | undefined, skipped: SkippedShots): Promise<Issue[]> {
  if (!shots?.length || !deps.screenshots) return issues;
  const named = issues.map((issue) => ({ ...issue }));
  for (const shot of shots) {
    try {
      const outcome = await deps.screenshots.store.put(scan.org_id, scan.id, shot);
      if ('skipped' in outcome) {
        skipped.count++;
        skipped.reason = outcome.skipped;
        continue;
      }
      for (const i of shot.issues) if (named[i]) named[i].screenshot = outcome.id;
    } catch (err) {
      deps.log.warn({ err: (err as Error).message, scanId: scan.id }, 'a screenshot could not be stored; the issue is reported without it');
    }
  }
  return named;
}

/** Why a scan was cut short: the process is stopping (run it again later) or it ran out of time. */
export class ScanInterrupted extends Error {
  constructor(readonly why: 'stopping' | 'timeout') {
    super(why === 'stopping' ? 'shutting down' : 'the scan took too long');
  }
}

/** Why a scan stopped without finishing: its caller cancelled it (cancelScan); its row already says so. */
export class ScanCancelled extends Error {
  constructor() {
    super('cancelled by its caller');
  }
}

/**
 * Runs scan `scan`, already claimed and marked running (claims.ts). Returns 'interrupted' when
 * `signal` aborted it for shutdown: the scan is back in the queue state, still claimed by the same
 * claimant, so that the claimant's retry runs it again.
 */
export async function executeScan(deps: ScanDeps, scan: ScanRow, signal: AbortSignal): Promise<'done' | 'interrupted'> {
  const { db, log, config } = deps;
  const id = scan.id;
  const timeout = AbortSignal.timeout(config.scanTimeoutSeconds * 1000);
  const both = AbortSignal.any([signal, timeout]);
  let seq = 0;
  const skipped: SkippedShots = { count: 0, reason: null };
  try {
    // An attempt starts from scratch: images of an earlier one go, as its pages did.
    await deps.screenshots?.store.removeScan(id);
    const report = await scanSite(
      {
        siteUrl: scan.site_url, mode: scan.scan_mode, maxPages: scan.max_pages, concurrency: scan.concurrency, standard: scan.standard,
        ...(scan.page_urls ? { pages: JSON.parse(scan.page_urls) as string[] } : {}),
      },
      // Style statistics feed only the brand score, which needs the org's guideline. The org owns
      // the pages: orgs' pages take turns for the engine's slots.
      {
        fetch: deps.fetchOptions(), engine: deps.engine(), owner: scan.org_id, styles: Boolean(await db('brand_guidelines').where({ org_id: scan.org_id }).first()), signal: both,
        ...(deps.screenshots ? { screenshots: deps.screenshots.budget } : {}),
      },
      {
        onPagesFound: async (total) => {
          await db('scans').where({ id }).update({ total_pages: total, last_updated: now() });
        },
        onPageDone: async (page) => {
          const started = performance.now();
          const issues = await storeShots(deps, scan, page.issues, page.screenshots, skipped);
          await db.transaction(async (tx) => {
            await tx('scan_pages').insert({
              scan_id: id, seq: seq++, url: page.url, title: page.title, issue_count: page.issueCount, error: page.error ?? null,
              issues: JSON.stringify(issues), style: page.style ? JSON.stringify(page.style) : null, not_evaluated: JSON.stringify(page.notEvaluated ?? []),
            });
            await tx('scans').where({ id }).increment('pages_scanned', 1).update({ last_updated: now() });
          });
          deps.storeTimed?.(deps.engine().name, (performance.now() - started) / 1000);
        },
      },
    );
    // A page that could not be fetched or checked is never passed off as clean: the status says so.
    const status = report.summary.pagesFailed > 0 ? 'completed_with_errors' : 'completed';
    // What follows a scan (its brand score) is done before the scan says it is complete, so that a
    // client that sees "completed" finds everything a completed scan has.
    const row = await findScan(db, id);
    // A scan cancelled meanwhile has no report to follow up.
    if (row?.status === 'running' && deps.onCompleted) {
      await deps.onCompleted({ ...row, status, engine: report.engine ?? null, total_issues: report.summary.totalIssues }).catch((err) => log.error({ err, scanId: id }, 'after-scan work failed'));
    }
    const finished = now();
    // Only a scan still running: one cancelled meanwhile stays as its cancellation left it.
    await db('scans').where({ id, status: 'running' }).update({
      status, engine: report.engine ?? null, finished_at: finished, last_updated: finished, total_issues: report.summary.totalIssues, error: null,
      summary: JSON.stringify({ ...report.summary, ...(skipped.count ? { screenshotsSkipped: { count: skipped.count, reason: skipped.reason } } : {}) }),
    });
    return 'done';
  } catch (err) {
    // Cancelled: the row was marked when it was cancelled, and this run only stops.
    if (signal.aborted && signal.reason instanceof ScanCancelled) return 'done';
    if (signal.aborted) {
      await requeueScan(db, id);
      return 'interrupted';
    }
    const reason = timeout.aborted
      ? `the scan took longer than ${config.scanTimeoutSeconds} seconds (SCAN_TIMEOUT_SECONDS)`
      : err instanceof ScanFetchError
        ? err.message
        : `the scan failed: ${(err as Error).message}`;
    if (!(err instanceof ScanFetchError) && !timeout.aborted) log.error({ err, scanId: id }, 'scan failed');
    await failScan(db, id, reason);
    return 'done';
  }
}

export async function requeueScan(db: Db, id: string) {
  await db('scan_pages').where({ scan_id: id }).delete();
  // Not a scan that finished meanwhile (cancelled): it stays as it is.
  await db('scans').where({ id }).whereIn('status', ['queued', 'running']).update({ status: 'queued', pages_scanned: 0, total_pages: null, started_at: null, last_updated: now() });
}

/**
 * Cancels a scan that has not finished: marked failed with `reason`, which frees its place at once
 * (among the org's waiting scans, or among its running ones); the worker running it, on whichever
 * instance, stops when it next looks (runner.ts). False when it had already finished.
 */
export async function cancelScan(db: Db | Knex.Transaction, id: string, reason: string): Promise<boolean> {
  const t = now();
  const changed = await db('scans').where({ id }).whereIn('status', ['queued', 'running']).update({ status: 'failed', error: reason, finished_at: t, last_updated: t });
  return changed > 0;
}

/** Marks a scan failed with its reason, unless it already finished. */
export async function failScan(db: Db, id: string, reason: string) {
  const t = now();
  await db('scans').where({ id }).whereIn('status', ['queued', 'running']).update({ status: 'failed', error: reason, finished_at: t, last_updated: t });
}
