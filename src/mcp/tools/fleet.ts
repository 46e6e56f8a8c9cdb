/** Fleet tools: the org's sites with their latest scans, totals across them, and coordinated PRs. */
import { readCoordinatedPr } from '../../db/coordinated-prs.js';
import type { Db } from '../../db/knex.js';
import type { BrandScore } from '../../db/brand.js';
import { page } from '../../db/pagination.js';
import { readPages, type ScanRow } from '../../db/scans.js';
import { resolveCriterion } from '../../domain/regulations/index.js';
import { newId } from '../../ground/ids.js';
import { computed } from '../compute-call.js';
import { ToolFailure, inScope, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';

interface SiteRow { id: string; org_id: string; url: string; created_at: string }
type ByLevel = { error: number; warning: number; notice: number };

/** The latest scan of each site (optionally only completed ones), by site id; not a rescan of a few pages verifying fixes. */
async function latestScans(db: Db, orgId: string, siteIds: string[] | null, completedOnly: boolean): Promise<Map<string, ScanRow>> {
  const newest = db('scans').max('id').where({ org_id: orgId }).whereNull('baseline_scan_id').groupBy('site_id');
  if (completedOnly) newest.whereIn('status', ['completed', 'completed_with_errors']);
  if (siteIds) newest.whereIn('site_id', siteIds);
  const rows = await db<ScanRow>('scans').whereIn('id', newest);
  return new Map(rows.map((r) => [r.site_id, r]));
}

async function brandScores(db: Db, scanIds: string[]): Promise<Map<string, number>> {
  const rows = scanIds.length ? await db<{ scan_id: string; score: string }>('brand_scores').whereIn('scan_id', scanIds) : [];
  const out = new Map<string, number>();
  for (const r of rows) {
    const s = JSON.parse(r.score) as BrandScore;
    if (s.kind === 'scored') out.set(r.scan_id, s.overall);
  }
  return out;
}

function fleetSite(site: SiteRow, scan: ScanRow | undefined, brand: Map<string, number>) {
  const summary = scan?.summary ? (JSON.parse(scan.summary) as { byLevel: ByLevel }) : null;
  return {
    siteId: site.id,
    siteUrl: site.url,
    latestScanId: scan?.id ?? null,
    latestScanStatus: scan?.status ?? null,
    latestScanAt: scan ? (scan.finished_at ?? scan.created_at) : null,
    totalIssues: scan?.total_issues ?? null,
    byLevel: summary?.byLevel ?? null,
    brandScore: scan ? (brand.get(scan.id) ?? null) : null,
  };
}

export function fleetTools(s: Pick<McpDeps, 'compute' | 'config' | 'db'>): Pick<ToolHandlers, 'dashboard_coordinated_pr_status' | 'dashboard_list_fleet' | 'dashboard_scan_summary_for_fleet' | 'dashboard_queue_bulk_fix'> {
  return {
    async dashboard_coordinated_pr_status({ id }, { caller }) {
      const found = await readCoordinatedPr(s.db, id);
      // Another org's PR is "not found", word for word like a missing one: its existence is not the caller's business.
      if (!found || !inScope(caller, found.pr.orgId)) throw new ToolFailure('not_found', `No coordinated PR ${id}`);
      return found;
    },

    async dashboard_list_fleet({ limit, cursor }, { caller }) {
      const { rows, nextCursor } = await page<SiteRow>(s.db('sites').where({ org_id: caller.orgId }), { column: 'id', order: 'asc', limit: limit!, cursor });
      const latest = await latestScans(s.db, caller.orgId, rows.map((row) => row.id), false);
      const brand = await brandScores(s.db, [...latest.values()].map((row) => row.id));
      return { sites: rows.map((site) => fleetSite(site, latest.get(site.id), brand)), nextCursor };
    },

    async dashboard_scan_summary_for_fleet({ top }, { caller }) {
      const sites = await s.db<SiteRow>('sites').where({ org_id: caller.orgId });
      const latest = await latestScans(s.db, caller.orgId, null, true);
      const brand = await brandScores(s.db, [...latest.values()].map((row) => row.id));
      const byLevel: ByLevel = { error: 0, warning: 0, notice: 0 };
      const criteria = new Map<string, { issues: number; sites: number }>();
      let totalIssues = 0;
      // Stays on the event loop: one stored summary per site (its counts by level and by criterion,
      // under 2 kB), so even a thousand sites take a few milliseconds; no issue is read here.
      for (const scan of latest.values()) {
        const summary = JSON.parse(scan.summary ?? '{}') as { byLevel?: ByLevel; byCriterion?: Record<string, number>; totalIssues?: number };
        totalIssues += summary.totalIssues ?? 0;
        for (const k of ['error', 'warning', 'notice'] as const) byLevel[k] += summary.byLevel?.[k] ?? 0;
        for (const [c, n] of Object.entries(summary.byCriterion ?? {})) {
          const e = criteria.get(c) ?? { issues: 0, sites: 0 };
          criteria.set(c, { issues: e.issues + n, sites: e.sites + 1 });
        }
      }
      const topCriteria = [...criteria.entries()]
        .sort((a, b) => b[1].issues - a[1].issues || a[0].localeCompare(b[0]))
        .slice(0, top)
        .map(([criterion, c]) => ({ criterion, title: resolveCriterion(criterion)?.title ?? null, ...c }));
      const worstSites = sites
        .filter((site) => latest.has(site.id))
        .map((site) => fleetSite(site, latest.get(site.id), brand))
        .sort((a, b) => (b.totalIssues ?? 0) - (a.totalIssues ?? 0))
        .slice(0, top);
      return { sites: sites.length, scannedSites: latest.size, totalIssues, byLevel, topCriteria, worstSites };
    },

    async dashboard_queue_bulk_fix({ wcagCriterion, summary, siteIds, teamId }, ctx) {
      const { caller } = ctx;
      const criterion = resolveCriterion(wcagCriterion);
      if (!criterion) throw new ToolFailure('invalid_arguments', `Unknown WCAG success criterion ${wcagCriterion}`);
      const latest = await latestScans(s.db, caller.orgId, siteIds ?? null, true);
      // A site qualifies when an issue of its latest completed scan maps to the criterion at all.
      // That reads every issue of every site: in the compute pool, from the rows as stored.
      const scans: { scanId: string; issues: string[] }[] = [];
      for (const scan of latest.values()) scans.push({ scanId: scan.id, issues: (await readPages(s.db, scan.id)).map((p) => p.issues) });
      const matchingIds = new Set(await computed(s, ctx, { kind: 'scans-with-criterion', scans, criterion: criterion.id }, 'finding the sites with such issues'));
      const matching = [...latest.values()].filter((scan) => matchingIds.has(scan.id));
      if (!matching.length) throw new ToolFailure('not_found', `No site's latest completed scan has issues of ${criterion.id} ${criterion.title}`);
      const prId = newId('cpr');
      const now = new Date().toISOString();
      await s.db.transaction(async (tx) => {
        await tx('coordinated_prs').insert({
          id: prId, org_id: caller.orgId, team_id: teamId ?? null, created_by: caller.subject, status: 'draft',
          summary: summary ?? `Fix ${criterion.id} ${criterion.title} across ${matching.length} site${matching.length === 1 ? '' : 's'}`, wcag_criterion: criterion.id, created_at: now,
        });
        await tx('coordinated_pr_legs').insert(
          matching.map((scan) => ({ id: newId('leg'), coordinated_pr_id: prId, site_id: scan.site_id, host_pr_url: null, host_pr_state: null, last_error: null, leg_status: 'queued', approval_status: 'pending' })),
        );
      });
      return (await readCoordinatedPr(s.db, prId))!;
    },
  };
}
