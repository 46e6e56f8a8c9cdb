/**
 * A quota on unfinished resumable (tus) uploads: the bytes they declare (the size in their
 * transfer token, which their partial may grow to) are capped per repository
 * (LFS_PARTIAL_BYTES_PER_REPO) and per org (LFS_PARTIAL_BYTES_PER_ORG). Without it one writer
 * could open any number of partials of any declared size and fill the store.
 *
 * A partial is counted from the PATCH that starts it (git-lfs has no creation step; the batch
 * only hands out hrefs) until it is committed or discarded, or until it lapses: each append
 * moves its expiry TUS_PARTIAL_TTL_SECONDS on, as the store's sweep does for its bytes. Counts
 * live in the database and a reservation is checked and written under one lock per org (a
 * PostgreSQL advisory lock; SQLite has one writer), so many creations at once on several
 * instances cannot pass the cap together. With both caps off (0) uploads are still recorded,
 * unchecked: the rows are also what the metrics read as the bytes unfinished uploads hold.
 */
import type { Config } from '../ground/config.js';
import { isPostgres, type Db } from '../db/knex.js';
import { HttpError } from '../http/errors.js';

const TABLE = 'lfs_partial_reservations';

export interface RepoRef {
  id: string;
  org_id: string;
}

interface Totals {
  repo: number;
  org: number;
}

export function createPartialQuota(db: Db, config: Pick<Config['lfs'], 'partialBytesPerRepo' | 'partialBytesPerOrg' | 'partialTtlSeconds'>) {
  const capped = Boolean(config.partialBytesPerRepo || config.partialBytesPerOrg);

  /** Live declared bytes in the repository and in its org, leaving out the uploads of `oids` in the repository. */
  async function totals(q: Db, repo: RepoRef, oids: string[], now: number): Promise<Totals> {
    const row = await q(TABLE)
      .where({ org_id: repo.org_id })
      .where('expires_at', '>', now)
      .modify((b) => {
        if (oids.length) b.whereNot((w) => void w.where({ repo_id: repo.id }).whereIn('oid', oids));
      })
      .first<{ org: number | string | null; repo: number | string | null } | undefined>(
        q.raw('sum(size) as ??', ['org']),
        q.raw('sum(case when repo_id = ? then size else 0 end) as ??', [repo.id, 'repo']),
      );
    return { repo: Number(row?.repo ?? 0), org: Number(row?.org ?? 0) };
  }

  /** The refusal (507, in the object APIs' error shape) naming the setting, or null when `bytes` more fit. */
  function overCap(t: Totals, bytes: number, name: string): HttpError | null {
    const { partialBytesPerRepo: perRepo, partialBytesPerOrg: perOrg } = config;
    if (perRepo && t.repo + bytes > perRepo) {
      return new HttpError(507, `Unfinished resumable uploads to ${name} may declare at most ${perRepo} bytes together (LFS_PARTIAL_BYTES_PER_REPO); ${t.repo} are declared. Finish or abandon one, or upload with the basic transfer`);
    }
    if (perOrg && t.org + bytes > perOrg) {
      return new HttpError(507, `Unfinished resumable uploads in this organization may declare at most ${perOrg} bytes together (LFS_PARTIAL_BYTES_PER_ORG); ${t.org} are declared. Finish or abandon one, or upload with the basic transfer`);
    }
    return null;
  }

  return {
    /**
     * Counts the unfinished upload of `oid`, declaring `size`, against the caps, or refuses it
     * with 507. Called at each PATCH: the first one reserves, later ones move the expiry on.
     */
    async reserve(repo: RepoRef, name: string, oid: string, size: number): Promise<void> {
      const record = async (q: Db, now: number) => {
        const expires = now + config.partialTtlSeconds * 1000;
        await q(TABLE).insert({ repo_id: repo.id, oid, org_id: repo.org_id, size, expires_at: expires }).onConflict(['repo_id', 'oid']).merge({ size, expires_at: expires });
        // Lapsed rows count for nothing; drop the org's now and then.
        if (Math.random() < 0.05) await q(TABLE).where({ org_id: repo.org_id }).where('expires_at', '<=', now).delete();
      };
      // Uncapped, nothing is checked, but the upload is still recorded: pactum_object_tus_partial_bytes reads these rows.
      if (!capped) return record(db, Date.now());
      await db.transaction(async (trx) => {
        if (isPostgres(db)) await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`lfs-partials:${repo.org_id}`]);
        const now = Date.now();
        const refusal = overCap(await totals(trx, repo, [oid], now), size, name);
        if (refusal) throw refusal;
        await record(trx, now);
      });
    },

    /** The upload of `oid` is committed or discarded: it no longer counts. */
    async release(repoId: string, oid: string): Promise<void> {
      await db(TABLE).where({ repo_id: repoId, oid }).delete();
    },

    /**
     * Whether `objects` could all start resumable uploads now (a batch then offers tus; else
     * basic, which keeps nothing unfinished). Uploads of these objects already counted are left
     * out: resuming them declares nothing new. A hint only: reserve() is what holds.
     */
    async fits(repo: RepoRef, objects: { oid: string; size: number }[]): Promise<boolean> {
      if (!capped || !objects.length) return true;
      const t = await totals(db, repo, objects.map((o) => o.oid), Date.now());
      return overCap(t, objects.reduce((n, o) => n + o.size, 0), '') === null;
    },
  };
}

export type PartialQuota = ReturnType<typeof createPartialQuota>;

/** Bytes that unfinished, unexpired resumable uploads declare, across instances (the metrics read it). */
export async function partialBytesDeclared(db: Db): Promise<number> {
  const row = await db('lfs_partial_reservations').where('expires_at', '>', Date.now()).first<{ bytes: number | string | null } | undefined>(db.raw('sum(size) as ??', ['bytes']));
  return Number(row?.bytes ?? 0);
}
