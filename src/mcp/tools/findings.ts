/**
 * Findings across scans: reviewers' marks attached to fingerprints (mark, review outcome, list)
 * and verifying fixes (a rescan of the pages with open findings, compared finding by finding).
 * A scan of another org is not_found, as is a fingerprint the scan did not report.
 */
import { findScan, finishedWithReport, hasReport, readPages, type ScanRow } from '../../db/scans.js';
import { marksOnPages, writeMark } from '../../db/marks.js';
import { encodeCursor, decodeCursor } from '../../db/pagination.js';
import { stablePage } from '../../domain/report/fingerprint.js';
import { statusOf, toFindingMark, type Finding, type StoredMark } from '../../domain/report/marks.js';
import { computed } from '../compute-call.js';
import { ToolFailure, inScope, type ToolContext, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';
import type { ToolOutputs } from '../../../generated/tools.js';
import { ownScan, queueScan, target } from './scans.js';

type Deps = Pick<McpDeps, 'compute' | 'config' | 'db' | 'scans'>;

/** How far ahead an acceptance may run: long enough for a vendor's release, short enough to be looked at again. */
/** Pages a rescan checks at most (as many as dashboard_verify_fixes's pages may name). */
const MAX_RESCAN_PAGES = 100;

const MAX_ACCEPTANCE_MS = 5 * 365 * 24 * 3600 * 1000;

/** A finished scan of the caller's org. */
async function finishedScan(s: Deps, ctx: ToolContext, scanId: string): Promise<ScanRow & { summary: string }> {
  const row = await ownScan(s, ctx, scanId);
  if (!hasReport(row)) throw new ToolFailure('invalid_arguments', `Scan ${scanId} is ${row.status}; its findings can be read and marked once it has finished`);
  return row;
}

/** The scan's pages as the compute tasks read them, and the org's marks of findings on them. */
async function pagesAndMarks(s: Deps, orgId: string, scanId: string) {
  const pages = (await readPages(s.db, scanId)).map(({ url, issues, error }) => ({ url, issues, error }));
  return { pages, marks: await marksOnPages(s.db, orgId, pages.map((p) => stablePage(p.url))) };
}

/** One finding of the scan, by fingerprint; not_found when the scan did not report it. */
async function findingOf(s: Deps, ctx: ToolContext, scan: ScanRow, fingerprint: string): Promise<Finding> {
  const { pages, marks } = await pagesAndMarks(s, ctx.caller.orgId, scan.id);
  const now = new Date().toISOString();
  const { findings } = await computed(s, ctx, { kind: 'findings', pages, marks, now, filter: { fingerprint }, start: 0, limit: 1 }, 'finding the finding');
  if (!findings[0]) throw new ToolFailure('not_found', `Scan ${scan.id} has no finding ${fingerprint}`);
  return findings[0];
}

/** The finding with its new mark, as it stands now. */
function remarked(f: Finding, mark: StoredMark): Finding {
  const now = new Date().toISOString();
  return { ...f, status: statusOf(mark, f.issue.type, now), mark: toFindingMark(mark, now) };
}

const subjectOf = (orgId: string, scanId: string, f: Finding) => ({
  org_id: orgId, fingerprint: f.fingerprint, page_url: stablePage(f.issue.pageUrl!), code: f.issue.code, selector: f.issue.selector, scan_id: scanId,
});

export function findingTools(s: Deps): Pick<ToolHandlers, 'dashboard_list_findings' | 'dashboard_mark_finding' | 'dashboard_review_finding' | 'dashboard_verify_fixes'> {
  return {
    async dashboard_list_findings({ scanId, status, type, page, limit, cursor }, ctx) {
      const scan = await finishedScan(s, ctx, scanId);
      const start = cursor ? Number(decodeCursor(cursor)) : 0;
      if (!Number.isInteger(start) || start < 0) throw new ToolFailure('invalid_arguments', 'cursor is not one this server handed out');
      const { pages, marks } = await pagesAndMarks(s, ctx.caller.orgId, scan.id);
      const now = new Date().toISOString();
      const filter = { ...(status ? { status } : {}), ...(type ? { type } : {}), ...(page ? { page } : {}) };
      const { total, counts, findings } = await computed(s, ctx, { kind: 'findings', pages, marks, now, filter, start, limit: limit! }, 'listing the findings');
      const end = start + limit!;
      return { scanId, total, counts, findings, nextCursor: end < total ? encodeCursor(String(end)) : null };
    },

    async dashboard_mark_finding({ scanId, fingerprint, mark, reason, expiresAt }, ctx) {
      if ((mark === 'false_positive' || mark === 'accepted') && !reason) throw new ToolFailure('invalid_arguments', `A ${mark} mark needs a reason: say why, for whoever reads the finding next`);
      if (mark === 'accepted' && !expiresAt) throw new ToolFailure('invalid_arguments', 'An accepted mark needs expiresAt: the date until which the organization accepts the finding');
      const scan = await finishedScan(s, ctx, scanId);
      const finding = await findingOf(s, ctx, scan, fingerprint);
      const now = new Date();
      let expires: string | null = null;
      if (mark === 'accepted') {
        const at = Date.parse(expiresAt!);
        if (!(at > now.getTime())) throw new ToolFailure('invalid_arguments', `expiresAt ${expiresAt} is not in the future: an acceptance needs a date until which it holds`);
        if (at - now.getTime() > MAX_ACCEPTANCE_MS) throw new ToolFailure('invalid_arguments', `expiresAt ${expiresAt} is more than 5 years ahead; accept the finding for a shorter time and look at it again then`);
        expires = new Date(at).toISOString();
      }
      const unmarked = mark === 'unmarked';
      const stored = await writeMark(s.db, subjectOf(ctx.caller.orgId, scan.id, finding), {
        mark: unmarked ? null : mark, reason: unmarked || mark === 'confirmed' ? (reason ?? null) : reason!, expires_at: expires,
        marked_by: unmarked ? null : ctx.caller.subject, marked_at: unmarked ? null : now.toISOString(),
      });
      return { scanId, finding: remarked(finding, stored) };
    },

    async dashboard_review_finding({ scanId, fingerprint, outcome, note }, ctx) {
      const scan = await finishedScan(s, ctx, scanId);
      const finding = await findingOf(s, ctx, scan, fingerprint);
      if (finding.issue.type !== 'warning') {
        throw new ToolFailure('invalid_arguments', `Finding ${fingerprint} is of type ${finding.issue.type}, not a needs-review finding (type warning); mark it with dashboard_mark_finding instead`);
      }
      const stored = await writeMark(s.db, subjectOf(ctx.caller.orgId, scan.id, finding), {
        review_outcome: outcome, review_note: note, reviewed_by: ctx.caller.subject, reviewed_at: new Date().toISOString(),
      });
      return { scanId, finding: remarked(finding, stored) };
    },

    async dashboard_verify_fixes({ scanId, pages, againstScanId }, ctx) {
      const baseline = await finishedScan(s, ctx, scanId);
      if (againstScanId) return compared(s, ctx, baseline, await againstScan(s, ctx, baseline, againstScanId));
      const urls = pages ? await givenPages(s, baseline, pages) : await pagesWithOpenFindings(s, ctx, baseline);
      if (!urls.length) {
        return { baselineScanId: baseline.id, scanId: null, status: 'completed', finished: true, pages: [], pagesFailed: [], summary: { fixed: 0, still_present: 0, new: 0, newByLevel: { error: 0, warning: 0, notice: 0 } }, findings: [] };
      }
      const rescan = await queueScan(s, ctx.caller.orgId, {
        // The baseline's site: a rescan belongs to it (the fleet's latest scans leave rescans out).
        site_url: baseline.site_url, standard: baseline.standard, scan_mode: 'single', max_pages: urls.length, concurrency: baseline.concurrency, jurisdictions: baseline.jurisdictions,
        page_urls: JSON.stringify(urls), baseline_scan_id: baseline.id,
      });
      return { baselineScanId: baseline.id, scanId: rescan.id, status: rescan.status, finished: false, pages: urls, pagesFailed: [], summary: null, findings: [] };
    },
  };
}

/** The scan to compare with: the caller's, of the baseline's origin. */
async function againstScan(s: Deps, ctx: ToolContext, baseline: ScanRow, againstScanId: string): Promise<ScanRow> {
  const row = await findScan(s.db, againstScanId);
  if (!row || !inScope(ctx.caller, row.org_id) || row.org_id !== baseline.org_id) throw new ToolFailure('not_found', `No scan ${againstScanId} in this organization`);
  if (new URL(row.site_url).origin !== new URL(baseline.site_url).origin) {
    throw new ToolFailure('invalid_arguments', `Scan ${againstScanId} is of ${new URL(row.site_url).origin}, not of the baseline's site ${new URL(baseline.site_url).origin}`);
  }
  return row;
}

/** The pages given, each of the baseline's origin and allowed as a scan target. */
async function givenPages(s: Deps, baseline: ScanRow, pages: string[]): Promise<string[]> {
  const origin = new URL(baseline.site_url).origin;
  const urls: string[] = [];
  for (const page of pages) {
    const url = await target(s, page);
    if (url.origin !== origin) throw new ToolFailure('invalid_arguments', `${page} is not a page of the baseline's site ${origin}`);
    urls.push(url.href);
  }
  return urls;
}

/** The baseline's pages that have a finding still to fix (open or confirmed), in the baseline's order. */
async function pagesWithOpenFindings(s: Deps, ctx: ToolContext, baseline: ScanRow): Promise<string[]> {
  const { pages, marks } = await pagesAndMarks(s, ctx.caller.orgId, baseline.id);
  const now = new Date().toISOString();
  const urls = await computed(s, ctx, { kind: 'pages-with-open-findings', pages: pages.filter((p) => !p.error), marks, now }, 'finding the pages with open findings');
  return urls.slice(0, MAX_RESCAN_PAGES);
}

/** The baseline compared with `later`: its state while it runs, each finding's verdict once it has finished. */
async function compared(s: Deps, ctx: ToolContext, baseline: ScanRow, later: ScanRow): Promise<ToolOutputs['dashboard_verify_fixes']> {
  const pagesOfLater = later.page_urls ? (JSON.parse(later.page_urls) as string[]) : [];
  const base = { baselineScanId: baseline.id, scanId: later.id, status: later.status };
  if (!finishedWithReport(later.status)) {
    if (later.status === 'failed') throw new ToolFailure('failed', `Scan ${later.id} failed: ${later.error ?? 'no reason recorded'}; nothing to compare`);
    return { ...base, finished: false, pages: pagesOfLater, pagesFailed: [], summary: null, findings: [] };
  }
  const current = (await readPages(s.db, later.id)).map(({ url, issues, error }) => ({ url, issues, error }));
  const before = (await readPages(s.db, baseline.id)).map(({ url, issues }) => ({ url, issues }));
  const marks = await marksOnPages(s.db, ctx.caller.orgId, [...current, ...before].map((p) => stablePage(p.url)));
  const { findings, summary } = await computed(s, ctx, { kind: 'compare-findings', baseline: before, current, marks, now: new Date().toISOString() }, 'comparing the findings');
  return {
    ...base, finished: true, pages: current.map((p) => p.url),
    pagesFailed: current.filter((p) => p.error).map((p) => ({ url: p.url, error: p.error! })), summary, findings,
  };
}
