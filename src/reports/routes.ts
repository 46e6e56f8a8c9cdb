/**
 * The report for people without an MCP client and for pipelines: GET /reports/{scanId} (the
 * report view as a page of this server), its screenshots, and the SARIF, JUnit XML and CSV
 * exports. The same scoping as dashboard_get_report: reports.view, and the caller's own org.
 */
import type { Context } from 'koa';
import { WorkerPoolError } from '../compute/worker-pool.js';
import type { ComputeTask } from '../compute/compute.js';
import { hasReport, toProgress } from '../db/scans.js';
import { EXPORT_TYPES, type ExportFormat } from '../domain/report/exports.js';
import { clientGone } from '../http/client-gone.js';
import { HttpError } from '../http/errors.js';
import type { Handler } from '../http/router.js';
import { pageHeaders } from '../http/security-headers.js';
import { viewAssets, viewDocument } from '../report-view/document.js';
import type { Services } from '../services.js';
import { readableScan, storedReport } from './access.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small page of its own (not signed in, not allowed, no such report): no script, the site's stylesheet. */
function notice(ctx: Context, status: number, title: string, body: string) {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="../docs/assets/home.css">
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

/**
 * Work in the compute pool for the caller's organization (a client that goes away withdraws it),
 * its refusals as 503 with when to retry: the pool or the organization's share of it is full, the
 * work waited too long for its turn, or ran out of time.
 */
async function computed<T>(s: Services, ctx: Context, owner: string, task: ComputeTask): Promise<T> {
  try {
    return (await s.compute.run(task, { owner, signal: clientGone(ctx) })).value as T;
  } catch (err) {
    if (!(err instanceof WorkerPoolError) || err.code === 'failed') throw err;
    const retry = String(s.compute.retryAfterSeconds(err.code === 'owner-busy' ? owner : undefined));
    const c = s.config.compute;
    const why: Partial<Record<WorkerPoolError['code'], string>> = {
      timeout: `took longer than COMPUTE_TIMEOUT_MS (${c.timeoutMs} ms)`,
      'queue-full': 'waits behind a full compute queue (COMPUTE_QUEUE)',
      'owner-busy': `waits behind your organization's other compute tasks (COMPUTE_MAX_RUNNING_PER_ORG ${c.maxRunningPerOrg}, COMPUTE_MAX_QUEUED_PER_ORG ${c.maxQueuedPerOrg})`,
      waited: `waited longer than COMPUTE_WAIT_MS (${c.waitMs} ms) for a compute thread`,
    };
    throw new HttpError(503, `The report ${why[err.code] ?? 'could not be done now'}; retry in ${retry} s`, { 'Retry-After': retry });
  }
}

export function reportPage(s: Services): Handler<'reports.page'> {
  return async ({ ctx, params, identity }) => {
    if (!identity) {
      return notice(ctx, 401, 'Sign in to see this report', '<p>Reports are shown to the people of the organization that ran the scan. <a href="../">Sign in on the start page</a>, then open this page again.</p>');
    }
    const access = await readableScan(s.db, identity, params.scanId);
    if (!access.ok && access.why === 'forbidden') return notice(ctx, 403, 'Not allowed', '<p>Reading reports needs the permission reports.view.</p>');
    if (!access.ok) return notice(ctx, 404, 'No such report', `<p>There is no scan ${escapeHtml(params.scanId)} in your organization. <a href="../">Your latest scans</a>.</p>`);
    const scan = access.scan;
    const assets = await viewAssets();
    const data = hasReport(scan)
      ? { view: await computed(s, ctx, identity.orgId, { kind: 'report-view', report: await storedReport(s.db, scan), maxIssues: s.config.reportMaxIssues }), progress: null }
      : { view: null, progress: toProgress(scan) };
    ctx.status = 200;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set(pageHeaders(s.config.publicUrl, { scripts: [assets.scriptHash], styles: [assets.styleHash] }));
    ctx.body = viewDocument(assets, { title: `Accessibility report: ${scan.site_url}`, data, csp: false });
  };
}

export function reportExport(s: Services, format: ExportFormat): Handler<'reports.sarif' | 'reports.junit' | 'reports.csv'> {
  const extension = { sarif: 'sarif', junit: 'junit.xml', csv: 'csv' }[format];
  return async ({ ctx, params, identity }) => {
    const access = await readableScan(s.db, identity!, params.scanId);
    if (!access.ok && access.why === 'forbidden') throw new HttpError(403, 'Reading reports needs the permission reports.view');
    if (!access.ok) throw new HttpError(404, `No scan ${params.scanId} in this organization`);
    const scan = access.scan;
    if (!hasReport(scan)) throw new HttpError(409, `Scan ${scan.id} is ${scan.status}; its report can be exported once it has completed`);
    const text = await computed<string>(s, ctx, identity!.orgId, { kind: 'report-export', report: await storedReport(s.db, scan), format });
    ctx.status = 200;
    ctx.type = EXPORT_TYPES[format];
    ctx.set('Content-Disposition', `attachment; filename="${scan.id}.${extension}"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = text;
  };
}

export function reportScreenshot(s: Services): Handler<'reports.screenshot'> {
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
