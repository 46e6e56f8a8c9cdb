/**
 * Where element screenshots are kept: their bytes in the object store's backend (the filesystem
 * under DATA_DIR/screenshots, or the S3 bucket under <prefix>screenshots/, apart from Git LFS
 * objects), a row per image in scan_screenshots naming its scan. They live as long as the
 * scan's pages: a new attempt at a scan removes the earlier attempt's images with its pages.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../config.js';
import type { Db } from '../db/knex.js';
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

export interface ScreenshotStore {
  /** Stores one image of scan `scanId`; answers its id. */
  put(scanId: string, shot: ElementShot): Promise<string>;
  /** The image `id` of scan `scanId`, or null when that scan has no such image. */
  get(scanId: string, id: string): Promise<{ row: ScreenshotRow; body: () => Promise<Readable> } | null>;
  /** Removes every image of the scan (a new attempt starts from scratch). */
  removeScan(scanId: string): Promise<void>;
}

/** The backend for screenshots: the same kind as the object store's, in a namespace of its own. */
export async function screenshotBackend(config: Config): Promise<BlobBackend> {
  if (config.storage.kind === 's3') return (await import('../objects/store/s3.js')).s3Backend({ ...config.storage, prefix: `${config.storage.prefix}screenshots/` });
  return fsBackend(join(config.dataDir, 'screenshots'));
}

export function screenshotStore(db: Db, backend: BlobBackend): ScreenshotStore {
  return {
    async put(scanId, shot) {
      const id = randomBytes(16).toString('hex');
      const write = await backend.beginWrite(id, shot.bytes.length);
      try {
        await new Promise<void>((resolve, reject) => write.stream.end(shot.bytes, (err?: Error | null) => (err ? reject(err) : resolve())));
        await write.commit();
      } catch (err) {
        await write.abort().catch(() => undefined);
        throw err;
      }
      await db('scan_screenshots').insert({ id, scan_id: scanId, mime: shot.mime, width: shot.width, height: shot.height, bytes: shot.bytes.length, created_at: new Date().toISOString() });
      return id;
    },
    async get(scanId, id) {
      const row = await db<ScreenshotRow>('scan_screenshots').where({ id, scan_id: scanId }).first();
      return row ? { row, body: () => backend.read(id) } : null;
    },
    async removeScan(scanId) {
      const rows = await db<ScreenshotRow>('scan_screenshots').where({ scan_id: scanId }).select('id');
      for (const { id } of rows) await backend.delete(id).catch(() => undefined);
      await db('scan_screenshots').where({ scan_id: scanId }).delete();
    },
  };
}
