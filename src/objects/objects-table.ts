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

/** What a batch needs of a row: a batch reads up to a thousand, so only these columns. */
const FOUND_COLUMNS = ['oid', 'size', 'deleted_at', 'deleted_reason'] as const;
export type FoundObject = Pick<ObjectRow, (typeof FOUND_COLUMNS)[number]>;

/**
 * The rows of many oids in one indexed query (the primary key is (repo_id, oid)), so a batch
 * costs the same whatever the repository holds. The oids go as one parameter (PostgreSQL: an
 * array; SQLite: a JSON array through json_each), so the statement text is the same for every
 * batch: SQLite's prepared statement is reused (db/knex.ts) and nothing is compiled per call.
 */
export async function findObjects(db: Db, repoId: string, oids: string[]): Promise<Map<string, FoundObject>> {
  const found = new Map<string, FoundObject>();
  const unique = [...new Set(oids)];
  if (!unique.length) return found;
  const rows = isPostgres(db)
    ? (await db.raw<{ rows: FoundObject[] }>(`${FIND_OBJECTS} oid = any(?)`, [repoId, unique])).rows
    : await db.raw<FoundObject[]>(`${FIND_OBJECTS} oid in (select value from json_each(?))`, [repoId, JSON.stringify(unique)]);
  for (const row of rows) found.set(row.oid, row);
  return found;
}
const FIND_OBJECTS = `select ${FOUND_COLUMNS.join(', ')} from lfs_objects where repo_id = ? and`;

/**
 * Records a stored object in the repository. A takedown holds: an upload never lifts it (only
 * restoreObject does), so 'taken-down' says the bytes arrived for an object the repository may
 * not have; the caller removes them (dropUnusedBytes) and refuses.
 */
export async function recordObject(db: Db, repoId: string, oid: string, size: number): Promise<'recorded' | 'taken-down'> {
  await db('lfs_objects')
    .insert({ repo_id: repoId, oid, size, created_at: new Date().toISOString(), deleted_at: null, deleted_reason: null })
    .onConflict(['repo_id', 'oid'])
    .ignore();
  return isTakenDown(await findObject(db, repoId, oid)) ? 'taken-down' : 'recorded';
}

export const isLive = <R extends FoundObject>(row: R | undefined): row is R => Boolean(row && !row.deleted_at);
/** Deleted by `pactum repo delete-object`: gone (410) for readers and writers alike until an admin lifts it. */
export const isTakenDown = <R extends FoundObject>(row: R | undefined): row is R & { deleted_at: string } => Boolean(row?.deleted_at);
export const gone = (row: FoundObject) => `Object ${row.oid} was deleted: ${row.deleted_reason ?? 'no reason was given'}`;
/** Why an upload of a taken-down object is refused (410), with what lifts it. */
export const goneForUpload = (row: FoundObject) => `${gone(row)}; it cannot be uploaded again until an administrator lifts the takedown`;

/**
 * Deletes an object from a repository, keeping the reason (clients get 410 with it). Its bytes
 * go when no repository uses them any more.
 */
export async function deleteObject(db: Db, store: Pick<ContentStore, 'delete'>, repoId: string, oid: string, reason: string): Promise<boolean> {
  const n = await db('lfs_objects').where({ repo_id: repoId, oid }).whereNull('deleted_at').update({ deleted_at: new Date().toISOString(), deleted_reason: reason });
  if (!n) return false;
  await dropUnusedBytes(db, store, oid);
  return true;
}

/** Removes an object's bytes from the store when no repository has it live. */
export async function dropUnusedBytes(db: Db, store: Pick<ContentStore, 'delete'>, oid: string): Promise<void> {
  if (!(await db('lfs_objects').where({ oid }).whereNull('deleted_at').first())) await store.delete(oid);
}

/**
 * Lifts a takedown. When the store still holds the bytes (another repository has them) the object
 * is served again at once ('live'); otherwise it is as if never uploaded ('absent'), and a writer
 * may upload it. Null when the object is not taken down in this repository.
 */
export async function restoreObject(db: Db, store: Pick<ContentStore, 'stat'>, repoId: string, oid: string): Promise<'live' | 'absent' | null> {
  const row = await findObject(db, repoId, oid);
  if (!isTakenDown(row)) return null;
  const stored = await store.stat(oid);
  if (stored !== null && stored === Number(row.size)) {
    await db('lfs_objects').where({ repo_id: repoId, oid }).whereNotNull('deleted_at').update({ deleted_at: null, deleted_reason: null });
    return 'live';
  }
  await db('lfs_objects').where({ repo_id: repoId, oid }).whereNotNull('deleted_at').delete();
  return 'absent';
}
