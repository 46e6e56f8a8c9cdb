/** Users and orgs as stored. Rows map to the spec's User and Organization; hashes never leave here except for verification. */
import type { components } from '../../generated/types/dashboard.js';
import { ROLE_PERMISSIONS, type Role } from '../domain/access/permissions.js';
import { newId } from '../ground/ids.js';
import type { Db } from './knex.js';
import { principalsChanged } from './principal-changes.js';

export type User = components['schemas']['user'];
export type Organization = components['schemas']['organization'];

export interface UserRow {
  id: string;
  org_id: string;
  username: string;
  password_hash: string;
  role: Role;
  active: boolean | 0 | 1;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
  /** Moved by a new password, deactivation, reactivation and a revoked personal token (changeUser, revokePersonalTokens). */
  credential_version: number;
}

export interface OrgRow { id: string; name: string; slug: string; created_at: string; updated_at: string }

export const toUser = (r: UserRow): User => ({
  id: r.id,
  orgId: r.org_id,
  username: r.username,
  role: r.role,
  permissions: [...ROLE_PERMISSIONS[r.role]],
  active: Boolean(r.active),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastLoginAt: r.last_login_at,
});

export const toOrg = (r: OrgRow): Organization => ({ id: r.id, name: r.name, slug: r.slug, createdAt: r.created_at, updatedAt: r.updated_at });

export const findUserById = (db: Db, id: string) => db<UserRow>('users').where({ id }).first();
export const findUserByName = (db: Db, username: string) => db<UserRow>('users').where({ username }).first();
export const findOrgById = (db: Db, id: string) => db<OrgRow>('orgs').where({ id }).first().then((r) => r && toOrg(r));
export const findOrgBySlug = (db: Db, slug: string) => db<OrgRow>('orgs').where({ slug }).first().then((r) => r && toOrg(r));

export async function insertOrg(db: Db, o: { name: string; slug: string }): Promise<Organization> {
  const now = new Date().toISOString();
  const row: OrgRow = { id: newId('org'), name: o.name, slug: o.slug, created_at: now, updated_at: now };
  await db('orgs').insert(row);
  return toOrg(row);
}

export async function insertUser(db: Db, u: { orgId: string; username: string; passwordHash: string; role: Role }): Promise<User> {
  const now = new Date().toISOString();
  const row: UserRow = {
    id: newId('usr'), org_id: u.orgId, username: u.username, password_hash: u.passwordHash, role: u.role,
    active: true, created_at: now, updated_at: now, last_login_at: null, credential_version: 0,
  };
  await db('users').insert(row);
  return toUser(row);
}

export interface UserChanges {
  role?: Role;
  active?: boolean;
  passwordHash?: string;
}

/**
 * Changes a user, and ends what the change must end, in one transaction:
 *  - a new password, deactivation and reactivation move the credential version, so every bearer
 *    token, session, remembered Basic credential and transfer token issued before stops at its
 *    next request, on every instance (each compares the version it carries with the row);
 *  - deactivation revokes the user's personal tokens, so reactivating brings none of them back;
 *  - any of these, and a role change, end the user's sessions. Bearer tokens survive a role
 *    change: they are worth the role the user has at each request (auth/security.ts).
 * Setting `active` to what it already is changes nothing. Returns whether the version moved.
 */
export async function changeUser(db: Db, userId: string, changes: UserChanges): Promise<boolean> {
  const moved = await db.transaction(async (trx) => {
    const row = await trx<UserRow>('users').where({ id: userId }).first('active', 'role');
    if (!row) return false;
    const now = new Date().toISOString();
    const switched = changes.active !== undefined && changes.active !== Boolean(row.active);
    const credentialsMove = changes.passwordHash !== undefined || switched;
    const update: Record<string, unknown> = { updated_at: now };
    if (changes.role) update.role = changes.role;
    if (switched) update.active = changes.active;
    if (changes.passwordHash !== undefined) update.password_hash = changes.passwordHash;
    if (credentialsMove) update.credential_version = trx.raw('credential_version + 1');
    await trx('users').where({ id: userId }).update(update);
    if (switched && !changes.active) await trx('personal_tokens').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: now });
    if (credentialsMove || (changes.role && changes.role !== row.role)) {
      await trx('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: now });
    }
    return credentialsMove;
  });
  principalsChanged(db);
  return moved;
}

/** Whether an insert failed on a unique constraint (SQLite and PostgreSQL word it differently). */
export const isUniqueViolation = (err: unknown) =>
  /UNIQUE constraint failed|duplicate key value violates unique constraint/.test(String((err as Error)?.message));
