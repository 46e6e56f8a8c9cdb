/** Coordinated PRs and their legs (one per site) as stored. */
import type { components } from '../../generated/types/dashboard.js';
import type { Db } from './knex.js';

export type CoordinatedPr = components['schemas']['coordinated-pr'];
export type CoordinatedPrLeg = components['schemas']['coordinated-pr-leg'];

export interface PrRow {
  id: string; org_id: string; team_id: string | null; created_by: string; status: CoordinatedPr['status'];
  summary: string; wcag_criterion: string | null; created_at: string;
}
export interface LegRow {
  id: string; coordinated_pr_id: string; site_id: string; host_pr_url: string | null; host_pr_state: CoordinatedPrLeg['hostPrState'];
  last_error: string | null; leg_status: CoordinatedPrLeg['legStatus']; approval_status: CoordinatedPrLeg['approvalStatus'];
}

export const toPr = (r: PrRow): CoordinatedPr => ({
  id: r.id, orgId: r.org_id, teamId: r.team_id, createdBy: r.created_by, status: r.status, summary: r.summary,
  wcagCriterion: r.wcag_criterion, createdAt: r.created_at,
});

export const toLeg = (r: LegRow & { site_url?: string }): CoordinatedPrLeg => ({
  id: r.id, coordinatedPrId: r.coordinated_pr_id, siteId: r.site_id, ...(r.site_url ? { siteUrl: r.site_url } : {}),
  hostPrUrl: r.host_pr_url, hostPrState: r.host_pr_state, lastError: r.last_error, legStatus: r.leg_status, approvalStatus: r.approval_status,
});

export async function readCoordinatedPr(db: Db, id: string) {
  const pr = await db<PrRow>('coordinated_prs').where({ id }).first();
  if (!pr) return null;
  const legs = await db('coordinated_pr_legs as l')
    .join('sites as s', 's.id', 'l.site_id')
    .where('l.coordinated_pr_id', id)
    .orderBy('l.id')
    .select<(LegRow & { site_url: string })[]>('l.*', 's.url as site_url');
  return { pr: toPr(pr), legs: legs.map(toLeg) };
}
