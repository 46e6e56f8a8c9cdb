/**
 * Scans, their pages and the org's sites as stored. Progress and reports are read from the rows
 * on every call, so a client always sees the scan as it is now.
 */
import type { components } from '../../generated/types/dashboard.js';
import { newId } from '../ground/ids.js';
import { withFingerprints } from '../domain/report/fingerprint.js';
import type { Db } from './knex.js';

type S = components['schemas'];
export type Scan = S['scan'];
export type ScanProgress = S['scan-progress'];
export type ScanReport = S['scan-report'];
export type Report = S['report'];
export type Issue = S['issue'];
export type ReportDigest = S['report-digest'];

export interface ScanRow {
  id: string;
  org_id: string;
  site_id: string;
  site_url: string;
  standard: Scan['standard'];
  scan_mode: Scan['scanMode'];
  max_pages: number;
  concurrency: number;
  jurisdictions: string;
  status: Scan['status'];
  pages_scanned: number;
  total_pages: number | null;
  total_issues: number | null;
  summary: string | null;
  error: string | null;
  attempts: number;
  /** What claimed it to run (a queue job, or this process): set while it runs, kept when a shutdown requeues it for the same job's retry. */
  job_id?: string | null;
  /** Which engine checked the pages (null for scans from before engines were recorded). */
  engine?: 'chromium' | 'jsdom' | null;
  /** JSON array: the pages the scan checks, and only those (a rescan verifying fixes); null or absent for a crawl. */
  page_urls?: string | null;
  /** The scan whose findings this one verifies. */
  baseline_scan_id?: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  last_updated: string;
}

export interface PageRow {
  scan_id: string;
  seq: number;
  url: string;
  title: string | null;
  issue_count: number;
  error: string | null;
  issues: string;
  style: string | null;
  not_evaluated?: string | null;
}

/** A scan that ran to its end, whether or not every page could be checked. */
export const finishedWithReport = (status: Scan['status']) => status === 'completed' || status === 'completed_with_errors';

/** The site a URL belongs to, created on first sight: origin plus path, without query or fragment. */
export function siteKey(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

export async function siteOf(db: Db, orgId: string, url: string): Promise<string> {
  const key = siteKey(url);
  await db('sites').insert({ id: newId('site'), org_id: orgId, url: key, created_at: new Date().toISOString() }).onConflict(['org_id', 'url']).ignore();
  return (await db('sites').where({ org_id: orgId, url: key }).first<{ id: string }>('id')).id;
}

export const findScan = (db: Db, id: string) => db<ScanRow>('scans').where({ id }).first();

export const toScan = (r: ScanRow): Scan => ({
  scanId: r.id,
  orgId: r.org_id,
  siteUrl: r.site_url,
  standard: r.standard,
  scanMode: r.scan_mode,
  maxPages: r.max_pages,
  jurisdictions: JSON.parse(r.jurisdictions) as Scan['jurisdictions'],
  status: r.status,
  pagesScanned: r.pages_scanned,
  totalIssues: r.total_issues,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  error: r.error,
});

/**
 * Progress as of `now`. The ETA comes from the rate measured so far (pages per second since the
 * scan started); it is null unless the scan is running and at least one page is done.
 */
export function toProgress(r: ScanRow, now = Date.now()): ScanProgress {
  let etaSeconds: number | null = null;
  if (r.status === 'running' && r.started_at && r.pages_scanned > 0 && r.total_pages !== null) {
    const elapsed = (now - Date.parse(r.started_at)) / 1000;
    const perPage = elapsed / r.pages_scanned;
    etaSeconds = Math.round(Math.max(0, r.total_pages - r.pages_scanned) * perPage * 10) / 10;
  }
  return {
    scanId: r.id,
    status: r.status,
    pagesScanned: r.pages_scanned,
    totalPages: r.total_pages,
    etaSeconds,
    lastUpdated: r.last_updated,
    finished: finishedWithReport(r.status) || r.status === 'failed',
    siteUrl: r.site_url,
    error: r.error,
  };
}

export async function readPages(db: Db, scanId: string): Promise<PageRow[]> {
  return db<PageRow>('scan_pages').where({ scan_id: scanId }).orderBy('seq');
}

/** A page's place and size, without its issues: what a reader plans its batches from. */
export interface PageOutline {
  seq: number;
  issue_count: number;
}

/** A run of consecutive pages: seq from `from` to `to`, inclusive, and its place among the scan's pages. */
export interface PageBatch {
  from: number;
  to: number;
  /** The position of its first page among the scan's pages (0-based). */
  firstIndex: number;
}

/** Every page's seq and issue count, in order: one small row per page (a scan has at most 1000). */
export const pageOutline = (db: Db, scanId: string): Promise<PageOutline[]> =>
  db<PageRow>('scan_pages').where({ scan_id: scanId }).orderBy('seq').select('seq', 'issue_count');

/**
 * The pages in runs of about `issues` issues (a page with more is a run of its own) and at most
 * `pages` pages: what a reader holds at once, however large the report.
 */
export function pageBatches(outline: readonly PageOutline[], limits: { issues: number; pages: number }): PageBatch[] {
  const batches: PageBatch[] = [];
  let current: (PageBatch & { issues: number; pages: number }) | null = null;
  outline.forEach((page, index) => {
    if (current && (current.issues + page.issue_count > limits.issues || current.pages >= limits.pages)) current = null;
    if (!current) {
      current = { from: page.seq, to: page.seq, firstIndex: index, issues: 0, pages: 0 };
      batches.push(current);
    }
    current.to = page.seq;
    current.issues += page.issue_count;
    current.pages++;
  });
  return batches.map(({ from, to, firstIndex }) => ({ from, to, firstIndex }));
}

/** A page as a report reads it: without its style statistics (brand scoring's). */
export type ReportPageRow = Pick<PageRow, 'url' | 'title' | 'issue_count' | 'error' | 'issues' | 'not_evaluated'>;

/** The pages of one batch, in order. */
export const readPageBatch = (db: Db, scanId: string, batch: PageBatch): Promise<ReportPageRow[]> =>
  db<PageRow>('scan_pages').where({ scan_id: scanId }).whereBetween('seq', [batch.from, batch.to]).orderBy('seq')
    .select('url', 'title', 'issue_count', 'error', 'issues', 'not_evaluated');

/** The pages that could not be checked (url and why), in order: small rows, at most one per page. */
export const failedPages = (db: Db, scanId: string): Promise<{ url: string; error: string }[]> =>
  db<PageRow>('scan_pages').where({ scan_id: scanId }).whereNotNull('error').orderBy('seq').select('url', 'error') as unknown as Promise<{ url: string; error: string }[]>;

export const toPageReport = (p: PageRow) => ({
  url: p.url,
  title: p.title,
  issueCount: p.issue_count,
  error: p.error,
  notEvaluated: p.not_evaluated ? (JSON.parse(p.not_evaluated) as NonNullable<S['page-report']['notEvaluated']>) : [],
  // Computed as read: the same scheme names findings of every scan, old or new.
  issues: withFingerprints(p.url, JSON.parse(p.issues) as Issue[]),
});

/** What every view of a scan's report starts with; the report itself only once the scan has one. */
export const reportBase = (r: ScanRow): ScanReport => ({ scanId: r.id, status: r.status, siteUrl: r.site_url, standard: r.standard, finishedAt: r.finished_at, error: r.error });

/** Whether the scan has a stored report (it finished, with its summary). */
export const hasReport = (r: ScanRow): r is ScanRow & { summary: string } => finishedWithReport(r.status) && r.summary !== null;

/**
 * The report (view pages): every page with its issues. The digest view is computed from the same
 * rows in the compute pool (compute/tasks.ts).
 */
export async function readReport(db: Db, r: ScanRow): Promise<ScanReport> {
  const base = reportBase(r);
  if (!hasReport(r)) return base;
  const pages = (await readPages(db, r.id)).map(toPageReport);
  const summary = { notEvaluated: [], ...JSON.parse(r.summary) } as Report['summary'];
  const report: Report = { ...(r.engine ? { engine: r.engine } : {}), summary, pages };
  return { ...base, report };
}
