/** Links to a report page for people without an account: made and revoked (src/reports/shares.ts). */
import { findScan, hasReport, type ScanRow } from '../../db/scans.js';
import { insertShare, liveShareCount, revokeShares, shareLinksFor } from '../../reports/shares.js';
import { ToolFailure, inScope, type ToolContext, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';

/** A scan of the caller's org; another org's scan is "not found", like a missing one. */
async function ownScan(s: Pick<McpDeps, 'db'>, ctx: ToolContext, scanId: string): Promise<ScanRow> {
  const row = await findScan(s.db, scanId);
  if (!row || !inScope(ctx.caller, row.org_id)) throw new ToolFailure('not_found', `No scan ${scanId} in this organization`);
  return row;
}

/** A week: long enough to read and pass on, short enough to be forgotten safely. */
const DEFAULT_HOURS = 168;

export function shareTools(s: Pick<McpDeps, 'config' | 'db'>): Pick<ToolHandlers, 'dashboard_share_report' | 'dashboard_revoke_report_share'> {
  return {
    async dashboard_share_report({ scanId, expiresInHours }, ctx) {
      const { db, config } = s;
      const scan = await ownScan(s, ctx, scanId);
      if (!hasReport(scan)) throw new ToolFailure('invalid_arguments', `Scan ${scanId} is ${scan.status}; its report can be shared once it has completed`);
      const maxDays = config.reports.shareMaxDays;
      const hours = expiresInHours ?? Math.min(DEFAULT_HOURS, maxDays * 24);
      if (hours > maxDays * 24) throw new ToolFailure('invalid_arguments', `expiresInHours ${hours} is longer than a link may work (REPORT_SHARE_MAX_DAYS=${maxDays}, ${maxDays * 24} hours)`);
      const now = new Date();
      const live = await liveShareCount(db, scanId, now);
      if (live >= config.reports.sharesPerScan) {
        throw new ToolFailure('rate_limited', `Scan ${scanId} has ${live} live links, the most a report may have (REPORT_SHARES_PER_SCAN=${config.reports.sharesPerScan}); revoke one with dashboard_revoke_report_share`, undefined, 3600);
      }
      // Whole seconds: the expiry travels in the URL as seconds.
      const expiresAt = new Date(Math.floor(now.getTime() / 1000 + hours * 3600) * 1000);
      const row = await insertShare(db, { scan_id: scanId, org_id: scan.org_id, created_by: ctx.caller.subject, created_at: now.toISOString(), expires_at: expiresAt.toISOString() });
      const token = shareLinksFor(config).token(row.id, expiresAt);
      ctx.log.info({ scanId, shareId: row.id, expiresAt: row.expires_at }, 'report shared by link');
      return { shareId: row.id, scanId, url: `${config.publicUrl}/shared/${token}`, createdAt: row.created_at, expiresAt: row.expires_at };
    },

    async dashboard_revoke_report_share({ scanId, shareId }, ctx) {
      await ownScan(s, ctx, scanId);
      const revoked = await revokeShares(s.db, scanId, shareId, new Date());
      ctx.log.info({ scanId, shareId: shareId ?? 'all', revoked }, 'report links revoked');
      return { scanId, revoked };
    },
  };
}
