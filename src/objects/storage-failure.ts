/**
 * A failure of the file system objects are stored on (STORAGE=fs), told apart from the other
 * failures an object operation meets: the error Node gives for a file operation carries the
 * path it was about (a socket's error, a client that left, carries none). Such a failure is the
 * server's, not the request's: the client is answered 507 when the disk is full, else 503, never
 * a bare 500, and the metrics count it by kind.
 */

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
