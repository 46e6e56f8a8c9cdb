/**
 * The report for people without an MCP client and for pipelines: GET /reports/{scanId} (the
 * report view as a page of this server), its screenshots, and the SARIF, JUnit XML, CSV and
 * pa11y-ci JSON exports. The same scoping as dashboard_get_report: reports.view, and the caller's own org.
 */
import type { Context } from 'koa';
import { hasReport, toProgress, type ScanRow } from '../db/scans.js';
import { EXPORT_EXTENSIONS, EXPORT_TYPES, type ExportFormat } from '../domain/report/exports.js';
import { parseSourceMapping, SourceMappingError, type SourceMapping } from '../domain/report/locations.js';
import { HttpError } from '../http/errors.js';
import { escapeHtml, writeNoticePage } from '../http/notice-page.js';
import type { Handler } from '../http/router.js';
import { pageHeaders } from '../http/security-headers.js';
import { viewAssets, viewDocument } from '../report-view/document.js';
import type { ReportDeps } from './services.js';
import { readableScan, scanMarks } from './access.js';
import { SLOT_RETRY_AFTER_SECONDS } from './slots.js';
import { ClientGone, openExport, reportView } from './streamed.js';
import { openShare, shareLinksFor } from './shares.js';
import { grants } from '../domain/access/permissions.js';

/** A small page of its own (not signed in, not allowed, no such report). */
const notice = (ctx: Context, status: number, title: string, body: string) => writeNoticePage(ctx, status, title, body);


/** Aborted when the response closes: finished, or its client gone. */
function closing(ctx: Context): AbortSignal {
  const controller = new AbortController();
  if (ctx.res.closed) controller.abort();
  else ctx.res.once('close', () => controller.abort());
  return controller.signal;
}

export function reportPage(s: Pick<ReportDeps, 'compute' | 'config' | 'db' | 'reportSlots'>): Handler<'reports.page'> {
  return async ({ ctx, params, identity }) => {
    if (!identity) {
      return notice(ctx, 401, 'Sign in to see this report', '<p>Reports are shown to the people of the organization that ran the scan. <a href="../">Sign in on the start page</a>, then open this page again.</p>');
    }
    const access = await readableScan(s.db, identity, params.scanId);
    if (!access.ok && access.why === 'forbidden') return notice(ctx, 403, 'Not allowed', '<p>Reading reports needs the permission reports.view.</p>');
    if (!access.ok) return notice(ctx, 404, 'No such report', `<p>There is no scan ${escapeHtml(params.scanId)} in your organization. <a href="../">Your latest scans</a>.</p>`);
    const scan = access.scan;
    // Sharing publishes the report outside the organization: the people who run scans may.
    await writeReportPage(s, ctx, scan, identity, { canShare: grants(identity.permissions, 'scans.create') });
  };
}

/**
 * The report page of `scan` (or its progress while it runs): its model is the size of
 * REPORT_MAX_ISSUES issues at most, kept until the client has it, so it counts as a download of
 * `holder` (a user, or a link) and its org. `page` is what the page's script is told beside the
 * report: whether it may offer sharing, or that it is a shared link and until when, and where
 * its screenshots are.
 */
async function writeReportPage(s: Pick<ReportDeps, 'compute' | 'config' | 'db' | 'reportSlots'>, ctx: Context, scan: ScanRow, holder: { subject: string; orgId: string }, page: Record<string, unknown>) {
  const assets = await viewAssets();
  let data;
  if (hasReport(scan)) {
    const slot = s.reportSlots.take(holder, ctx.res);
    if (!slot.ok) {
      ctx.set('Retry-After', String(SLOT_RETRY_AFTER_SECONDS));
      return notice(ctx, 429, 'Too many reports at once', `<p>${escapeHtml(slot.message)}.</p>`);
    }
    try {
      // A shared link shows that report alone: the site's other runs stay with the organization.
      data = { view: await reportView(s, scan, closing(ctx), { trend: !page.shared }), progress: null, ...page };
    } catch (err) {
      if (err instanceof ClientGone) return;
      throw err;
    }
  } else {
    data = { view: null, progress: toProgress(scan), ...page };
  }
  ctx.status = 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set(pageHeaders(s.config.publicUrl, { scripts: [assets.scriptHash, assets.pageScriptHash], styles: [assets.styleHash] }));
  ctx.body = viewDocument(assets, { title: `Accessibility report: ${scan.site_url}`, data, csp: false, page: true });
}

/** GET /shared/{shareToken}: the report a link names, read-only, to whoever has the link. */
export function sharedReportPage(s: Pick<ReportDeps, 'compute' | 'config' | 'db' | 'reportSlots'>): Handler<'reports.shared'> {
  return async ({ ctx, params }) => {
    const opened = await openShare(s.db, shareLinksFor(s.config), params.shareToken, new Date());
    if (!opened.ok) return notice(ctx, opened.status, opened.status === 404 ? 'No such link' : 'This link no longer works', `<p>${escapeHtml(opened.why)} Ask whoever sent it for a new one.</p>`);
    // Search engines keep out, whoever posted the link where they crawl.
    ctx.set('X-Robots-Tag', 'noindex, nofollow');
    await writeReportPage(s, ctx, opened.scan, { subject: opened.share.id, orgId: opened.share.org_id }, {
      shared: { expiresAt: opened.share.expires_at }, screenshotBase: `${params.shareToken}/screenshots/`,
    });
  };
}

/** GET /shared/{shareToken}/screenshots/{screenshotId}: a screenshot of the linked scan only. */
export function sharedScreenshot(s: Pick<ReportDeps, 'config' | 'db' | 'screenshots'>): Handler<'reports.sharedScreenshot'> {
  return async ({ ctx, params }) => {
    const opened = await openShare(s.db, shareLinksFor(s.config), params.shareToken, new Date());
    if (!opened.ok) throw new HttpError(opened.status, opened.why);
    const shot = await s.screenshots.get(opened.scan.id, params.screenshotId);
    if (!shot) throw new HttpError(404, `No screenshot ${params.screenshotId} of this report`);
    ctx.status = 200;
    ctx.type = shot.row.mime;
    // A revoked link must stop showing it: no copy kept.
    ctx.set('Cache-Control', 'private, no-store');
    ctx.length = shot.row.bytes;
    ctx.body = await shot.body();
  };
}

/** SARIF's sourceMap parameters, each PREFIX=DIR (400 naming the one that is not). */
function sourceMapOf(params: { sourceMap?: string[] }): SourceMapping[] {
  try {
    return (params.sourceMap ?? []).map(parseSourceMapping);
  } catch (err) {
    if (err instanceof SourceMappingError) throw new HttpError(400, `sourceMap ${err.message}`);
    throw err;
  }
}

export function reportExport(s: Pick<ReportDeps, 'compute' | 'config' | 'db' | 'log' | 'reportSlots'>, format: ExportFormat): Handler<'reports.sarif' | 'reports.junit' | 'reports.csv' | 'reports.pa11y'> {
  const extension = EXPORT_EXTENSIONS[format];
  return async ({ ctx, params, identity }) => {
    const sourceMap = 'sourceMap' in params ? sourceMapOf(params) : [];
    const access = await readableScan(s.db, identity!, params.scanId);
    if (!access.ok && access.why === 'forbidden') throw new HttpError(403, 'Reading reports needs the permission reports.view');
    if (!access.ok) throw new HttpError(404, `No scan ${params.scanId} in this organization`);
    const scan = access.scan;
    if (!hasReport(scan)) throw new HttpError(409, `Scan ${scan.id} is ${scan.status}; its report can be exported once it has completed`);
    const max = s.config.reports.exportMaxIssues;
    if ((scan.total_issues ?? 0) > max) {
      throw new HttpError(409, `Scan ${scan.id} has ${scan.total_issues} issues, more than an export may hold (REPORT_EXPORT_MAX_ISSUES=${max}); read them with dashboard_query_issues, a page at a time, or filtered by criterion, rule or page`);
    }
    const slot = s.reportSlots.take(identity!, ctx.res);
    if (!slot.ok) throw new HttpError(429, slot.message, { 'Retry-After': String(SLOT_RETRY_AFTER_SECONDS) });
    const includeFalsePositives = 'includeFalsePositives' in params && params.includeFalsePositives === 'true';
    let body;
    try {
      body = await openExport(s, scan, format, closing(ctx), { sourceMap, includeFalsePositives, marks: await scanMarks(s.db, scan), now: new Date().toISOString() });
    } catch (err) {
      if (err instanceof ClientGone) return;
      throw err;
    }
    ctx.status = 200;
    ctx.type = EXPORT_TYPES[format];
    ctx.set('Content-Disposition', `attachment; filename="${scan.id}.${extension}"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  };
}

export function reportScreenshot(s: Pick<ReportDeps, 'db' | 'screenshots'>): Handler<'reports.screenshot'> {
  return async ({ ctx, params, identity }) => {
    const access = await readableScan(s.db, identity!, params.scanId);
    if (!access.ok && access.why === 'forbidden') throw new HttpError(403, 'Reading reports needs the permission reports.view');
    const shot = access.ok ? await s.screenshots.get(params.scanId, params.screenshotId) : null;
    if (!shot) throw new HttpError(404, `No screenshot ${params.screenshotId} of scan ${params.scanId} in this organization`);
    ctx.status = 200;
    ctx.type = shot.row.mime;
    ctx.set('Cache-Control', 'private, max-age=86400');
    ctx.length = shot.row.bytes;
    ctx.body = await shot.body();
  };
}
