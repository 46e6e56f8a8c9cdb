/** The backend the configuration selects, with its start-up and shutdown work. Server and CLI use it. */
import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';
import type { BlobBackend } from './backend.js';
import { fsBackend, sweepTemporaryFiles } from './fs.js';
import { s3Backend } from './s3.js';

export interface StorageLifecycle {
  store: BlobBackend;
  /** Housekeeping at start-up: what a killed process left (temporary files, multipart uploads). Never fatal. */
  start(): Promise<void>;
  close(): void;
}

export function openBackend(config: Config, log: Logger): StorageLifecycle {
  if (config.storage.kind === 'fs') {
    const root = join(config.dataDir, 'lfs');
    return {
      store: fsBackend(root),
      async start() {
        const swept = await sweepTemporaryFiles(root).catch((err) => (log.warn({ err: (err as Error).message }, 'could not sweep temporary files'), 0));
        if (swept) log.info({ swept }, 'removed temporary files of uploads a previous process left');
      },
      close: () => {},
    };
  }
  const s3 = s3Backend(config.storage);
  return {
    store: s3,
    async start() {
      try {
        // Uploads in flight on other instances are younger than a day; anything older was abandoned.
        const swept = await s3.sweep(24 * 3600 * 1000);
        if (swept) log.info({ swept }, 'aborted abandoned multipart uploads');
      } catch (err) {
        // Unreachable storage is for /readyz to report; the server still starts.
        log.warn({ err: (err as Error).message }, 'could not sweep abandoned multipart uploads');
      }
    },
    close: () => s3.destroy(),
  };
}
