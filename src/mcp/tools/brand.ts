/** Brand guidelines and brand scores. */
import { readGuideline, writeGuideline, type BrandScore } from '../../db/brand.js';
import { page } from '../../db/pagination.js';
import { siteKey } from '../../db/scans.js';
import { ToolFailure, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';

interface ScoreRow { scan_id: string; org_id: string; site_url: string; computed_at: string; score: string }

export function brandTools(s: Pick<McpDeps, 'db'>): Pick<ToolHandlers, 'dashboard_set_brand_guideline' | 'dashboard_get_brand_guideline' | 'dashboard_get_brand_score' | 'dashboard_list_brand_scores'> {
  return {
    dashboard_set_brand_guideline: ({ colors, fonts, componentTokens }, { caller }) => writeGuideline(s.db, caller.orgId, { colors, fonts, componentTokens }),

    async dashboard_get_brand_guideline(_input, { caller }) {
      const g = await readGuideline(s.db, caller.orgId);
      if (!g) throw new ToolFailure('not_found', 'This organization has no brand guideline yet; set one with dashboard_set_brand_guideline');
      return g;
    },

    async dashboard_get_brand_score({ scanId, siteUrl }, { caller }) {
      // The schema says "exactly one of"; a direct call may still send both or neither.
      if ((scanId === undefined) === (siteUrl === undefined)) throw new ToolFailure('invalid_arguments', 'Give exactly one of scanId and siteUrl');
      const q = s.db<ScoreRow>('brand_scores').where({ org_id: caller.orgId });
      if (scanId) q.where({ scan_id: scanId });
      else q.whereIn('scan_id', s.db('scans').select('id').where({ org_id: caller.orgId, site_id: s.db('sites').select('id').where({ org_id: caller.orgId, url: siteKey(siteUrl!) }) }));
      const row = await q.orderBy('computed_at', 'desc').first();
      if (!row) throw new ToolFailure('not_found', scanId ? `No brand score for scan ${scanId} (it is computed when a scan completes)` : `No brand score for ${siteUrl} yet`);
      return JSON.parse(row.score) as BrandScore;
    },

    async dashboard_list_brand_scores({ siteUrl, limit, cursor }, { caller }) {
      const q = s.db('brand_scores').where({ org_id: caller.orgId });
      if (siteUrl) q.whereIn('scan_id', s.db('scans').select('id').where({ org_id: caller.orgId, site_id: s.db('sites').select('id').where({ org_id: caller.orgId, url: siteKey(siteUrl) }) }));
      // scan ids are time-ordered: newest scans first.
      const { rows, nextCursor } = await page<ScoreRow>(q, { column: 'scan_id', order: 'desc', limit: limit!, cursor });
      return { scores: rows.map((r) => JSON.parse(r.score) as BrandScore), nextCursor };
    },
  };
}
