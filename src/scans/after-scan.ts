/**
 * What follows a completed scan: its brand score, against the org's guideline as it is at that
 * moment (so a later change of guideline does not rewrite history).
 */
import type { Compute } from '../compute/compute.js';
import { readGuideline, writeBrandScore, type BrandScore } from '../db/brand.js';
import type { Db } from '../db/knex.js';
import { readPages, type ScanRow } from '../db/scans.js';
import { scoreBrand } from '../domain/brand/score.js';

/** Background work may wait behind the tools' tasks and take longer than a request may. */
const BRAND_SCORE_TIMEOUT_MS = 120_000;

export interface AfterScanDeps {
  db: Db;
  compute: Compute;
}

export async function afterScan(deps: AfterScanDeps, scan: ScanRow): Promise<void> {
  await computeBrandScore(deps, scan);
}

/**
 * Scores a completed scan against the org's current guideline and stores the result. Parsing and
 * scoring grow with the pages (seconds for a large scan), so they run in the compute pool; a scan
 * with no page's style statistics (an org without a guideline gathers none) is scored here: that
 * score is a constant's work, and the pool's threads would hold ~70 MB each for a minute after.
 */
export async function computeBrandScore({ db, compute }: AfterScanDeps, scan: ScanRow): Promise<BrandScore> {
  const guideline = await readGuideline(db, scan.org_id);
  // Pages that could not be checked have no style statistics; they say nothing about the brand.
  const pages = (await readPages(db, scan.id)).flatMap((p) => (p.style ? [{ issues: p.issues, style: p.style }] : []));
  const meta = { scanId: scan.id, siteUrl: scan.site_url, computedAt: new Date().toISOString() };
  const score = pages.length
    ? (await compute.run({ kind: 'brand-score', guideline, pages, meta }, { background: true, owner: scan.org_id, timeoutMs: BRAND_SCORE_TIMEOUT_MS })).value
    : scoreBrand(guideline, [], meta);
  await writeBrandScore(db, scan, score);
  return score;
}
