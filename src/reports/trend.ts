/**
 * The trend of a site's open findings: for the last runs of the same site (the same normalised
 * target URL, `sites`, in the same organization) up to and including a scan, the findings still
 * to fix by level. A run is a scan that finished with a report; the rescans that verify fixes
 * check a few pages only and are left out. Open findings are a run's issues less those a person
 * dismissed (marks.ts: false positive, accepted until its expiry, review passed), as the marks
 * stand now: a mark follows its finding's fingerprint into every run.
 *
 * Only the pages that carry a dismissing mark are read and fingerprinted (in the compute pool);
 * every other count comes from the runs' stored summaries, so a trend costs a few small reads.
 */
import type { Db } from '../db/knex.js';
import type { MarkRow } from '../db/marks.js';
import type { PageRow, ScanRow } from '../db/scans.js';
import { stablePage } from '../domain/report/fingerprint.js';
import type { MarkIndex } from '../domain/report/marks.js';
import type { ReportView } from '../domain/report/view-model.js';
import type { ByLevel } from '../domain/scan/types.js';

/** Runs a trend shows at most. */
export const TREND_RUNS = 12;

export type TrendPoint = NonNullable<ReportView['trend']>[number];

/** Counts the dismissed findings of some pages of a run (the compute pool's task `dismissed-by-level`). */
export type DismissedCounter = (pages: Pick<PageRow, 'url' | 'issues'>[], marks: MarkIndex, now: string) => Promise<ByLevel>;

/** Bound values a statement, well under SQLite's 999. */
const CHUNK = 500;

const MARK_COLUMNS = ['fingerprint', 'mark', 'reason', 'expires_at', 'marked_by', 'marked_at', 'review_outcome', 'review_note', 'reviewed_by', 'reviewed_at', 'page_url'] as const;

/** The org's marks that may dismiss a finding (a mark of false positive or acceptance, a passed review) on these pages (canonical URLs). */
async function dismissingMarks(db: Db, orgId: string, pageKeys: readonly string[]): Promise<Pick<MarkRow, (typeof MARK_COLUMNS)[number]>[]> {
  const unique = [...new Set(pageKeys)];
  const rows: Pick<MarkRow, (typeof MARK_COLUMNS)[number]>[] = [];
  for (let i = 0; i < unique.length; i += CHUNK) {
    rows.push(...(await db<MarkRow>('finding_marks').where({ org_id: orgId }).whereIn('page_url', unique.slice(i, i + CHUNK))
      .where((q) => void q.whereIn('mark', ['false_positive', 'accepted']).orWhere('review_outcome', 'pass')).select(...MARK_COLUMNS)));
  }
  return rows;
}

/** The open findings by level of the site's last runs up to `scan` (itself included unless it verifies fixes), oldest first. */
export async function siteTrend(db: Db, scan: Pick<ScanRow, 'id' | 'org_id' | 'site_id' | 'finished_at'>, dismissed: DismissedCounter): Promise<TrendPoint[]> {
  if (!scan.finished_at) return [];
  const runs = (await db<ScanRow>('scans')
    .where({ org_id: scan.org_id, site_id: scan.site_id })
    .whereIn('status', ['completed', 'completed_with_errors'])
    .whereNotNull('summary').whereNull('baseline_scan_id')
    .where('finished_at', '<=', scan.finished_at)
    .orderBy([{ column: 'finished_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(TREND_RUNS)
    .select('id', 'summary', 'finished_at')).reverse() as (Pick<ScanRow, 'id' | 'finished_at'> & { summary: string })[];
  if (!runs.length) return [];
  const pages: Pick<PageRow, 'scan_id' | 'seq' | 'url'>[] = await db<PageRow>('scan_pages').whereIn('scan_id', runs.map((r) => r.id)).whereNull('error').select('scan_id', 'seq', 'url');
  const marks = await dismissingMarks(db, scan.org_id, pages.map((p) => stablePage(p.url)));
  const markedPages = new Set(marks.map((m) => m.page_url));
  const index: MarkIndex = Object.fromEntries(marks.map(({ page_url: _page, ...m }) => [m.fingerprint, m]));
  const now = new Date().toISOString();
  const points: TrendPoint[] = [];
  for (const run of runs) {
    const total = (JSON.parse(run.summary) as { byLevel: ByLevel }).byLevel;
    const seqs = pages.filter((p) => p.scan_id === run.id && markedPages.has(stablePage(p.url))).map((p) => p.seq);
    let less: ByLevel = { error: 0, warning: 0, notice: 0 };
    if (seqs.length) {
      const marked: Pick<PageRow, 'url' | 'issues'>[] = [];
      for (let i = 0; i < seqs.length; i += CHUNK) {
        marked.push(...(await db<PageRow>('scan_pages').where({ scan_id: run.id }).whereIn('seq', seqs.slice(i, i + CHUNK)).orderBy('seq').select('url', 'issues')));
      }
      less = await dismissed(marked, index, now);
    }
    points.push({
      scanId: run.id, finishedAt: new Date(run.finished_at!).toISOString(),
      open: { error: Math.max(0, total.error - less.error), warning: Math.max(0, total.warning - less.warning), notice: Math.max(0, total.notice - less.notice) },
    });
  }
  return points;
}
