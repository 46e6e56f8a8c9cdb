/** Which objects a repository has (and which it had: a deleted object keeps its reason, for 410). */
import { isPostgres, type Db } from '../db/knex.js';
import type { ContentStore } from './store/content-store.js';

export interface ObjectRow {
  repo_id: string;
  oid: string;
  size: number | string;
  created_at: string;
  deleted_at: string | null;
  deleted_reason: string | null;
}

export const findObject = (db: Db, repoId: string, oid: string) => db<ObjectRow>('lfs_objects').where({ repo_id: repoId, oid }).first();

/**
 * The rows of many oids in one indexed query (the primary key is (repo_id, oid)), so a batch
 * costs the same whatever the repository holds. PostgreSQL takes the oids as one array
 * parameter; SQLite as a list, chunked only past its 32,766 parameters (a batch is capped at
 * LFS_MAX_BATCH_OBJECTS, 1,000 by default).
 */
export async function findObjects(db: Db, repoId: string, oids: string[]): Promise<Map<string, ObjectRow>> {
  const found = new Map<string, ObjectRow>();
  const unique = [...new Set(oids)];
  if (!unique.length) return found;
  if (isPostgres(db)) {
    for (const row of await db<ObjectRow>('lfs_objects').where({ repo_id: repoId }).whereRaw('oid = any(?)', [unique])) found.set(row.oid, row);
    return found;
  }
  for (let i = 0; i < unique.length; i += SQLITE_CHUNK) {
    for (const row of await db<ObjectRow>('lfs_objects').where({ repo_id: repoId }).whereIn('oid', unique.slice(i, i + SQLITE_CHUNK))) found.set(row.oid, row);
  }
  return found;
}
const SQLITE_CHUNK = 30_000;

/** Records a stored object in the repository; a re-upload lifts a deletion. */
export async function recordObject(db: Db, repoId: string, oid: string, size: number) {
  await db('lfs_objects')
    .insert({ repo_id: repoId, oid, size, created_at: new Date().toISOString(), deleted_at: null, deleted_reason: null })
    .onConflict(['repo_id', 'oid'])
    .merge({ size, deleted_at: null, deleted_reason: null });
}

export const isLive = (row: ObjectRow | undefined): row is ObjectRow => Boolean(row && !row.deleted_at);
export const gone = (row: ObjectRow) => `Object ${row.oid} was deleted: ${row.deleted_reason ?? 'no reason was given'}`;

/**
 * Deletes an object from a repository, keeping the reason (clients get 410 with it). Its bytes
 * go when no repository uses them any more.
 */
export async function deleteObject(db: Db, store: Pick<ContentStore, 'delete'>, repoId: string, oid: string, reason: string): Promise<boolean> {
  const n = await db('lfs_objects').where({ repo_id: repoId, oid }).whereNull('deleted_at').update({ deleted_at: new Date().toISOString(), deleted_reason: reason });
  if (!n) return false;
  if (!(await db('lfs_objects').where({ oid }).whereNull('deleted_at').first())) await store.delete(oid);
  return true;
}
