/**
 * Where element screenshots are kept: their bytes in the object store's backend (the filesystem
 * under DATA_DIR/screenshots, or the S3 bucket under <prefix>screenshots/, apart from Git LFS
 * objects), a row per image in scan_screenshots naming its scan and org. A new attempt at a scan
 * removes the earlier attempt's images with its pages.
 *
 * The disk is everyone's, so what one org keeps is bounded: an image is stored only while the
 * org's images stay within SCREENSHOTS_BYTES_PER_ORG and the store keeps LFS_MIN_FREE_BYTES free
 * (the guard Git LFS uploads meet), and images go SCREENSHOTS_RETENTION_DAYS after they were
 * taken. The row is reserved before a byte is written, by one statement that adds it only if the
 * org's sum stays within the quota; on PostgreSQL two scans of one org reserving at the same
 * moment may each see the other's image missing, so the quota can be passed by at most one image
 * per scan running for that org.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import type { Logger } from '../telemetry/log.js';
import type { ElementShot } from '../domain/scan/types.js';
import type { BlobBackend } from '../objects/store/backend.js';
import { fsBackend } from '../objects/store/fs.js';

export interface ScreenshotRow {
  id: string;
  scan_id: string;
  mime: 'image/webp' | 'image/png';
  width: number;
  height: number;
  bytes: number;
  created_at: string;
}

/** A stored image's id, or why it was not stored (a sentence naming the setting). */
export type ShotOutcome = { id: string } | { skipped: string };

export interface ScreenshotLimits {
  bytesPerOrg: number;
  retentionDays: number;
  /** LFS_MIN_FREE_BYTES: the store's free space an image must leave. */
  minFreeBytes: number;
}

export interface ScreenshotStore {
  /** Stores one image of scan `scanId` of org `orgId`, within the org's quota and the store's free space. */
  put(orgId: string, scanId: string, shot: ElementShot): Promise<ShotOutcome>;
  /** The image `id` of scan `scanId`, or null when that scan has no such image. */
  get(scanId: string, id: string): Promise<{ row: ScreenshotRow; body: () => Promise<Readable> } | null>;
  /** Removes every image of the scan (a new attempt starts from scratch). */
  removeScan(scanId: string): Promise<void>;
  /** Removes up to `batch` images older than the retention; answers how many it removed. */
  expire(now?: number, batch?: number): Promise<number>;
  readonly limits: ScreenshotLimits;
}

const MIB = 1024 * 1024;
const sizeText = (bytes: number) => (bytes >= MIB ? `${Math.round((bytes / MIB) * 10) / 10} MiB` : `${bytes} bytes`);

/** The backend for screenshots: the same kind as the object store's, in a namespace of its own. */
export async function screenshotBackend(config: Config): Promise<BlobBackend> {
  if (config.storage.kind === 's3') return (await import('../objects/store/s3.js')).s3Backend({ ...config.storage, prefix: `${config.storage.prefix}screenshots/` });
  return fsBackend(join(config.dataDir, 'screenshots'));
}

export function screenshotStore(db: Db, backend: BlobBackend, limits: ScreenshotLimits): ScreenshotStore {
  const overQuota = (used: number) =>
    `the organization's screenshots take ${sizeText(used)} of the ${sizeText(limits.bytesPerOrg)} it may keep (SCREENSHOTS_BYTES_PER_ORG); screenshots go ${limits.retentionDays} days after they were taken (SCREENSHOTS_RETENTION_DAYS)`;

  /** Adds the row only if the org's images stay within the quota; whether it was added. */
  async function reserve(row: ScreenshotRow & { org_id: string }): Promise<boolean> {
    await db.raw(
      `INSERT INTO scan_screenshots (id, scan_id, org_id, mime, width, height, bytes, created_at)
       SELECT ?, ?, ?, ?, CAST(? AS INTEGER), CAST(? AS INTEGER), CAST(? AS INTEGER), ?
       WHERE (SELECT COALESCE(SUM(bytes), 0) FROM scan_screenshots WHERE org_id = ?) + CAST(? AS INTEGER) <= CAST(? AS INTEGER)`,
      [row.id, row.scan_id, row.org_id, row.mime, row.width, row.height, row.bytes, row.created_at, row.org_id, row.bytes, limits.bytesPerOrg],
    );
    return Boolean(await db('scan_screenshots').where({ id: row.id }).first('id'));
  }

  const used = async (orgId: string) => Number((await db('scan_screenshots').where({ org_id: orgId }).sum({ total: 'bytes' }).first<{ total: number | string | null }>())?.total ?? 0);

  return {
    limits,
    async put(orgId, scanId, shot) {
      const bytes = shot.bytes.length;
      if (limits.minFreeBytes > 0) {
        const free = await backend.freeBytes();
        if (free !== null && free - bytes < limits.minFreeBytes) return { skipped: `the store has less free space than LFS_MIN_FREE_BYTES (${sizeText(limits.minFreeBytes)})` };
      }
      const id = randomBytes(16).toString('hex');
      const row = { id, scan_id: scanId, org_id: orgId, mime: shot.mime, width: shot.width, height: shot.height, bytes, created_at: new Date().toISOString() };
      if (!(await reserve(row))) return { skipped: overQuota(await used(orgId)) };
      const write = await backend.beginWrite(id, bytes).catch(async (err: unknown) => {
        await db('scan_screenshots').where({ id }).delete();
        throw err;
      });
      try {
        await new Promise<void>((resolve, reject) => write.stream.end(shot.bytes, (err?: Error | null) => (err ? reject(err) : resolve())));
        await write.commit();
      } catch (err) {
        await write.abort().catch(() => undefined);
        await db('scan_screenshots').where({ id }).delete();
        throw err;
      }
      return { id };
    },
    async get(scanId, id) {
      const row = await db<ScreenshotRow>('scan_screenshots').where({ id, scan_id: scanId }).first();
      // An image whose expiry was cut short (its row outlived it) is as gone as an expired one.
      if (!row || (await backend.stat(id)) === null) return null;
      return { row, body: () => backend.read(id) };
    },
    async removeScan(scanId) {
      const rows = await db<ScreenshotRow>('scan_screenshots').where({ scan_id: scanId }).select('id');
      for (const { id } of rows) await backend.delete(id).catch(() => undefined);
      await db('scan_screenshots').where({ scan_id: scanId }).delete();
    },
    async expire(now = Date.now(), batch = 500) {
      const before = new Date(now - limits.retentionDays * 86_400_000).toISOString();
      const rows = await db<ScreenshotRow>('scan_screenshots').where('created_at', '<', before).orderBy('created_at').limit(batch).select('id');
      // The image first: a row left without its image reads as missing (get), where an image left without its row would never be found again.
      for (const { id } of rows) await backend.delete(id).catch(() => undefined);
      if (rows.length) await db('scan_screenshots').whereIn('id', rows.map((r) => r.id)).delete();
      return rows.length;
    },
  };
}

/**
 * Removes expired screenshots now and then every `intervalMs` (the storage housekeeping's
 * interval), a batch at a time until none is left; one instance at a time on PostgreSQL. Never
 * fatal: a round that fails is tried again at the next. Resolves after the first round with the
 * function that stops it.
 */
export async function startScreenshotExpiry(store: ScreenshotStore, opts: { intervalMs: number; exclusive: (work: () => Promise<void>) => Promise<void>; log: Logger }): Promise<() => void> {
  const BATCH = 500;
  const round = () =>
    opts.exclusive(async () => {
      let removed = 0;
      for (let n = BATCH; n === BATCH; removed += n) n = await store.expire(Date.now(), BATCH);
      if (removed) opts.log.info({ removed }, `removed screenshots older than ${store.limits.retentionDays} days (SCREENSHOTS_RETENTION_DAYS)`);
    }).catch((err: unknown) => opts.log.warn({ err: (err as Error).message }, 'could not remove expired screenshots; trying again at the next round'));
  await round();
  const timer = setInterval(() => void round(), opts.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
