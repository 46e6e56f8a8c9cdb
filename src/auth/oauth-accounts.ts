/**
 * The account of an OAuth grant: `<user id>:<credential version>`. A new password, a deactivation
 * or a revoked personal token moves the user's version, and every grant made before then names an
 * account that no longer stands: its refresh tokens and access tokens are refused.
 */
import { PERMISSIONS, ROLE_PERMISSIONS, grants } from '../domain/access/permissions.js';
import type { UserState } from './user-state.js';

export const accountIdOf = (userId: string, credentialVersion: number) => `${userId}:${credentialVersion}`;

export function parseAccountId(accountId: string): { userId: string; credentialVersion: number } | null {
  const m = /^(usr_[^:]{1,60}):(\d{1,15})$/.exec(accountId);
  return m ? { userId: m[1]!, credentialVersion: Number(m[2]) } : null;
}

/** The scopes of the MCP endpoint a user's role holds now (none for an account that no longer stands). */
export async function scopesHeldBy(users: UserState, accountId: string): Promise<readonly string[]> {
  const parsed = parseAccountId(accountId);
  const user = parsed && (await users.get(parsed.userId));
  if (!user || !user.active || Number(user.credential_version) !== parsed.credentialVersion) return [];
  const held = new Set(ROLE_PERMISSIONS[user.role]);
  return PERMISSIONS.filter((p) => grants(held, p));
}
