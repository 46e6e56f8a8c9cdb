/**
 * How many report answers (SARIF, JUnit and CSV exports, report pages) each user and each org has
 * under way in this process. One is under way from its admission until its response has closed,
 * whether it finished or its client went away. Past REPORT_EXPORTS_PER_USER or
 * REPORT_EXPORTS_PER_ORG a new one is refused before any work, so that one member's downloads,
 * read or not, hold at most that many reports' worth of buffers, and one org's at most its cap.
 */
import type { ServerResponse } from 'node:http';
import type { Config } from '../ground/config.js';

/** What a refused caller is told to wait: slots free as downloads finish, and a report's takes seconds. */
export const SLOT_RETRY_AFTER_SECONDS = 5;

export type SlotRefusal = { ok: false; message: string };
export type SlotGrant = { ok: true };

export interface ReportSlots {
  /**
   * Takes a slot of `caller` (its user and its org) for `res`, given back when `res` closes; or
   * the refusal naming the cap that is full.
   */
  take(caller: { subject: string; orgId: string }, res: ServerResponse): SlotGrant | SlotRefusal;
  /** Slots taken now (tests, metrics): by user and by org. */
  held(caller: { subject: string; orgId: string }): { user: number; org: number };
}

export function createReportSlots(limits: Pick<Config['reports'], 'perUser' | 'perOrg'>): ReportSlots {
  const byUser = new Map<string, number>();
  const byOrg = new Map<string, number>();
  const inc = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const dec = (m: Map<string, number>, k: string) => {
    const n = (m.get(k) ?? 1) - 1;
    if (n > 0) m.set(k, n);
    else m.delete(k);
  };
  return {
    take(caller, res) {
      const user = byUser.get(caller.subject) ?? 0;
      if (user >= limits.perUser) {
        return { ok: false, message: `You have ${user} report downloads under way, the most one user may have at once (REPORT_EXPORTS_PER_USER=${limits.perUser}); retry once one has finished` };
      }
      const org = byOrg.get(caller.orgId) ?? 0;
      if (org >= limits.perOrg) {
        return { ok: false, message: `Your organization has ${org} report downloads under way, the most one organization may have at once (REPORT_EXPORTS_PER_ORG=${limits.perOrg}); retry once one has finished` };
      }
      // A client already gone holds nothing (its 'close' has been and gone); its handler stops at its first check.
      if (res.closed) return { ok: true };
      inc(byUser, caller.subject);
      inc(byOrg, caller.orgId);
      let held = true;
      // 'close' follows 'finish', and comes alone when the connection goes first: either way once.
      res.once('close', () => {
        if (!held) return;
        held = false;
        dec(byUser, caller.subject);
        dec(byOrg, caller.orgId);
      });
      return { ok: true };
    },
    held: (caller) => ({ user: byUser.get(caller.subject) ?? 0, org: byOrg.get(caller.orgId) ?? 0 }),
  };
}
