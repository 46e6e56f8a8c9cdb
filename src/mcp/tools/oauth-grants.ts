/**
 * The OAuth grants users gave MCP clients: a user sees and ends its own; a caller with
 * admin.users those of the users of its org. Another user's grants are not_found.
 */
import type { Identity } from '../../domain/access/identity.js';
import { grants as holds } from '../../domain/access/permissions.js';
import { findUserById } from '../../db/users.js';
import { listOAuthGrants, revokeOAuthGrant } from '../../auth/oauth-grants.js';
import { ToolFailure, inScope, type ToolHandlers } from '../tool-context.js';
import type { McpDeps } from '../services.js';

/** The user whose grants the caller asks for: itself, or one it may administer. */
async function grantOwner(caller: Identity, userId: string | undefined, db: McpDeps['db']): Promise<string> {
  if (!userId || userId === caller.subject) {
    if (!caller.subject.startsWith('usr_')) throw new ToolFailure('not_found', 'This caller is not a user: it has no OAuth grants');
    return caller.subject;
  }
  const row = await findUserById(db, userId);
  if (!row || !inScope(caller, row.org_id) || !holds(caller.permissions, 'admin.users')) throw new ToolFailure('not_found', `No user ${userId} whose grants you may see`);
  return row.id;
}

export function oauthGrantTools(s: Pick<McpDeps, 'db'>): Pick<ToolHandlers, 'dashboard_list_oauth_grants' | 'dashboard_revoke_oauth_grant'> {
  return {
    async dashboard_list_oauth_grants({ userId }, { caller }) {
      return { grants: await listOAuthGrants(s.db, [await grantOwner(caller, userId, s.db)]) };
    },

    async dashboard_revoke_oauth_grant({ grantId, userId }, { caller }) {
      const owner = await grantOwner(caller, userId, s.db);
      const held = await listOAuthGrants(s.db, [owner]);
      if (!held.some((g) => g.grantId === grantId) || !(await revokeOAuthGrant(s.db, grantId))) throw new ToolFailure('not_found', `No grant ${grantId} of this user`);
      return { revoked: grantId, grants: held.filter((g) => g.grantId !== grantId) };
    },
  };
}
