/** Repositories, grants and personal tokens as stored. */
import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../ground/ids.js';
import type { Db } from './knex.js';
import { principalsChanged } from './principal-changes.js';

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

/**
 * The repository and, in the same query, the grant `userId` holds on it (null for none, or for no
 * user): what authorizing an object request reads, in one round trip instead of two.
 */
export async function findRepoWithGrant(db: Db, orgSlug: string, name: string, userId: string | null): Promise<{ repo: RepoRow; grant: RepoAccess | null } | undefined> {
  const q = db('repos as r').join('orgs as o', 'o.id', 'r.org_id').where({ 'o.slug': orgSlug, 'r.name': name });
  if (userId === null) {
    const repo = await q.first<RepoRow | undefined>('r.*', 'o.slug as org_slug');
    return repo && { repo, grant: null };
  }
  const row = await q
    .leftJoin('repo_grants as g', (j) => j.on('g.repo_id', '=', 'r.id').andOn('g.user_id', '=', db.raw('?', [userId])))
    .first<(RepoRow & { grant_access: RepoAccess | null }) | undefined>('r.*', 'o.slug as org_slug', 'g.access as grant_access');
  if (!row) return undefined;
  const { grant_access, ...repo } = row;
  return { repo, grant: grant_access ?? null };
}

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

/** A personal access token: shown once, stored as its SHA-256; optionally expiring. */
export async function createPersonalToken(db: Db, userId: string, name: string, ttlSeconds?: number) {
  const token = `pat_${randomBytes(24).toString('base64url')}`;
  const now = new Date();
  const expiresAt = ttlSeconds ? new Date(now.getTime() + ttlSeconds * 1000).toISOString() : null;
  const id = newId('pat');
  await db('personal_tokens').insert({ id, user_id: userId, token_hash: tokenHash(token), name, created_at: now.toISOString(), last_used_at: null, revoked_at: null, expires_at: expiresAt });
  return { token, id, expiresAt };
}

/**
 * The token with this secret, live or not: whether it was revoked or has expired is the caller's
 * to tell apart (a revoked token's refusal is counted as a revocation, an expired one's is not).
 */
export async function findPersonalToken(db: Db, token: string): Promise<{ id: string; user_id: string; revoked: boolean; expired: boolean } | undefined> {
  const row = await db('personal_tokens')
    .where({ token_hash: tokenHash(token) })
    .first<{ id: string; user_id: string; revoked_at: string | null; expires_at: string | null } | undefined>('id', 'user_id', 'revoked_at', 'expires_at');
  if (!row) return undefined;
  return { id: row.id, user_id: row.user_id, revoked: row.revoked_at !== null, expired: row.expires_at !== null && row.expires_at <= new Date().toISOString() };
}

export interface PersonalTokenRow {
  id: string;
  user_id: string;
  name: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A user's tokens, newest first, without their hashes. */
export const listPersonalTokens = (db: Db, userId: string) =>
  db<PersonalTokenRow>('personal_tokens')
    .where({ user_id: userId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .select('id', 'user_id', 'name', 'created_at', 'expires_at', 'last_used_at', 'revoked_at');

/**
 * Revokes a user's live tokens named `ref` (an id, or a name) and moves the user's credential
 * version, so Basic credentials remembered by any instance stop at once. Returns how many.
 */
/** A name that several live tokens of a user share (made before names were unique): revoke by id. */
export class AmbiguousTokenName extends Error {
  constructor(readonly tokenName: string, readonly ids: string[]) {
    super(`${ids.length} live tokens are named ${tokenName} (${ids.join(', ')}): revoke one by its id`);
  }
}

/** Revokes one live token of the user, named by its id or its name; 0 when there is none. */
export async function revokePersonalTokens(db: Db, userId: string, ref: string): Promise<number> {
  const revoked = await db.transaction(async (trx) => {
    const now = new Date().toISOString();
    const live = await trx('personal_tokens')
      .where({ user_id: userId })
      .whereNull('revoked_at')
      .where((q) => {
        q.where({ id: ref }).orWhere({ name: ref });
      })
      .select<{ id: string; name: string }[]>('id', 'name');
    const byId = live.filter((t) => t.id === ref);
    const target = byId.length ? byId : live;
    if (target.length > 1) throw new AmbiguousTokenName(ref, target.map((t) => t.id));
    const n = target.length ? await trx('personal_tokens').where({ id: target[0]!.id }).whereNull('revoked_at').update({ revoked_at: now }) : 0;
    if (n) await trx('users').where({ id: userId }).update({ credential_version: trx.raw('credential_version + 1'), updated_at: now });
    return n;
  });
  principalsChanged(db);
  return revoked;
}

/** Last use is recorded at most once a minute per token: a push is thousands of requests. */
const lastNoted = new Map<string, number>();
export async function noteTokenUse(db: Db, tokenId: string, now = Date.now()): Promise<void> {
  if ((lastNoted.get(tokenId) ?? 0) > now - 60_000) return;
  if (lastNoted.size >= 10_000) lastNoted.clear();
  lastNoted.set(tokenId, now);
  await db('personal_tokens').where({ id: tokenId }).update({ last_used_at: new Date(now).toISOString() });
}
