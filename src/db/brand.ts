/** Brand guidelines and scores as stored; the scoring itself is the domain engine's (domain/brand). */
import type { components } from '../../generated/types/dashboard.js';
import type { Db } from './knex.js';
import { readPages, type ScanRow } from './scans.js';
import type { Compute } from '../compute/compute.js';

export type BrandGuideline = components['schemas']['brand-guideline'];
export type BrandScore = components['schemas']['brand-score'];

interface GuidelineRow { org_id: string; guideline: string; updated_at: string }

/** The guideline column holds a BrandGuideline without its updatedAt (writeGuideline's JSON). */
const parseGuideline = (text: string) => JSON.parse(text) as Omit<BrandGuideline, 'updatedAt'>;

export async function readGuideline(db: Db, orgId: string): Promise<BrandGuideline | null> {
  const row = await db<GuidelineRow>('brand_guidelines').where({ org_id: orgId }).first();
  return row ? { ...parseGuideline(row.guideline), updatedAt: row.updated_at } : null;
}

export async function writeGuideline(db: Db, orgId: string, g: Omit<BrandGuideline, 'updatedAt'>): Promise<BrandGuideline> {
  const updatedAt = new Date().toISOString();
  const guideline = JSON.stringify({ colors: g.colors, fonts: g.fonts, componentTokens: g.componentTokens });
  await db('brand_guidelines').insert({ org_id: orgId, guideline, updated_at: updatedAt }).onConflict('org_id').merge({ guideline, updated_at: updatedAt });
  return { ...parseGuideline(guideline), updatedAt };
}

/** Background work may wait behind the tools' tasks and take longer than a request may. */
const BRAND_SCORE_TIMEOUT_MS = 120_000;

/**
 * Scores a completed scan against the org's current guideline and stores the result. Parsing and
 * scoring grow with the pages (seconds for a large scan), so they run in the compute pool.
 */
export async function computeBrandScore(db: Db, compute: Compute, scan: ScanRow): Promise<BrandScore> {
  const guideline = await readGuideline(db, scan.org_id);
  // Pages that could not be checked have no style statistics; they say nothing about the brand.
  const pages = (await readPages(db, scan.id)).flatMap((p) => (p.style ? [{ issues: p.issues, style: p.style }] : []));
  const meta = { scanId: scan.id, siteUrl: scan.site_url, computedAt: new Date().toISOString() };
  const { value: score } = await compute.run({ kind: 'brand-score', guideline, pages, meta }, { background: true, owner: scan.org_id, timeoutMs: BRAND_SCORE_TIMEOUT_MS });
  await db('brand_scores')
    .insert({ scan_id: scan.id, org_id: scan.org_id, site_url: scan.site_url, computed_at: score.computedAt, score: JSON.stringify(score) })
    .onConflict('scan_id')
    .merge({ computed_at: score.computedAt, score: JSON.stringify(score) });
  return score;
}
