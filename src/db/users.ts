/** Users and orgs as stored. Rows map to the spec's User and Organization; hashes never leave here except for verification. */
import type { components } from '../../generated/types/dashboard.js';
import { ROLE_PERMISSIONS, type Role } from '../auth/permissions.js';
import { newId } from '../ids.js';
import type { Db } from './knex.js';

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
  /** Bumped by anything that takes a credential or a permission away (see migration 009). */
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

/**
 * Changes a user and moves its credential version in one statement: every session, cached Basic
 * credential and transfer token issued under the old version stops working at its next request.
 */
export const updateUserRevoking = (db: Db, userId: string, changes: Partial<UserRow> = {}) =>
  db('users').where({ id: userId }).update({ ...changes, updated_at: new Date().toISOString(), credential_version: db.raw('credential_version + 1') });

/** Whether an insert failed on a unique constraint (SQLite and PostgreSQL word it differently). */
export const isUniqueViolation = (err: unknown) =>
  /UNIQUE constraint failed|duplicate key value violates unique constraint/.test(String((err as Error)?.message));
