/** The backend the configuration selects, with its housekeeping. Server and CLI use it. */
import { join } from 'node:path';
import type { Config } from '../../ground/config.js';
import type { Logger } from '../../telemetry/log.js';
import type { BlobBackend, PartialUploads } from './backend.js';
import { fsBackend, sweepTemporaryFiles } from './fs.js';
import type { Metrics } from '../../telemetry/metrics.js';

/** Runs `work` unless another instance is running it right now (PostgreSQL); else runs it. */
export type Exclusive = (work: () => Promise<void>) => Promise<void>;

export interface StorageLifecycle {
  store: BlobBackend;
  /**
   * Housekeeping at start-up, then every STORAGE_SWEEP_INTERVAL_SECONDS; never fatal. `partials`:
   * the layer whose expiry knows which uploads are busy (the upload leases).
   */
  start(opts?: { exclusive?: Exclusive; partials?: PartialUploads; sweepNow?: boolean }): Promise<void>;
  /** One round of housekeeping: what killed processes and vanished clients left. */
  sweep(): Promise<void>;
  close(): void;
}

/**
 * How long a temporary file of a basic upload may sit untouched before it is dead: a live upload
 * writes continuously, and the server cuts a body that is silent for HTTP_IDLE_TIMEOUT_MS or
 * slower than HTTP_MIN_BODY_RATE over a window; twice the longer of those leaves a margin, so
 * instances sharing a store never remove each other's live files.
 */
export const temporaryFileIdleMs = (http: Config['http']) => 2 * Math.max(http.idleTimeoutMs, 2 * http.bodyRateWindowMs);

/**
 * An S3 multipart upload has no "last touched" time, only its start; a basic upload has no overall
 * time limit, so one that started a day ago is taken as abandoned (a bucket lifecycle rule for
 * incomplete multipart uploads is the belt to these braces).
 */
const MULTIPART_MAX_AGE_MS = 24 * 3600 * 1000;

export async function openBackend(config: Config, log: Logger, metrics?: Metrics): Promise<StorageLifecycle> {
  const fsRoot = join(config.dataDir, 'lfs');
  // The AWS SDK (about 25 MB resident) is loaded only by servers that store in S3.
  const s3 = config.storage.kind === 's3' ? (await import('./s3.js')).s3Backend({ ...config.storage, ...(metrics ? { onRequest: (command: string, seconds: number) => metrics.objects.s3Duration.observe({ command }, seconds) } : {}) }) : null;
  const store: BlobBackend = s3 ?? fsBackend(fsRoot);
  const partialTtlMs = config.lfs.partialTtlSeconds * 1000;
  let timer: NodeJS.Timeout | null = null;
  let partials = store.partials;

  /** Whether the step succeeded. `kind`: what the metrics call what it removes. */
  async function step(what: string, kind: string, work: () => Promise<number>): Promise<boolean> {
    try {
      const removed = await work();
      if (removed) log.info({ removed }, `removed ${what}`);
      metrics?.objects.swept.inc({ what: kind }, removed);
      return true;
    } catch (err) {
      // Unreachable storage is for /readyz to report; housekeeping tries again next round.
      log.warn({ err: (err as Error).message }, `could not remove ${what}`);
      return false;
    }
  }

  async function sweep() {
    const first = s3
      ? await step('abandoned multipart uploads', 'multipart_uploads', () => s3.sweep(MULTIPART_MAX_AGE_MS))
      : await step('temporary files of uploads that died', 'temporary_files', () => sweepTemporaryFiles(fsRoot, temporaryFileIdleMs(config.http)));
    const second = await step('expired resumable uploads', 'resumable_uploads', () => partials.expire(partialTtlMs));
    metrics?.objects.sweeps.inc({ outcome: first && second ? 'ok' : 'failed' });
  }

  return {
    store,
    sweep,
    /** `sweepNow`: false when the store did not answer at start; the first round then comes with the interval. */
    async start({ exclusive = (work: () => Promise<void>) => work(), partials: layer = store.partials, sweepNow = true } = {}) {
      partials = layer;
      const round = () => exclusive(sweep);
      if (sweepNow) await round();
      timer = setInterval(() => void round().catch(() => {}), config.lfs.sweepIntervalSeconds * 1000);
      timer.unref();
    },
    close: () => {
      if (timer) clearInterval(timer);
      s3?.destroy();
    },
  };
}
