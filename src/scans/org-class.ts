/**
 * Every org's load in the scan queue, for the scan metrics' org classes (telemetry/metrics.ts
 * OrgClass): how many scans each org has waiting and running, across instances.
 */
import type { Db } from '../db/knex.js';
import type { OrgScanLoad } from '../telemetry/metrics.js';

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
