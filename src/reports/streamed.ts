/**
 * A finished scan's report read a bounded run of pages at a time: the exports written as a
 * stream, and the report page's model added up from parts. Neither ever holds the whole report:
 * the pages are read from the database in runs of about REPORT_READ_BATCH_ISSUES issues (pageBatches),
 * each run parsed and written in the compute pool, the next run read only once the client has
 * taken the text of the last (the stream's back-pressure), and nothing more read once the client
 * has gone.
 */
import { Readable } from 'node:stream';
import type { ComputeTask } from '../compute/compute.js';
import { WorkerPoolError } from '../compute/worker-pool.js';
import type { ComputeRunOptions } from '../compute/compute.js';
import type { ComputeOutput } from '../compute/tasks.js';
import { failedPages, pageBatches, pageOutline, readPageBatch, type PageBatch, type ScanRow } from '../db/scans.js';
import { exportHead, exportTail, newExportState, type ExportFormat, type ExportMeta, type ExportOptions, type ExportPass } from '../domain/report/exports.js';
import { addViewPart, emptyViewPart, finishReportView, type ReportView } from '../domain/report/view-model.js';
import type { ReportSummary } from '../domain/scan/types.js';
import { HttpError } from '../http/errors.js';
import type { ReportDeps } from './services.js';
import { brandScoreOf, scanFacts, scanMarks } from './access.js';
import { siteTrend } from './trend.js';

/** Pages read at once at most, whatever their issues: rows without issues are small, but not nothing. */
const BATCH_PAGES = 100;

/** What a stream's reader keeps of text already written before it stops pulling more (Node's streams count it). */
const STREAM_HIGH_WATER_BYTES = 64 * 1024;

/** How often an export's next run checks whether the compute pool has a thread to spare. */
const SPARE_THREAD_POLL_MS = 5;

/**
 * Until the compute pool has a thread with nothing to do (fewer tasks pending than threads). An
 * export's runs are bulk work: they take threads no one else is waiting for, so that another
 * org's report page or tool call waits behind at most one run per thread, never behind a queue
 * of them (and they never fill the queue). The caller submits in the same turn as the check.
 */
async function spareThread(s: Pick<ReportDeps, 'compute' | 'config'>, signal: AbortSignal) {
  while (s.compute.pending >= s.config.compute.threads) {
    if (signal.aborted) throw new ClientGone();
    await new Promise((r) => setTimeout(r, SPARE_THREAD_POLL_MS));
  }
}

/**
 * Work in the compute pool for the report's organization (orgs take turns for the threads; the
 * signal withdraws it when the client goes away), its refusals as 503 with when to retry: the
 * pool or the organization's share of it is full, the work waited too long for its turn, or it
 * ran out of time.
 */
export async function computed<K extends ComputeTask['kind']>(s: Pick<ReportDeps, 'compute' | 'config'>, task: Extract<ComputeTask, { kind: K }>, options: ComputeRunOptions & { owner: string }): Promise<ComputeOutput<K>> {
  try {
    return (await s.compute.run(task, options)).value;
  } catch (err) {
    if (!(err instanceof WorkerPoolError) || err.code === 'failed') throw err;
    if (err.code === 'withdrawn') throw new ClientGone();
    const retry = String(s.compute.retryAfterSeconds(err.code === 'owner-busy' ? options.owner : undefined));
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

type Finished = ScanRow & { summary: string };

const summaryOf = (scan: Finished) => ({ notEvaluated: [], ...JSON.parse(scan.summary) }) as ReportSummary;

async function batchesOf(s: Pick<ReportDeps, 'config' | 'db'>, scanId: string): Promise<PageBatch[]> {
  return pageBatches(await pageOutline(s.db, scanId), { issues: s.config.reports.readBatchIssues, pages: BATCH_PAGES });
}

/** The client went away while the report was being prepared: nothing is answered. */
export class ClientGone extends Error {}

/**
 * The report page's model (REPORT_MAX_ISSUES issues listed, every one counted), added up from
 * each run of pages' part. What it holds is the model, bounded by REPORT_MAX_ISSUES, and one run.
 */
export async function reportView(s: Pick<ReportDeps, 'compute' | 'config' | 'db'>, scan: Finished, signal: AbortSignal, options: { trend: boolean }): Promise<ReportView> {
  const all = emptyViewPart();
  const maxIssues = s.config.reportMaxIssues;
  const marks = { marks: await scanMarks(s.db, scan), now: new Date().toISOString() };
  for (const batch of await batchesOf(s, scan.id)) {
    if (signal.aborted) throw new ClientGone();
    const pages = await readPageBatch(s.db, scan.id, batch);
    addViewPart(all, await computed(s, { kind: 'report-view-part', pages, firstIndex: batch.firstIndex, quota: maxIssues - all.shown, marks }, { owner: scan.org_id, signal }));
  }
  const view = finishReportView({ scan: scanFacts(scan), summary: summaryOf(scan), brandScore: await brandScoreOf(s.db, scan.id) }, all);
  if (!options.trend) return view;
  const trend = await siteTrend(s.db, scan, (pages, marks, now) => computed(s, { kind: 'dismissed-by-level', pages, marks, now }, { owner: scan.org_id, signal }));
  return { ...view, trend };
}

/**
 * The export of `scan` as a stream the response pipes, its pages read one run at a time as the
 * client takes the text, each run computed when the pool has a thread to spare (spareThread).
 * JUnit's counting pass and the first run are done before it is returned, so that a failure there
 * (a run past COMPUTE_TIMEOUT_MS) is still answered 503 rather than with a cut-off file. A later
 * failure ends the response early, which HTTP clients see as an incomplete body, and is logged.
 */
export async function openExport(s: Pick<ReportDeps, 'compute' | 'config' | 'db' | 'log'>, scan: Finished, format: ExportFormat, signal: AbortSignal, options: Partial<ExportOptions> = {}): Promise<Readable> {
  const summary = summaryOf(scan);
  const facts = scanFacts(scan);
  const meta: ExportMeta = { scanId: facts.scanId, siteUrl: facts.siteUrl, standard: facts.standard, engine: facts.engine, finishedAt: facts.finishedAt, notEvaluated: summary.notEvaluated ?? [] };
  const batches = await batchesOf(s, scan.id);
  let state = newExportState({ sarifMaxResults: s.config.reports.sarifMaxResults, ...options });
  const pass = async (kind: ExportPass, batch: PageBatch): Promise<string[]> => {
    if (signal.aborted) throw new ClientGone();
    const pages = await readPageBatch(s.db, scan.id, batch);
    // Checked and submitted in one turn: exports waiting together cannot all pass at once and fill the queue.
    await spareThread(s, signal);
    const done = await computed(s, { kind: 'report-export-pages', format, pass: kind, pages, state, finishedAt: meta.finishedAt }, { background: true, owner: scan.org_id, signal });
    state = done.state;
    return done.chunks;
  };
  if (format === 'junit') for (const batch of batches) await pass('count', batch);
  let first = batches.length ? await pass('write', batches[0]!) : [];

  async function* text(): AsyncGenerator<string> {
    yield exportHead(format, meta, state);
    for (let n = 0; n < batches.length; n++) {
      const chunks = n === 0 ? first : await pass('write', batches[n]!);
      first = [];
      // Each piece let go of once taken: a reader that stops holds the rest of one run at most.
      for (let piece = chunks.shift(); piece !== undefined; piece = chunks.shift()) yield piece;
    }
    yield exportTail(format, meta, state, await failedPages(s.db, scan.id));
  }
  const body = Readable.from(text(), { objectMode: false, highWaterMark: STREAM_HIGH_WATER_BYTES });
  body.on('error', (err) => {
    if (signal.aborted || err instanceof ClientGone || (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    s.log.warn({ err: err.message, scanId: scan.id, format }, 'a report export stopped before its end; the client got an incomplete file');
  });
  return body;
}
