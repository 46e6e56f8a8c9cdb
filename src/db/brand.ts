/** Brand guidelines and scores as stored; the scoring itself is the domain engine's (domain/brand). */
import type { components } from '../../generated/types/dashboard.js';
import type { Db } from './knex.js';
import type { ScanRow } from './scans.js';

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

/** Stores a scan's brand score (again, when it is scored anew). */
export async function writeBrandScore(db: Db, scan: Pick<ScanRow, 'id' | 'org_id' | 'site_url'>, score: BrandScore): Promise<void> {
  await db('brand_scores')
    .insert({ scan_id: scan.id, org_id: scan.org_id, site_url: scan.site_url, computed_at: score.computedAt, score: JSON.stringify(score) })
    .onConflict('scan_id')
    .merge({ computed_at: score.computedAt, score: JSON.stringify(score) });
}
