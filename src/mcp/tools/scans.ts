/** The scan tools: start a scan, follow it, read its report and issues, check one page now. */
import { encodeCursor, decodeCursor, page } from '../../db/pagination.js';
import { findScan, finishedWithReport, hasReport, readPages, readReport, reportBase, siteKey, toProgress, toScan, type ScanRow } from '../../db/scans.js';
import { fetchPage, ScanFetchError } from '../../domain/scan/fetch-page.js';
import { digest as digestOf, summarize } from '../../domain/scan/summary.js';
import type { Report } from '../../domain/scan/types.js';
import { withFingerprints } from '../../domain/report/fingerprint.js';
import { CheckError } from '../../domain/scan/engine.js';
import { queueScanRequest, type ScanRequest } from '../../scans/queue-scan.js';
import { checkScanTarget } from '../../scans/target.js';
import { computed } from '../compute-call.js';
import { siteTrend } from '../../reports/trend.js';
import { scanMarks, storedReport } from '../../reports/access.js';
import { ToolFailure, inScope, type ToolContext, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';
import type { ToolInputs, ToolOutputs } from '../../../generated/tools.js';

/** Issues of a report whose digest is grouped on the event loop (about 1 ms of CPU at this size, reading the rows included); a larger one's in the compute pool. */
const DIGEST_ON_LOOP_ISSUES = 500;

/** A scan of the caller's org; another org's scan is "not found", like a missing one. */
export async function ownScan(s: Pick<McpDeps, 'db'>, ctx: ToolContext, scanId: string): Promise<ScanRow> {
  const row = await findScan(s.db, scanId);
  if (!row || !inScope(ctx.caller, row.org_id)) throw new ToolFailure('not_found', `No scan ${scanId} in this organization`);
  return row;
}

export async function target(s: Pick<McpDeps, 'config'>, url: string) {
  try {
    return await checkScanTarget(url, s.config.scanAllowPrivateNetworks);
  } catch (err) {
    if (err instanceof ScanFetchError) throw new ToolFailure('invalid_arguments', err.message);
    throw err;
  }
}

/** An org's queue is full: scans are refused until one of its waiting scans has started. */
function queueFull(waiting: number, max: number, retryAfterSeconds: number): ToolFailure {
  return new ToolFailure(
    'rate_limited',
    `This organization has ${waiting} scans waiting to run, the most it may have (SCAN_MAX_QUEUED_PER_ORG=${max}); start more once some of them have started`,
    undefined,
    retryAfterSeconds,
  );
}

export type { ScanRequest } from '../../scans/queue-scan.js';

/**
 * Stores a scan of `orgId` and queues it, within the org's limits: one with SCAN_MAX_QUEUED_PER_ORG
 * scans waiting is refused (rate_limited) before anything is stored, not even the site.
 */
export async function queueScan(s: Pick<McpDeps, 'config' | 'db' | 'scans'>, orgId: string, request: ScanRequest): Promise<ScanRow> {
  const outcome = await queueScanRequest(s, orgId, request);
  if (outcome.kind === 'full') throw queueFull(outcome.waiting, outcome.max, outcome.retryAfterSeconds);
  return outcome.row;
}

export function scanTools(s: Pick<McpDeps, 'compute' | 'config' | 'db' | 'scans' | 'screenshots'>): Pick<
  ToolHandlers,
  'dashboard_scan_site' | 'dashboard_get_scan_progress' | 'dashboard_get_report' | 'dashboard_list_reports' | 'dashboard_query_issues' | 'dashboard_scan_page' | 'dashboard_get_screenshot'
> {
  return {
    async dashboard_scan_site(input, ctx) {
      const url = await target(s, input.siteUrl);
      const row = await queueScan(s, ctx.caller.orgId, {
        site_url: url.href, standard: input.standard!, scan_mode: input.scanMode!, max_pages: input.scanMode === 'single' ? 1 : input.maxPages!, concurrency: input.concurrency!,
        jurisdictions: JSON.stringify(input.jurisdictions ?? []),
      });
      return toScan(row);
    },

    async dashboard_get_scan_progress({ scanId }, ctx) {
      return toProgress(await ownScan(s, ctx, scanId));
    },

    async dashboard_get_report({ scanId, view, top }, ctx) {
      const row = await ownScan(s, ctx, scanId);
      if (!hasReport(row)) return reportBase(row);
      if (view === 'app') {
        // The report view's model: built in the compute pool from the stored rows, its issue list cut at REPORT_MAX_ISSUES.
        const app = await computed(s, ctx, { kind: 'report-view', report: await storedReport(s.db, row), maxIssues: s.config.reportMaxIssues, marks: { marks: await scanMarks(s.db, row), now: new Date().toISOString() } }, 'building the report view');
        // The site's open findings over its last runs: the view draws them as a chart and a table.
        const trend = await siteTrend(s.db, row, (pages, marks, now) => computed(s, ctx, { kind: 'dismissed-by-level', pages, marks, now }, 'counting the trend\'s open findings'));
        return { ...reportBase(row), app: { ...app, trend } };
      }
      if (view === 'digest') {
        // A small report is grouped here: well under a millisecond, where the pool's threads,
        // started for it, would hold ~110 MB for a minute after.
        if ((row.total_issues ?? 0) <= DIGEST_ON_LOOP_ISSUES) {
          const { report } = await readReport(s.db, row);
          return { ...reportBase(row), digest: digestOf(report as Report, top ?? 20) };
        }
        // Grouping every issue of every page grows with the report: in the compute pool, from the rows as stored.
        const pages = (await readPages(s.db, row.id)).map(({ url, title, issue_count, error, issues, not_evaluated }) => ({ url, title, issue_count, error, issues, not_evaluated }));
        const digest = await computed(s, ctx, { kind: 'digest', engine: row.engine ?? null, summary: row.summary, pages, top: top ?? 20 }, 'building the digest');
        return { ...reportBase(row), digest };
      }
      // The pages view is the report itself: parsed here or in a thread, it must be copied and
      // serialised here all the same. Its size is bounded instead (about 370 bytes an issue).
      const limit = s.config.reportMaxIssues;
      if ((row.total_issues ?? 0) > limit) {
        throw new ToolFailure(
          'too_large',
          `Scan ${scanId} has ${row.total_issues} issues; the pages view returns at most ${limit} (REPORT_MAX_ISSUES). Read it as view digest, and its issues with dashboard_query_issues, a page at a time.`,
        );
      }
      return readReport(s.db, row);
    },

    async dashboard_get_screenshot({ scanId, screenshotId }, ctx) {
      await ownScan(s, ctx, scanId);
      const shot = await s.screenshots.get(scanId, screenshotId);
      if (!shot) throw new ToolFailure('not_found', `Scan ${scanId} has no screenshot ${screenshotId}`);
      const chunks: Buffer[] = [];
      for await (const chunk of await shot.body()) chunks.push(chunk as Buffer);
      const { row } = shot;
      return { scanId, screenshotId, mimeType: row.mime, width: row.width, height: row.height, data: Buffer.concat(chunks).toString('base64') };
    },

    async dashboard_list_reports({ siteUrl, status, limit, cursor }, ctx) {
      const q = s.db('scans').where({ org_id: ctx.caller.orgId });
      if (siteUrl) q.where({ site_id: s.db('sites').select('id').where({ org_id: ctx.caller.orgId, url: siteKey(siteUrl) }) });
      if (status) q.where({ status });
      const { rows, nextCursor } = await page<ScanRow>(q, { column: 'id', order: 'desc', limit: limit!, cursor });
      return { reports: rows.map(toScan), nextCursor };
    },

    async dashboard_query_issues({ scanId, criterion, type, impact, code, page: pageUrl, limit, cursor }, ctx) {
      const row = await ownScan(s, ctx, scanId);
      if (!finishedWithReport(row.status)) throw new ToolFailure('invalid_arguments', `Scan ${scanId} is ${row.status}; its issues can be queried once it has completed`);
      // Issues have no ids of their own: the cursor is the position in this stable order.
      const start = cursor ? Number(decodeCursor(cursor)) : 0;
      if (!Number.isInteger(start) || start < 0) throw new ToolFailure('invalid_arguments', 'cursor is not one this server handed out');
      // Every stored issue is parsed and filtered: in the compute pool, from the rows as stored.
      const pages = (await readPages(s.db, scanId)).map((p) => ({ url: p.url, issues: p.issues }));
      const { total, issues } = await computed(s, ctx, { kind: 'query-issues', pages, filter: { criterion, type, impact, code, page: pageUrl }, start, limit: limit! }, 'querying the issues');
      const end = start + limit!;
      return { scanId, total, issues, nextCursor: end < total ? encodeCursor(String(end)) : null };
    },

    async dashboard_scan_page({ url, standard }, ctx) {
      await target(s, url);
      const runner = s.scans;
      const { config } = s;
      // Refused before anything is fetched; the org's calls beyond its page slots wait their turn.
      const admission = runner.pageCalls.admit(ctx.caller.orgId);
      if (!admission.admitted) {
        const queued = config.scanPageMaxQueuedPerOrg;
        throw new ToolFailure(
          'rate_limited',
          `This organization has ${admission.inProgress} dashboard_scan_page calls in progress, the most it may have: ${runner.pageCalls.maxPerOrg - queued} being checked (SCAN_PAGE_SLOTS_PER_ORG) and ${queued} waiting (SCAN_PAGE_MAX_QUEUED_PER_ORG); retry once one has answered`,
          undefined,
          admission.retryAfterSeconds,
        );
      }
      try {
        return await scanPage(s, url, standard!, ctx);
      } finally {
        admission.release();
      }
    },
  };
}

/** One page, fetched and checked now; stops when the client goes away (ctx.signal). */
async function scanPage(s: Pick<McpDeps, 'config' | 'scans'>, url: string, standard: NonNullable<ToolInputs['dashboard_scan_page']['standard']>, ctx: ToolContext): Promise<ToolOutputs['dashboard_scan_page']> {
  const runner = s.scans;
  const { config } = s;
  const fetchOptions = { ...runner.fetchOptions(), ...(ctx.signal ? { signal: ctx.signal } : {}) };
  await ctx.progress(0, 2, `fetching ${url}`);
  let fetched;
  try {
    fetched = await fetchPage(url, fetchOptions);
  } catch (err) {
    if (err instanceof ScanFetchError) throw new ToolFailure('failed', err.message);
    throw err;
  }
  const engine = runner.engine();
  await ctx.progress(1, 2, `checking with axe-core and the checks beyond axe (${engine.name})`);
  // Someone waits for the answer: a page slot that does not come free within a page's deadline is answered, not waited for.
  const session = engine.openSession(fetchOptions, { owner: ctx.caller.orgId, maxWaitMs: config.scanPageTimeoutSeconds * 1000 });
  let checked;
  try {
    checked = await session.check({ url: fetched.url, html: fetched.html, standard }, ctx.signal);
  } catch (err) {
    if (err instanceof CheckError && err.code === 'busy') throw new ToolFailure('rate_limited', `${err.message} Retry in ${config.scanPageTimeoutSeconds} s.`, undefined, config.scanPageTimeoutSeconds);
    if (err instanceof CheckError) throw new ToolFailure('failed', err.message);
    throw err;
  } finally {
    await session.close();
  }
  await ctx.progress(2, 2, 'done');
  // One page's issues, counted here: a few thousand at most, well under a millisecond.
  const { byLevel } = summarize([{ url: checked.url, title: checked.title, issueCount: checked.issues.length, issues: checked.issues }]);
  return {
    url: checked.url, title: checked.title, standard, engine: engine.name, scannedAt: new Date().toISOString(), byLevel,
    issueCount: checked.issues.length, notEvaluated: checked.notEvaluated, issues: withFingerprints(checked.url, checked.issues),
  };
}
