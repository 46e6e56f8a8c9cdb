import { createHash } from 'node:crypto';

/**
 * What lock uniqueness and lookups go by: the path's SHA-256. A lock path may be 4,096
 * characters, more than PostgreSQL can put in a b-tree entry (about 2.7 kB). Migration 007
 * computes it for existing rows with this same function. Callers pass the normalised path
 * (normaliseLockPath), so that one file has one key whatever its spelling.
 */
export const lockPathKey = (path: string) => createHash('sha256').update(path).digest('hex');

export type NormalisedLockPath = { ok: true; path: string } | { ok: false; reason: string };

/**
 * One spelling per file: `./a/b`, `a//b` and `a/b/` are all `a/b`. A lock is on a path of the
 * repository's work tree, so `..` (which would name a file outside it, or the same file a second
 * way) and absolute paths are refused rather than resolved. Backslashes are left alone: git-lfs
 * sends `/`-separated paths, and `\` is an ordinary character of a file name on Unix.
 */
export function normaliseLockPath(raw: string): NormalisedLockPath {
  if (raw.startsWith('/')) return { ok: false, reason: `Lock path ${JSON.stringify(raw)} is absolute; give it relative to the repository root` };
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return { ok: false, reason: `Lock path ${JSON.stringify(raw)} has a '..' segment; give it relative to the repository root, without '..'` };
  if (!segments.length) return { ok: false, reason: `Lock path ${JSON.stringify(raw)} names no file` };
  return { ok: true, path: segments.join('/') };
}
