/**
 * The Accessibility Conformance Report of a finished scan (dashboard_get_acr) and a reviewer's
 * per-criterion assessments that stand in it (dashboard_assess_criterion). A scan of another
 * org is not_found; every assessment is an audit row (the dispatch's, with who made it).
 */
import { deleteAssessment, writeAssessment } from '../../db/acr.js';
import { hasReport, type ScanRow } from '../../db/scans.js';
import { criteria } from '../../domain/regulations/index.js';
import { acrDownloads, acrTask } from '../../reports/acr.js';
import { computed } from '../compute-call.js';
import { ToolFailure, type ToolContext, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';
import { ACR_TEMPLATE } from '../resources.js';
import { ownScan } from './scans.js';

type Deps = Pick<McpDeps, 'compute' | 'config' | 'db' | 'scans'>;

/** The criteria an ACR lists: WCAG 2.2 levels A and AA, those removed (4.1.1) left out. */
const ACR_CRITERIA = new Set(criteria.filter((c) => (c.level === 'A' || c.level === 'AA') && !c.removedIn).map((c) => c.id));

async function finishedScan(s: Deps, ctx: ToolContext, scanId: string): Promise<ScanRow & { summary: string }> {
  const row = await ownScan(s, ctx, scanId);
  if (!hasReport(row)) throw new ToolFailure('invalid_arguments', `Scan ${scanId} is ${row.status}; its ACR can be made once it has finished`);
  return row;
}

async function acrOf(s: Deps, ctx: ToolContext, scan: ScanRow) {
  const task = await acrTask({ db: s.db, browser: () => s.scans.chromium() }, scan);
  return computed(s, ctx, task, 'making the ACR');
}

export function acrTools(s: Deps): Pick<ToolHandlers, 'dashboard_get_acr' | 'dashboard_assess_criterion'> {
  return {
    async dashboard_get_acr({ scanId }, ctx) {
      const scan = await finishedScan(s, ctx, scanId);
      const acr = await acrOf(s, ctx, scan);
      return { scanId: scan.id, acr, downloads: acrDownloads(s.config.publicUrl, scan.id), resourceUri: ACR_TEMPLATE.replace('{scanId}', scan.id) };
    },

    async dashboard_assess_criterion({ scanId, criterion, conformance, remarks }, ctx) {
      if (!ACR_CRITERIA.has(criterion)) {
        throw new ToolFailure('invalid_arguments', `${criterion} is not a WCAG 2.2 level A or AA success criterion, the criteria an ACR lists (dashboard_list_wcag_criteria)`);
      }
      if (conformance !== 'unassessed' && !remarks) throw new ToolFailure('invalid_arguments', `An assessment needs remarks: say what was checked and how, for whoever reads the ACR`);
      const scan = await finishedScan(s, ctx, scanId);
      const key = { org_id: scan.org_id, scan_id: scan.id, criterion };
      let assessment = null;
      if (conformance === 'unassessed') await deleteAssessment(s.db, key);
      else {
        const row = await writeAssessment(s.db, { ...key, conformance, remarks: remarks!, author: ctx.caller.subject, assessed_at: new Date().toISOString() });
        assessment = { conformance: row.conformance, remarks: row.remarks, author: row.author, assessedAt: row.assessed_at };
      }
      const acr = await acrOf(s, ctx, scan);
      const row = [...acr.wcag.levelA, ...acr.wcag.levelAA].find((r) => r.criterion === criterion)!;
      return { scanId: scan.id, criterion, assessment, row };
    },
  };
}
