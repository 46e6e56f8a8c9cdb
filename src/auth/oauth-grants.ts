/**
 * The OAuth grants a user gave to MCP clients, read from and revoked in the authorization
 * server's store without loading it (the CLI, the MCP tools): a revocation deletes the grant and
 * every code and token issued under it, so it counts at the next request on every instance.
 */
import type { Db } from '../db/knex.js';
import { parseAccountId } from './oauth-accounts.js';

export interface OAuthGrantView {
  grantId: string;
  userId: string;
  clientId: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
}

interface GrantPayload {
  accountId?: string;
  clientId?: string;
  iat?: number;
  openid?: { scope?: string };
  resources?: Record<string, string>;
}

/** The live grants of these users (by user id), newest first. */
export async function listOAuthGrants(db: Db, userIds: readonly string[]): Promise<OAuthGrantView[]> {
  if (!userIds.length) return [];
  const wanted = new Set(userIds);
  const now = new Date().toISOString();
  const rows: { id: string; payload: string; expires_at: string | null }[] = await db('oauth_models')
    .where({ model: 'Grant' })
    .where((q) => {
      for (const id of userIds) void q.orWhere('account_id', 'like', `${id}:%`);
    })
    .where((q) => {
      void q.whereNull('expires_at').orWhere('expires_at', '>', now);
    })
    .select('id', 'payload', 'expires_at');
  const out: OAuthGrantView[] = [];
  for (const r of rows) {
    const p = JSON.parse(r.payload) as GrantPayload;
    const account = p.accountId ? parseAccountId(p.accountId) : null;
    if (!account || !wanted.has(account.userId)) continue;
    const scopes = new Set([...(p.openid?.scope ?? '').split(' '), ...Object.values(p.resources ?? {}).flatMap((s) => s.split(' '))].filter(Boolean));
    out.push({ grantId: r.id, userId: account.userId, clientId: p.clientId ?? '', scopes: [...scopes].sort(), createdAt: new Date((p.iat ?? 0) * 1000).toISOString(), expiresAt: r.expires_at });
  }
  return out.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** Revokes a grant and all it issued; false when there was no such grant. */
export async function revokeOAuthGrant(db: Db, grantId: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const found = await trx('oauth_models').where({ model: 'Grant', id: grantId }).delete();
    await trx('oauth_models').where({ grant_id: grantId }).delete();
    return found > 0;
  });
}
