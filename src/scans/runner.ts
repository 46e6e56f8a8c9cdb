/**
 * Runs scans off the request path: a queue in this process (at most SCAN_CONCURRENCY scans at
 * once), the scan engine with its worker pool, and every page written as it finishes, so
 * progress is live. A scan is never left "running": on start-up, scans a previous process was
 * running go back to the queue (from scratch) and run again, and a scan that failed that way
 * three times is marked failed with the reason.
 */
import { cpus } from 'node:os';
import type { Config } from '../config.js';
import type { Db } from '../db/knex.js';
import { findScan, type ScanRow } from '../db/scans.js';
// Not the engine's index: that would load jsdom and axe-core here, where only workers need them.
import { ScanFetchError } from '../domain/scan/fetch-page.js';
import { createCheckPool, type CheckPool } from '../domain/scan/pool.js';
import { scanSite } from '../domain/scan/scan-site.js';
import type { Logger } from '../log.js';

const MAX_ATTEMPTS = 3;
const now = () => new Date().toISOString();

export interface ScanRunnerOptions {
  db: Db;
  config: Config;
  log: Logger;
  /** Called when a scan completes (brand score, fleet totals). */
  onCompleted?(scan: ScanRow): Promise<void>;
}

export function createScanRunner(opts: ScanRunnerOptions) {
  const { db, config, log } = opts;
  const queue: string[] = [];
  const running = new Map<string, AbortController>();
  let pool: CheckPool | null = null;
  let stopping = false;
  const checkPool = () => (pool ??= createCheckPool(Math.max(1, Math.min(2, cpus().length - 1))));
  const fetchOptions = () => ({ allowPrivateNetworks: config.scanAllowPrivateNetworks, userAgent: 'pactum-scanner/3.4 (+accessibility scan)' });

  async function run(id: string) {
    const scan = await findScan(db, id);
    if (!scan || scan.status !== 'queued') return;
    const controller = new AbortController();
    running.set(id, controller);
    const startedAt = now();
    await db('scans').where({ id }).update({ status: 'running', started_at: startedAt, attempts: scan.attempts + 1, last_updated: startedAt, pages_scanned: 0, total_pages: null });
    let seq = 0;
    try {
      const report = await scanSite(
        { siteUrl: scan.site_url, mode: scan.scan_mode, maxPages: scan.max_pages, concurrency: scan.concurrency, standard: scan.standard },
        { fetch: fetchOptions(), pool: checkPool(), signal: controller.signal },
        {
          onPagesFound: async (total) => {
            await db('scans').where({ id }).update({ total_pages: total, last_updated: now() });
          },
          onPageDone: async (page) => {
            await db.transaction(async (tx) => {
              await tx('scan_pages').insert({
                scan_id: id, seq: seq++, url: page.url, title: page.title, issue_count: page.issueCount, error: page.error ?? null,
                issues: JSON.stringify(page.issues), style: page.style ? JSON.stringify(page.style) : null,
              });
              await tx('scans').where({ id }).increment('pages_scanned', 1).update({ last_updated: now() });
            });
          },
        },
      );
      const finished = now();
      await db('scans').where({ id }).update({
        status: 'completed', finished_at: finished, last_updated: finished, total_issues: report.summary.totalIssues, summary: JSON.stringify(report.summary), error: null,
      });
      const done = await findScan(db, id);
      if (done && opts.onCompleted) await opts.onCompleted(done).catch((err) => log.error({ err, scanId: id }, 'after-scan work failed'));
    } catch (err) {
      if (controller.signal.aborted && stopping) {
        // Shutting down: the next start runs it again from scratch.
        await requeue(id);
        return;
      }
      const reason = err instanceof ScanFetchError ? err.message : `the scan failed: ${(err as Error).message}`;
      if (!(err instanceof ScanFetchError)) log.error({ err, scanId: id }, 'scan failed');
      const t = now();
      await db('scans').where({ id }).update({ status: 'failed', error: reason, finished_at: t, last_updated: t });
    } finally {
      running.delete(id);
    }
  }

  async function requeue(id: string) {
    await db('scan_pages').where({ scan_id: id }).delete();
    await db('scans').where({ id }).update({ status: 'queued', pages_scanned: 0, total_pages: null, started_at: null, last_updated: now() });
  }

  let active = 0;
  function pump() {
    const limit = config.scanConcurrency;
    while (!stopping && active < limit && queue.length) {
      const id = queue.shift()!;
      active++;
      void run(id)
        .catch((err) => log.error({ err, scanId: id }, 'scan runner failed'))
        .finally(() => {
          active--;
          pump();
        });
    }
  }

  return {
    enqueue(id: string) {
      queue.push(id);
      pump();
    },

    /** Picks up what a previous process left: running scans go back to the queue (or fail after three tries). */
    async recover() {
      for (const s of await db<ScanRow>('scans').where({ status: 'running' })) {
        if (s.attempts >= MAX_ATTEMPTS) {
          const t = now();
          await db('scans').where({ id: s.id }).update({ status: 'failed', error: `interrupted ${s.attempts} times by a restart; giving up`, finished_at: t, last_updated: t });
        } else await requeue(s.id);
      }
      for (const s of await db<ScanRow>('scans').where({ status: 'queued' }).orderBy('id')) if (!queue.includes(s.id) && !running.has(s.id)) queue.push(s.id);
      pump();
    },

    /** Stops: scans in flight are aborted and go back to the queue for the next start. */
    async stop() {
      stopping = true;
      for (const c of running.values()) c.abort(new Error('shutting down'));
      const deadline = Date.now() + 5000;
      while (running.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await pool?.close();
    },

    /** For scan_page: the engine's pool and fetch settings. */
    checkPool,
    fetchOptions,
  };
}

export type ScanRunner = ReturnType<typeof createScanRunner>;
