/**
 * A failure of the file system objects are stored on (STORAGE=fs), told apart from the other
 * failures an object operation meets: the error Node gives for a file operation carries the
 * path it was about (a socket's error, a client that left, carries none). Such a failure is the
 * server's, not the request's: the client is answered 507 when the disk is full, else 503, never
 * a bare 500, and the metrics count it by kind.
 */

import type { OperationSpec } from '../../generated/operations.js';
import { HttpError } from '../http/errors.js';
import type { FailureTranslator } from '../http/app.js';
import type { Metrics } from '../telemetry/metrics.js';
import { StoreUnavailable } from './store/backend.js';

/** What the metrics call it: the disk or quota is full, or the file system refused otherwise (EIO, EROFS, ENOTDIR, EACCES, …). */
export type FileSystemFailure = 'no_space' | 'io';

const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

export function fileSystemFailure(err: unknown): FileSystemFailure | null {
  if (!(err instanceof Error)) return null;
  const e = err as NodeJS.ErrnoException;
  if (typeof e.code !== 'string' || typeof e.syscall !== 'string' || typeof e.path !== 'string') return null;
  return NO_SPACE.has(e.code) ? 'no_space' : 'io';
}

/** The errno name, for the client's message (never the path: it shows where the server keeps its data). */
export const failureCode = (err: unknown) => (err as NodeJS.ErrnoException).code ?? 'EIO';

/** A file-system failure met by an object API's operation: the object storage's (STORAGE=fs). */
const objectStoreFailure = (err: unknown, operation: OperationSpec | undefined) =>
  operation && !operation.apis.includes('dashboard') ? fileSystemFailure(err) : null;

/**
 * The object storage's failures as the error boundary answers and counts them: an object store
 * that does not answer (503), the file system of the objects full (507 where the operation
 * declares it) or failing (503). Nothing of the request was kept: an object becomes visible only
 * once stored whole.
 */
export function storageFailures(metrics?: Metrics): FailureTranslator {
  return {
    answer(err, operation) {
      if (err instanceof StoreUnavailable) return new HttpError(503, 'The object storage is unavailable; retry in 5 s', { 'Retry-After': '5' });
      const fs = objectStoreFailure(err, operation);
      if (fs === 'no_space' && operation?.responses['507']) return new HttpError(507, 'The object storage is full');
      if (fs) return new HttpError(503, `The object storage failed (${failureCode(err)}); retry in 5 s`, { 'Retry-After': '5' });
      return null;
    },
    count(err, operation) {
      if (!metrics) return;
      if (err instanceof StoreUnavailable) return metrics.objects.storageErrors.inc({ kind: 'unavailable' });
      const fs = objectStoreFailure(err, operation);
      if (fs) metrics.objects.storageErrors.inc({ kind: fs });
    },
  };
}
