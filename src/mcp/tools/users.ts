/** dashboard_create_user, dashboard_get_user, dashboard_list_users, dashboard_update_user, and a user's personal tokens. */
import type { Identity } from '../../domain/access/identity.js';
import { hashPassword } from '../../auth/passwords.js';
import { ROLE_PERMISSIONS, grants, type Role } from '../../domain/access/permissions.js';
import { page } from '../../db/pagination.js';
import { AmbiguousTokenName, listPersonalTokens, revokePersonalTokens, type PersonalTokenRow } from '../../db/repos.js';
import { findOrgById, findUserById, insertUser, isUniqueViolation, toUser, changeUser, type UserChanges, type UserRow } from '../../db/users.js';
import { ToolFailure, inScope, targetOrg, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';

/** Nobody hands out, or takes away, more than it holds itself. */
function mayManageRole(caller: Identity, role: Role): boolean {
  return ROLE_PERMISSIONS[role].every((p) => grants(caller.permissions, p));
}

function assertMayManage(caller: Identity, role: Role, what: string) {
  if (!mayManageRole(caller, role)) throw new ToolFailure('forbidden', `You may not ${what} a user with the role ${role}: it has permissions you do not`);
}

async function userInScope(caller: Identity, userId: string, db: Parameters<typeof findUserById>[0]): Promise<UserRow> {
  const row = await findUserById(db, userId);
  // Another org's user is "not found": its existence is not the caller's business.
  if (!row || !inScope(caller, row.org_id)) throw new ToolFailure('not_found', `No user ${userId}`);
  return row;
}

/**
 * The user whose personal tokens the caller may list or revoke: one it may see and manage (holding
 * every permission of the user's role). Any other, like a missing one, is "not found" with the same
 * message, so an org admin learns nothing of a system admin's tokens.
 */
async function tokenOwner(caller: Identity, userId: string, db: Parameters<typeof findUserById>[0]): Promise<UserRow> {
  const row = await findUserById(db, userId);
  if (!row || !inScope(caller, row.org_id) || !mayManageRole(caller, row.role)) throw new ToolFailure('not_found', `No user ${userId} whose tokens you may manage`);
  return row;
}

/**
 * Usernames are one namespace across every org (they are the Basic-auth logins of the object
 * APIs), so a taken name cannot be offered; the answer is the same whoever holds it, and names
 * neither the holder nor its org.
 */
const usernameUnavailable = (username: string) => new ToolFailure('conflict', `The username ${username} is not available; choose another`);

/** A stored token as the spec's PersonalToken: never its hash. */
function toPersonalToken(t: PersonalTokenRow, now = new Date().toISOString()) {
  const state = t.revoked_at ? 'revoked' : t.expires_at && t.expires_at <= now ? 'expired' : 'live';
  return { id: t.id, userId: t.user_id, name: t.name, createdAt: t.created_at, expiresAt: t.expires_at, lastUsedAt: t.last_used_at, revokedAt: t.revoked_at, state } as const;
}

type UserTool = 'dashboard_create_user' | 'dashboard_get_user' | 'dashboard_list_users' | 'dashboard_update_user' | 'dashboard_list_user_tokens' | 'dashboard_revoke_user_token';

export function userTools(s: Pick<McpDeps, 'db' | 'objects'>): Pick<ToolHandlers, UserTool> {
  return {
    async dashboard_create_user({ username, password, role, targetOrgId }, { caller }) {
      const orgId = targetOrg(caller, targetOrgId);
      assertMayManage(caller, role, 'create');
      if (!(await findOrgById(s.db, orgId))) throw new ToolFailure('not_found', `No organization ${orgId}`);
      try {
        return await insertUser(s.db, { orgId, username, passwordHash: await hashPassword(password), role });
      } catch (err) {
        if (isUniqueViolation(err)) throw usernameUnavailable(username);
        throw err;
      }
    },

    async dashboard_get_user({ userId }, { caller }) {
      return toUser(await userInScope(caller, userId, s.db));
    },

    async dashboard_list_users({ targetOrgId, role, active, limit, cursor }, { caller }) {
      const q = s.db('users').where({ org_id: targetOrg(caller, targetOrgId) });
      if (role) q.where({ role });
      if (active !== undefined) q.where({ active });
      const { rows, nextCursor } = await page<UserRow>(q, { column: 'id', order: 'asc', limit: limit!, cursor });
      return { users: rows.map(toUser), nextCursor };
    },

    async dashboard_update_user({ userId, role, active, password }, { caller }) {
      const row = await userInScope(caller, userId, s.db);
      assertMayManage(caller, row.role, 'change');
      if (role) assertMayManage(caller, role, 'give the role to');
      const changes: UserChanges = { role, active };
      if (password) changes.passwordHash = await hashPassword(password);
      // A new password, deactivation or reactivation ends the user's bearer tokens, sessions,
      // remembered Basic credentials and transfer tokens on every instance (deactivation also its
      // personal tokens); a role change ends its sessions, and bearer tokens read the new role.
      await changeUser(s.db, userId, changes);
      s.objects.basic.forget(userId);
      return toUser((await findUserById(s.db, userId))!);
    },

    async dashboard_list_user_tokens({ userId }, { caller }) {
      await tokenOwner(caller, userId, s.db);
      return { tokens: (await listPersonalTokens(s.db, userId)).map((t) => toPersonalToken(t)) };
    },

    async dashboard_revoke_user_token({ userId, token }, { caller }) {
      await tokenOwner(caller, userId, s.db);
      const revoked = await revokePersonalTokens(s.db, userId, token).catch((err: unknown) => {
        if (err instanceof AmbiguousTokenName) throw new ToolFailure('conflict', err.message);
        throw err;
      });
      if (!revoked) throw new ToolFailure('not_found', `User ${userId} has no live token ${token}`);
      s.objects.basic.forget(userId);
      return { revoked, tokens: (await listPersonalTokens(s.db, userId)).map((t) => toPersonalToken(t)) };
    },
  };
}
