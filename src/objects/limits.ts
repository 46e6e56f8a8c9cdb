/**
 * Request rate (429), bandwidth quota (509) and free-space floor (507). Counters live in the
 * database, so they hold across every instance that shares it.
 */
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import { HttpError } from '../http/errors.js';
import type { ContentStore } from './store/content-store.js';

const today = () => new Date().toISOString().slice(0, 10);

export function createLimits(db: Db, config: Config['lfs'], store: ContentStore) {
  return {
    /** Counts one request for `key` in the current minute; 429 with Retry-After past the limit. */
    async rate(key: string) {
      const limit = config.rateLimitPerMinute;
      if (!limit) return;
      const now = Date.now();
      const window = Math.floor(now / 60_000);
      // One statement: the count after this request (RETURNING: SQLite 3.35+, PostgreSQL).
      const [row] = await db('rate_windows')
        .insert({ key, window, count: 1 })
        .onConflict(['key', 'window'])
        .merge({ count: db.raw('?? + 1', ['rate_windows.count']) })
        .returning<{ count: number | string }[]>('count');
      if (Number(row?.count) > limit) {
        const retry = Math.max(1, Math.ceil(((window + 1) * 60_000 - now) / 1000));
        throw new HttpError(429, `Rate limit of ${limit} requests a minute reached; retry in ${retry} s`, { 'Retry-After': String(retry) });
      }
      // Old windows are dead weight; drop them now and then.
      if (Math.random() < 0.01) await db('rate_windows').where('window', '<', window - 1).delete();
    },

    /** 509 when serving `bytes` more would pass the repository's daily quota. */
    async checkBandwidth(repoId: string, name: string, bytes: number) {
      const quota = config.bandwidthQuotaPerDay;
      if (!quota) return;
      const row = await db('lfs_bandwidth').where({ repo_id: repoId, day: today() }).first<{ bytes: number | string } | undefined>('bytes');
      if (Number(row?.bytes ?? 0) + bytes > quota) {
        throw new HttpError(509, `The bandwidth quota of ${quota} bytes a day for ${name} is used up`);
      }
    },

    async chargeBandwidth(repoId: string, bytes: number) {
      if (!config.bandwidthQuotaPerDay || bytes <= 0) return;
      await db('lfs_bandwidth')
        .insert({ repo_id: repoId, day: today(), bytes })
        .onConflict(['repo_id', 'day'])
        .merge({ bytes: db.raw('?? + ?', ['lfs_bandwidth.bytes', bytes]) });
    },

    /** 507 when the store has less free space than the floor (or than `incoming` needs). */
    async checkSpace(incoming = 0) {
      if (!config.minFreeBytes) return;
      const free = await store.freeBytes();
      if (free !== null && free - incoming < config.minFreeBytes) {
        throw new HttpError(507, 'The object store is running out of space; try again later');
      }
    },
  };
}

export type Limits = ReturnType<typeof createLimits>;
