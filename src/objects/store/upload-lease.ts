/**
 * A layer over any backend: one request at a time may append to a resumable upload, across every
 * instance sharing the database. The holder renews its lease while bytes flow; a holder that
 * vanished (killed, cut off) loses it after LFS_UPLOAD_LEASE_SECONDS, so the client can resume.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/knex.js';
import { UploadBusy, type BlobBackend } from './backend.js';

export function withUploadLeases(backend: BlobBackend, db: Db, ttlSeconds: number): BlobBackend {
  const ttl = ttlSeconds * 1000;

  async function acquire(key: string, holder: string) {
    await db('upload_leases').insert({ key, holder, expires_at: Date.now() + ttl }).onConflict('key').ignore();
    const taken = await db('upload_leases')
      .where({ key })
      .andWhere((q) => {
        q.where({ holder }).orWhere('expires_at', '<', Date.now());
      })
      .update({ holder, expires_at: Date.now() + ttl });
    if (!taken) throw new UploadBusy();
  }

  return {
    ...backend,
    partials: {
      ...backend.partials,
      /** A partial a request is appending to is never expired, however long that request is quiet. */
      async expire(idleMs) {
        const live = await db('upload_leases').where('expires_at', '>=', Date.now()).pluck('key');
        return backend.partials.expire(idleMs, new Set(live as string[]));
      },
      async append(key, offset, body, limit, opts) {
        const holder = randomBytes(12).toString('hex');
        await acquire(key, holder);
        const renew = setInterval(() => {
          void db('upload_leases').where({ key, holder }).update({ expires_at: Date.now() + ttl }).catch(() => {});
        }, ttl / 3);
        try {
          return await backend.partials.append(key, offset, body, limit, opts);
        } finally {
          clearInterval(renew);
          await db('upload_leases').where({ key, holder }).delete();
        }
      },
    },
  };
}
