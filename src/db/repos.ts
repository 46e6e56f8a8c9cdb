/** Repositories, grants and personal tokens as stored. */
import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../ids.js';
import type { Db } from './knex.js';

export type RepoAccess = 'read' | 'write' | 'admin';

export interface RepoRow {
  id: string;
  org_id: string;
  name: string;
  public: boolean | 0 | 1;
  created_at: string;
  org_slug: string;
}

/** `<org slug>/<repo name>` → the repository, or undefined. */
export const findRepo = (db: Db, orgSlug: string, name: string) =>
  db('repos as r').join('orgs as o', 'o.id', 'r.org_id').where({ 'o.slug': orgSlug, 'r.name': name }).first<RepoRow | undefined>('r.*', 'o.slug as org_slug');

export const findGrant = (db: Db, repoId: string, userId: string) =>
  db('repo_grants').where({ repo_id: repoId, user_id: userId }).first<{ access: RepoAccess } | undefined>('access');

export async function createRepo(db: Db, orgId: string, name: string, isPublic: boolean) {
  const row = { id: newId('repo'), org_id: orgId, name, public: isPublic, created_at: new Date().toISOString() };
  await db('repos').insert(row);
  return row;
}

export async function setGrant(db: Db, repoId: string, userId: string, access: RepoAccess | null) {
  if (!access) return db('repo_grants').where({ repo_id: repoId, user_id: userId }).delete();
  await db('repo_grants').insert({ repo_id: repoId, user_id: userId, access }).onConflict(['repo_id', 'user_id']).merge({ access });
}

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/** A personal access token: shown once, stored as its SHA-256. */
export async function createPersonalToken(db: Db, userId: string, name: string) {
  const token = `pat_${randomBytes(24).toString('base64url')}`;
  await db('personal_tokens').insert({ id: newId('pat'), user_id: userId, token_hash: tokenHash(token), name, created_at: new Date().toISOString(), last_used_at: null, revoked_at: null });
  return token;
}

export const findPersonalToken = (db: Db, token: string) =>
  db('personal_tokens').where({ token_hash: tokenHash(token) }).whereNull('revoked_at').first<{ id: string; user_id: string } | undefined>('id', 'user_id');
