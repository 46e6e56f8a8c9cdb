/**
 * Which scan runs next, decided from the scans table when a worker is free: the fair choice both
 * queues share (runner.ts). Orgs take turns: among the orgs with a scan waiting and fewer than
 * SCAN_MAX_RUNNING_PER_ORG running, the one with the fewest running goes first, then the one that
 * least recently started a scan; within an org, its oldest scan. Claims are serialized (PostgreSQL:
 * one transaction-scoped advisory lock for every instance; SQLite: its one connection), so the
 * per-org running cap holds across instances.
 *
 * Admission (dashboard_scan_site) is bounded the same way: an org with SCAN_MAX_QUEUED_PER_ORG
 * scans waiting is refused another until one of them has started.
 */
import type { Knex } from 'knex';
import { isPostgres, type Db } from '../db/knex.js';
import type { ScanRow } from '../db/scans.js';

type Tx = Db | Knex.Transaction;

/** The lock every claim takes on PostgreSQL (hashtext of this name). */
const CLAIM_LOCK = 'pactum:scan-claims';
/** When a refused org has no finished scan to go by: a minute. */
const DEFAULT_RETRY_SECONDS = 60;

export type Claim =
  /** Marked running for `claimant`: attempts counted, pages of an earlier attempt removed. */
  | { kind: 'claimed'; scan: ScanRow }
  /** Scans are waiting, but every org with one is at its running cap: try again later. */
  | { kind: 'wait' }
  /** Nothing is waiting. */
  | { kind: 'idle' };

export interface ClaimOptions {
  maxRunningPerOrg: number;
}

const now = () => new Date().toISOString();

/**
 * Claims a scan for `claimant` (a queue job's id, or this process's claim id). The claimant's own
 * scan comes first: a retried job (its worker died, or a shutdown stopped it) runs the scan it had
 * claimed again. A dead worker's scan still counts as running; one a shutdown put back waits for
 * its org's turn like any other.
 */
export async function claimScan(db: Db, claimant: string, opts: ClaimOptions): Promise<Claim> {
  return db.transaction(async (tx) => {
    if (isPostgres(db)) await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [CLAIM_LOCK]);
    const own = await tx<ScanRow>('scans').where({ job_id: claimant }).whereIn('status', ['queued', 'running']).first();
    if (own) {
      if (own.status === 'queued' && (await runningOf(tx, own.org_id)) >= opts.maxRunningPerOrg) return { kind: 'wait' };
      return { kind: 'claimed', scan: await markRunning(tx, own, claimant) };
    }
    const turn = await fairestWaiting(tx, opts.maxRunningPerOrg);
    if (turn.kind !== 'scan') return { kind: turn.kind };
    return { kind: 'claimed', scan: await markRunning(tx, turn.scan, claimant) };
  });
}

/**
 * Takes the claims' lock in `tx` (PostgreSQL; SQLite's one connection serializes anyway): what `tx`
 * then changes of a scan's status cannot interleave with a claim, which reads a waiting scan and
 * then marks it running.
 */
export async function lockClaims(db: Db, tx: Knex.Transaction) {
  if (isPostgres(db)) await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [CLAIM_LOCK]);
}

async function runningOf(tx: Tx, orgId: string): Promise<number> {
  const row = await tx('scans').where({ org_id: orgId, status: 'running' }).count<{ n: number | string }[]>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

interface WaitingOrg {
  org_id: string;
  running: number | string;
  last_started: string | null;
  oldest_waiting: string;
}

/** The org whose turn it is and its oldest waiting scan; 'wait' when every waiting org is at its cap. */
async function fairestWaiting(tx: Tx, maxRunning: number): Promise<{ kind: 'scan'; scan: ScanRow } | { kind: 'wait' | 'idle' }> {
  // One round trip; each subquery is an index lookup per waiting org ((org_id, status), (org_id, started_at)).
  const orgs: WaitingOrg[] = await tx
    .select<WaitingOrg[]>(
      'o.org_id',
      tx.raw("(select count(*) from scans r where r.org_id = o.org_id and r.status = 'running') as running"),
      tx.raw('(select s.started_at from scans s where s.org_id = o.org_id and s.started_at is not null order by s.started_at desc limit 1) as last_started'),
      tx.raw("(select min(q.created_at) from scans q where q.org_id = o.org_id and q.status = 'queued' and q.job_id is null) as oldest_waiting"),
    )
    .from(tx('scans').distinct('org_id').where({ status: 'queued' }).whereNull('job_id').as('o'));
  if (!orgs.length) return { kind: 'idle' };
  const eligible = orgs.filter((o) => Number(o.running) < maxRunning).sort(byTurn);
  const org = eligible[0];
  if (!org) return { kind: 'wait' };
  const scan = await tx<ScanRow>('scans').where({ org_id: org.org_id, status: 'queued' }).whereNull('job_id').orderBy([{ column: 'created_at' }, { column: 'id' }]).first();
  return scan ? { kind: 'scan', scan } : { kind: 'wait' };
}

/** Fewest running first, then the org that started a scan least recently (never: first), then the org waiting longest. */
function byTurn(a: WaitingOrg, b: WaitingOrg): number {
  const running = Number(a.running) - Number(b.running);
  if (running) return running;
  if (a.last_started !== b.last_started) {
    if (a.last_started === null) return -1;
    if (b.last_started === null) return 1;
    return a.last_started < b.last_started ? -1 : 1;
  }
  return a.oldest_waiting < b.oldest_waiting ? -1 : a.oldest_waiting > b.oldest_waiting ? 1 : 0;
}

async function markRunning(tx: Tx, scan: ScanRow, claimant: string): Promise<ScanRow> {
  const t = now();
  // An attempt starts from scratch: pages of an earlier one go.
  await tx('scan_pages').where({ scan_id: scan.id }).delete();
  const fields = { status: 'running' as const, job_id: claimant, started_at: t, attempts: scan.attempts + 1, last_updated: t, pages_scanned: 0, total_pages: null };
  await tx('scans').where({ id: scan.id }).update(fields);
  return { ...scan, ...fields };
}

/** Puts scans back among the waiting, claimed by nobody (a restart on SQLite; a job that stopped waiting). */
export async function releaseScans(db: Tx, where: { id?: string; job_id?: string; status?: 'queued' | 'running' }) {
  const t = now();
  const q = db('scans').where(where).whereIn('status', ['queued', 'running']);
  await db('scan_pages').whereIn('scan_id', q.clone().select('id')).delete();
  await q.update({ status: 'queued', job_id: null, pages_scanned: 0, total_pages: null, started_at: null, last_updated: t });
}

/** The scan `claimant` holds, if any: what the dead-letter handler fails. */
export const claimedBy = (db: Db, claimant: string) => db<ScanRow>('scans').where({ job_id: claimant }).whereIn('status', ['queued', 'running']).first();

/** How many scans of the org are waiting. */
export async function queuedOf(db: Tx, orgId: string): Promise<number> {
  const row = await db('scans').where({ org_id: orgId, status: 'queued' }).count<{ n: number | string }[]>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

export type Admission = { admitted: true } | { admitted: false; queued: number; retryAfterSeconds: number };

/**
 * Stores `scan` (queued) unless its org already has `maxQueued` scans waiting. Atomic per org
 * (PostgreSQL: an advisory lock on the org; SQLite: its one connection), so concurrent calls
 * cannot overshoot the cap.
 */
export async function admitScan(db: Db, scan: ScanRow, limits: { maxQueued: number; maxRunning: number }): Promise<Admission> {
  return db.transaction(async (tx) => {
    if (isPostgres(db)) await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [`pactum:scan-admission:${scan.org_id}`]);
    const queued = await queuedOf(tx, scan.org_id);
    if (queued >= limits.maxQueued) return { admitted: false, queued, retryAfterSeconds: await retryAfter(tx, scan.org_id, limits.maxRunning) };
    await tx('scans').insert(scan);
    return { admitted: true };
  });
}

/**
 * When a refused org may try again: a place in its queue frees when one of its waiting scans
 * starts, which is when one of its running scans ends. Estimated from its recent scans' durations
 * shared by the scans it may run at once (a minute when it has none), between 1 s and an hour.
 */
export async function retryAfter(db: Tx, orgId: string, maxRunning: number): Promise<number> {
  const recent = await db<ScanRow>('scans')
    .where({ org_id: orgId }).whereNotNull('started_at').whereNotNull('finished_at')
    .orderBy('started_at', 'desc').limit(20).select('started_at', 'finished_at');
  const durations = recent.map((r) => (Date.parse(r.finished_at!) - Date.parse(r.started_at!)) / 1000).filter((d) => Number.isFinite(d) && d >= 0);
  const typical = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : DEFAULT_RETRY_SECONDS;
  return Math.min(3600, Math.max(1, Math.ceil(typical / Math.max(1, maxRunning))));
}
