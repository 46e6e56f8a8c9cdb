/**
 * Keyset pagination. The cursor is the last key of the previous page, base64url-encoded (opaque
 * to callers); ids are time-ordered ULIDs, so "newest first" is descending id order.
 */
import type { Knex } from 'knex';

export class CursorError extends Error {}

export const encodeCursor = (key: string) => Buffer.from(key, 'utf8').toString('base64url');

export function decodeCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!key || encodeCursor(key) !== cursor) throw new CursorError('cursor is not one this server handed out');
  return key;
}

/** Applies the cursor and limit (fetching one more row to know whether a next page exists). */
export async function page<Row extends object>(
  query: Knex.QueryBuilder,
  opts: { column: string; order: 'asc' | 'desc'; limit: number; cursor?: string },
): Promise<{ rows: Row[]; nextCursor: string | null }> {
  if (opts.cursor) query.where(opts.column, opts.order === 'asc' ? '>' : '<', decodeCursor(opts.cursor));
  const rows = (await query.orderBy(opts.column, opts.order).limit(opts.limit + 1)) as Row[];
  const more = rows.length > opts.limit;
  if (more) rows.pop();
  const last = rows[rows.length - 1];
  return { rows, nextCursor: more && last ? encodeCursor(String((last as Record<string, unknown>)[opts.column.split('.').pop()!])) : null };
}
