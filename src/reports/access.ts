/**
 * A scan's report as people and pipelines read it, for the tool (dashboard_get_report view app)
 * and the report page and exports alike: the same org scoping, the model built in the compute
 * pool from the stored rows.
 */
import type { Compute } from '../compute/compute.js';
import type { StoredReport } from '../compute/tasks.js';
import type { Db } from '../db/knex.js';
import { findScan, hasReport, readPages, type PageRow, type ScanRow } from '../db/scans.js';
import type { Identity } from '../domain/access/identity.js';
import { isSystemAdmin } from '../domain/access/identity.js';
import { grants } from '../domain/access/permissions.js';
import { marksOnPages } from '../db/marks.js';
import { stablePage } from '../domain/report/fingerprint.js';
import type { MarkIndex } from '../domain/report/marks.js';

export type ReportAccess = { ok: true; scan: ScanRow } | { ok: false; why: 'forbidden' | 'not_found' };

/** The scan, when `caller` may read its report: reports.view, and the scan in the caller's org (admin.system: any). */
export async function readableScan(db: Db, caller: Identity, scanId: string): Promise<ReportAccess> {
  if (!grants(caller.permissions, 'reports.view')) return { ok: false, why: 'forbidden' };
  const scan = await findScan(db, scanId);
  if (!scan || (scan.org_id !== caller.orgId && !isSystemAdmin(caller))) return { ok: false, why: 'not_found' };
  return { ok: true, scan };
}

/** The facts of a finished scan's row a report states: which scan, its engine, when it finished. */
export const scanFacts = (scan: ScanRow): StoredReport['scan'] => ({ scanId: scan.id, siteUrl: scan.site_url, standard: scan.standard, status: scan.status, engine: scan.engine ?? null, finishedAt: scan.finished_at });

/** The scan's brand score (overall), when one was scored. */
export async function brandScoreOf(db: Db, scanId: string): Promise<number | null> {
  const brand = await db('brand_scores').where({ scan_id: scanId }).first<{ score: string } | undefined>();
  const score = brand ? (JSON.parse(brand.score) as { kind: string; overall?: number }) : null;
  return score?.kind === 'scored' && typeof score.overall === 'number' ? score.overall : null;
}

/** Reviewers' marks of the findings on the scan's pages, by fingerprint (they follow findings across scans). */
export async function scanMarks(db: Db, scan: Pick<ScanRow, 'id' | 'org_id'>): Promise<MarkIndex> {
  const rows: Pick<PageRow, 'url'>[] = await db<PageRow>('scan_pages').where({ scan_id: scan.id }).select('url');
  const urls = rows.map((r) => r.url);
  return marksOnPages(db, scan.org_id, urls.map(stablePage));
}

/** A finished scan's stored facts, summary, pages and brand score: the compute tasks' input. */
export async function storedReport(db: Db, scan: ScanRow & { summary: string }): Promise<StoredReport> {
  const pages = (await readPages(db, scan.id)).map(({ url, title, issue_count, error, issues, not_evaluated }) => ({ url, title, issue_count, error, issues, not_evaluated }));
  return { scan: scanFacts(scan), summary: scan.summary, pages, brandScore: await brandScoreOf(db, scan.id) };
}

export { hasReport };
export type { Compute };
