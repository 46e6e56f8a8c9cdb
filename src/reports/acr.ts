/**
 * A finished scan's Accessibility Conformance Report, for the tool (dashboard_get_acr), its MCP
 * resource (pactum://acr/{scanId}) and its download (GET /reports/{scanId}/acr): the stored pages,
 * the org's marks of their findings and the reviewers' assessments of the scan's criteria, made
 * into the document (domain/report/acr-document.ts), as HTML, or printed by Chromium as PDF.
 */
import type { Context } from 'koa';
import { assessmentsOf } from '../db/acr.js';
import type { ComputeTask } from '../compute/tasks.js';
import { hasReport, readPages, type ScanRow } from '../db/scans.js';
import { acrHtml, ACR_STYLE_HASH } from '../domain/report/acr-document.js';
import { CheckError } from '../domain/scan/engine.js';
import { VERSION } from '../ground/version.js';
import { HttpError } from '../http/errors.js';
import type { Handler } from '../http/router.js';
import { htmlPageHeaders } from '../http/security-headers.js';
import { readableScan, scanMarks } from './access.js';
import type { ReportDeps } from './services.js';
import { SLOT_RETRY_AFTER_SECONDS } from './slots.js';
import { ClientGone, computed } from './streamed.js';

/** How long a PDF waits for a browser page slot before the answer is 503. */
const PRINT_WAIT_MS = 30_000;

/** The compute task that makes the ACR of `scan` (finished, with a report) as it reads now. */
export async function acrTask(s: Pick<ReportDeps, 'db' | 'browser'>, scan: ScanRow): Promise<Extract<ComputeTask, { kind: 'acr' }>> {
  const pages = (await readPages(s.db, scan.id)).map(({ url, title, issue_count, error, issues, not_evaluated }) => ({ url, title, issue_count, error, issues, not_evaluated }));
  const [marks, assessed] = await Promise.all([scanMarks(s.db, scan), assessmentsOf(s.db, scan.org_id, scan.id)]);
  const reviews = Object.fromEntries(Object.entries(assessed).map(([c, a]) => [c, { conformance: a.conformance, remarks: a.remarks }]));
  const chromium = scan.engine === 'chromium' ? ((await s.browser()?.version()) ?? null) : null;
  return {
    kind: 'acr',
    facts: { scanId: scan.id, siteUrl: scan.site_url, standard: scan.standard, engine: scan.engine ?? null, finishedAt: scan.finished_at, versions: { pactum: VERSION, chromium } },
    pages, reviews, marks, now: new Date().toISOString(),
  };
}

/** Where the document is downloaded: GET /reports/{scanId}/acr. */
export const acrDownloads = (publicUrl: string, scanId: string) => {
  const base = new URL(`reports/${encodeURIComponent(scanId)}/acr`, publicUrl.endsWith('/') ? publicUrl : `${publicUrl}/`).href;
  return { html: `${base}?format=html`, pdf: `${base}?format=pdf` };
};

/** GET /reports/{scanId}/acr: the ACR as HTML or PDF, with the exports' scoping and caps. */
export function reportAcr(s: Pick<ReportDeps, 'compute' | 'config' | 'db' | 'reportSlots' | 'browser'>): Handler<'reports.acr'> {
  return async ({ ctx, params, identity }) => {
    const format = params.format ?? 'html';
    const access = await readableScan(s.db, identity!, params.scanId);
    if (!access.ok && access.why === 'forbidden') throw new HttpError(403, 'Reading reports needs the permission reports.view');
    if (!access.ok) throw new HttpError(404, `No scan ${params.scanId} in this organization`);
    const scan = access.scan;
    if (!hasReport(scan)) throw new HttpError(409, `Scan ${scan.id} is ${scan.status}; its ACR can be made once it has completed`);
    const max = s.config.reports.exportMaxIssues;
    if ((scan.total_issues ?? 0) > max) {
      throw new HttpError(409, `Scan ${scan.id} has ${scan.total_issues} issues, more than an export may hold (REPORT_EXPORT_MAX_ISSUES=${max}); read its levels with dashboard_get_acr`);
    }
    const chromium = s.browser();
    if (format === 'pdf' && !chromium) {
      throw new HttpError(501, `Printing the ACR as PDF needs Chromium, which this server does not run (SCAN_ENGINE=${s.config.scanEngine}); download it with format=html`);
    }
    const slot = s.reportSlots.take(identity!, ctx.res);
    if (!slot.ok) throw new HttpError(429, slot.message, { 'Retry-After': String(SLOT_RETRY_AFTER_SECONDS) });
    const signal = closing(ctx);
    let html: string;
    try {
      html = acrHtml(await computed(s, await acrTask(s, scan), { owner: scan.org_id, signal }));
    } catch (err) {
      if (err instanceof ClientGone) return;
      throw err;
    }
    ctx.set('Cache-Control', 'no-store');
    if (format === 'html') {
      answer(ctx, 'text/html; charset=utf-8', `${scan.id}.acr.html`, html);
      ctx.set(htmlPageHeaders(s.config.publicUrl, [ACR_STYLE_HASH]));
      return;
    }
    try {
      answer(ctx, 'application/pdf', `${scan.id}.acr.pdf`, await chromium!.printPdf(html, { owner: scan.org_id, maxWaitMs: PRINT_WAIT_MS, signal }));
    } catch (err) {
      // Nobody is left to read an answer.
      if (signal.aborted) return;
      // No page slot in time, the browser could not start or died, the page did not load in time.
      if (err instanceof CheckError) {
        throw new HttpError(503, `${err.message}; retry in ${SLOT_RETRY_AFTER_SECONDS} s`, { 'Retry-After': String(SLOT_RETRY_AFTER_SECONDS) });
      }
      throw err;
    }
  };
}

function answer(ctx: Context, type: string, filename: string, body: string | Buffer) {
  ctx.status = 200;
  ctx.type = type;
  ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
  ctx.body = body;
}

/** Aborted when the response closes: finished, or its client gone. */
function closing(ctx: Context): AbortSignal {
  const controller = new AbortController();
  if (ctx.res.closed) controller.abort();
  else ctx.res.once('close', () => controller.abort());
  return controller.signal;
}
