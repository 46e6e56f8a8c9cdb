/**
 * Server-side sessions behind the `session` cookie. The cookie holds 32 random bytes; the table
 * holds their SHA-256, the user and the expiry. Logout, deactivation and a password reset revoke.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/knex.js';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

export async function createSession(db: Db, userId: string, ttlSeconds: number) {
  const token = randomBytes(32).toString('base64url');
  const now = new Date();
  const expiresAt = new Date(now.getTime() + ttlSeconds * 1000).toISOString();
  await db('sessions').insert({ token_hash: hashOf(token), user_id: userId, created_at: now.toISOString(), expires_at: expiresAt, revoked_at: null });
  return { token, id: hashOf(token), expiresAt };
}

/** The live session's user id, or null for an unknown, expired or revoked one. */
export async function resolveSession(db: Db, token: string): Promise<{ id: string; userId: string } | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const row = await db('sessions').where({ token_hash: hashOf(token) }).first();
  if (!row || row.revoked_at || row.expires_at <= new Date().toISOString()) return null;
  return { id: row.token_hash, userId: row.user_id };
}

export async function revokeSession(db: Db, token: string): Promise<void> {
  await db('sessions').where({ token_hash: hashOf(token) }).whereNull('revoked_at').update({ revoked_at: new Date().toISOString() });
}

export async function revokeUserSessions(db: Db, userId: string): Promise<void> {
  await db('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: new Date().toISOString() });
}
