/**
 * Server-side sessions behind the `session` cookie. The cookie holds 32 random bytes; the table
 * holds their SHA-256, the user, the expiry and the user's credential version at sign-in. Logout
 * revokes one; anything that moves the credential version (a password or role change,
 * deactivation) ends them all.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/knex.js';

interface SessionRow {
  token_hash: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  credential_version: number;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

export async function createSession(db: Db, userId: string, ttlSeconds: number) {
  const token = randomBytes(32).toString('base64url');
  const now = new Date();
  const expiresAt = new Date(now.getTime() + ttlSeconds * 1000).toISOString();
  await db('sessions').insert({
    token_hash: hashOf(token), user_id: userId, created_at: now.toISOString(), expires_at: expiresAt, revoked_at: null,
    credential_version: db.raw('(select credential_version from users where id = ?)', [userId]),
  });
  return { token, id: hashOf(token), expiresAt };
}

/**
 * The session's user id and credential version, and whether it was revoked (signed out, or all
 * of its user's sessions ended); null for an unknown or expired one.
 */
export async function resolveSession(db: Db, token: string): Promise<{ id: string; userId: string; credentialVersion: number; revoked: boolean } | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const row = await db<SessionRow>('sessions').where({ token_hash: hashOf(token) }).first();
  if (!row || row.expires_at <= new Date().toISOString()) return null;
  return { id: row.token_hash, userId: row.user_id, credentialVersion: Number(row.credential_version), revoked: row.revoked_at !== null };
}

export async function revokeSession(db: Db, token: string): Promise<void> {
  await db('sessions').where({ token_hash: hashOf(token) }).whereNull('revoked_at').update({ revoked_at: new Date().toISOString() });
}

export async function revokeUserSessions(db: Db, userId: string): Promise<void> {
  await db('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: new Date().toISOString() });
}
