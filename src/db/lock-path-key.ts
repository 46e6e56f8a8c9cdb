import { createHash } from 'node:crypto';

/**
 * What lock uniqueness and lookups go by: the path's SHA-256. A lock path may be 4,096
 * characters, more than PostgreSQL can put in a b-tree entry (about 2.7 kB). Migration 007
 * computes it for existing rows with this same function.
 */
export const lockPathKey = (path: string) => createHash('sha256').update(path).digest('hex');
