/**
 * The Git LFS file locking API: locks.create, locks.list, locks.verify, locks.unlock. Writers
 * lock; anyone who may read lists; only the owner unlocks, or a repository admin with force.
 */
import type { components as B } from '../../generated/types/batch.js';
import { newId } from '../ground/ids.js';
import { HttpError } from '../http/errors.js';
import type { Handler } from '../http/router.js';
import { decodeCursor, encodeCursor } from '../db/pagination.js';
import { isUniqueViolation } from '../db/users.js';
import { lockPathKey, normaliseLockPath } from '../db/lock-path-key.js';
import type { ObjectDeps } from './services.js';
import { authorize } from './access.js';

type Lock = B['schemas']['lock'];
interface LockRow { id: string; repo_id: string; path: string; path_key?: string; owner_id: string; owner_name: string; ref_name: string | null; locked_at: string }

const toLock = (r: LockRow): Lock => ({ id: r.id, path: r.path, locked_at: r.locked_at, owner: { name: r.owner_name } });

/** The locking API lets the server bound page sizes: 0 or none is the default, beyond the cap is the cap. */
const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;
const pageSize = (limit: number | null | undefined) => Math.min(limit || DEFAULT_PAGE, MAX_PAGE);

/** `ref` may be missing, null, `{}` or carry a null or empty name: all mean no ref. */
const refName = (ref: { name?: string | null } | null | undefined) => ref?.name || null;

function cursorOf(cursor: string | undefined) {
  try {
    return cursor ? decodeCursor(cursor) : undefined;
  } catch {
    throw new HttpError(400, 'The cursor is not one this server handed out');
  }
}

export function createLock(s: Pick<ObjectDeps, 'db'>): Handler<'locks.create'> {
  return async ({ params, body, identity }) => {
    const { repo } = await authorize(s.db, params, identity, 'write');
    const req = body;
    const normal = normaliseLockPath(req.path);
    if (!normal.ok) throw new HttpError(422, normal.reason);
    const { path } = normal;
    const row: LockRow = {
      id: newId('lck'), repo_id: repo.id, path, owner_id: identity!.subject, owner_name: identity!.username ?? identity!.subject,
      ref_name: refName(req.ref), locked_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    try {
      await s.db('lfs_locks').insert({ ...row, path_key: lockPathKey(path) });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const existing = await s.db<LockRow>('lfs_locks').where({ repo_id: repo.id, path_key: lockPathKey(path) }).first();
      // Unlocked again in between, or another constraint: the error boundary's 409.
      if (!existing) throw err;
      return { status: 409, body: { lock: toLock(existing), message: `${path} is already locked by ${existing.owner_name}` } };
    }
    return { status: 201, body: { lock: toLock(row) } };
  };
}

async function pageOfLocks(s: Pick<ObjectDeps, 'db'>, repoId: string, opts: { path?: string; id?: string; cursor?: string; limit: number }) {
  const q = s.db<LockRow>('lfs_locks').where({ repo_id: repoId });
  if (opts.path) {
    // A path no lock can have (`..`, absolute) matches nothing rather than refusing the listing.
    const normal = normaliseLockPath(opts.path);
    if (!normal.ok) return { rows: [], next: undefined };
    q.where({ path_key: lockPathKey(normal.path) });
  }
  if (opts.id) q.where({ id: opts.id });
  const after = cursorOf(opts.cursor);
  if (after) q.where('path', '>', after);
  const rows = await q.orderBy('path').limit(opts.limit + 1);
  const more = rows.length > opts.limit;
  if (more) rows.pop();
  return { rows, next: more ? encodeCursor(rows[rows.length - 1]!.path) : undefined };
}

export function listLocks(s: Pick<ObjectDeps, 'db'>): Handler<'locks.list'> {
  return async ({ params, identity }) => {
    const { repo } = await authorize(s.db, params, identity, 'read');
    const { rows, next } = await pageOfLocks(s, repo.id, { path: params.path, id: params.id, cursor: params.cursor, limit: pageSize(params.limit) });
    return { status: 200, body: { locks: rows.map(toLock), ...(next ? { next_cursor: next } : {}) } };
  };
}

export function verifyLocks(s: Pick<ObjectDeps, 'db'>): Handler<'locks.verify'> {
  return async ({ params, body, identity }) => {
    const { repo } = await authorize(s.db, params, identity, 'write');
    const { cursor, limit } = (body ?? {});
    const { rows, next } = await pageOfLocks(s, repo.id, { cursor: cursor ?? undefined, limit: pageSize(limit) });
    const mine = (r: LockRow) => r.owner_id === identity!.subject;
    return { status: 200, body: { ours: rows.filter(mine).map(toLock), theirs: rows.filter((r) => !mine(r)).map(toLock), ...(next ? { next_cursor: next } : {}) } };
  };
}

export function unlock(s: Pick<ObjectDeps, 'db'>): Handler<'locks.unlock'> {
  return async ({ params, body, identity }) => {
    const { repo, access } = await authorize(s.db, params, identity, 'write');
    const force = Boolean(body?.force);
    const row = await s.db<LockRow>('lfs_locks').where({ repo_id: repo.id, id: params.id }).first();
    if (!row) throw new HttpError(404, `No lock ${params.id} in ${repo.org_slug}/${repo.name}`);
    if (row.owner_id !== identity!.subject) {
      if (!force) throw new HttpError(403, `${row.path} is locked by ${row.owner_name}; only they may unlock it (or an admin, with force)`);
      if (access !== 'admin') throw new HttpError(403, `Only a repository admin may force-unlock ${row.path}`);
    }
    await s.db('lfs_locks').where({ id: row.id }).delete();
    return { status: 200, body: { lock: toLock(row) } };
  };
}
