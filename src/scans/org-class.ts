/**
 * The class of an org in the scan queue, as the fair choice (claims.ts) treats it, for the scan
 * metrics: a bounded label where an org id would be one series per org.
 *
 * - `at_cap`: the org has SCAN_MAX_RUNNING_PER_ORG scans running (across instances). Its waiting
 *   scans wait for its own to finish, however many scanners are free: the cap is holding it back
 *   (typically a flood of scans).
 * - `below_cap`: every other org. Its waiting scans wait only for a free scanner, so a queue of
 *   them that keeps growing means the scanners do not keep up.
 */
import type { Db } from '../db/knex.js';

export type OrgClass = 'at_cap' | 'below_cap';
export const ORG_CLASSES: readonly OrgClass[] = ['at_cap', 'below_cap'];

export const orgClass = (running: number, maxRunningPerOrg: number): OrgClass => (running >= maxRunningPerOrg ? 'at_cap' : 'below_cap');

/** An org with scans waiting or running: how many of each (every instance's). */
export interface OrgScanLoad {
  orgId: string;
  queued: number;
  running: number;
}

/** One row per org with a scan waiting or running, read in one query. */
export async function scanLoadByOrg(db: Db): Promise<OrgScanLoad[]> {
  const rows = await db('scans')
    .whereIn('status', ['queued', 'running'])
    .groupBy('org_id')
    .select<{ org_id: string; queued: number | string; running: number | string }[]>(
      'org_id',
      db.raw("sum(case when status = 'queued' then 1 else 0 end) as queued"),
      db.raw("sum(case when status = 'running' then 1 else 0 end) as running"),
    );
  return rows.map((r) => ({ orgId: r.org_id, queued: Number(r.queued), running: Number(r.running) }));
}
