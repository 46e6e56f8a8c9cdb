/**
 * `pactum oauth grants` lists what users allowed MCP clients to do (a user's, or an org's), and
 * `pactum oauth revoke <grant>` ends one: the grant, its refresh tokens and its access tokens,
 * at their next request on every instance sharing this database.
 */
import { parseArgs } from 'node:util';
import { findUserByName } from '../db/users.js';
import { listOAuthGrants, revokeOAuthGrant } from '../auth/oauth-grants.js';
import { UsageError, orgOf, withDb } from './args.js';

export async function oauth(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'grants') {
    const { values } = parseArgs({ args: rest, options: { user: { type: 'string' }, org: { type: 'string' } } });
    if (!values.user === !values.org) throw new UsageError('usage: pactum oauth grants (--user <username> | --org <slug|id>)');
    return withDb(async (db) => {
      let ids: string[];
      if (values.user) {
        const u = await findUserByName(db, values.user);
        if (!u) throw new UsageError(`no user ${values.user}`);
        ids = [u.id];
      } else {
        const o = await orgOf(db, values.org!);
        ids = (await db('users').where({ org_id: o.id }).select('id')).map((r: { id: string }) => r.id);
      }
      const names = new Map((await db('users').whereIn('id', ids).select('id', 'username')).map((r: { id: string; username: string }) => [r.id, r.username]));
      const grants = await listOAuthGrants(db, ids);
      if (!grants.length) console.log('no grants');
      for (const g of grants) console.log([g.grantId, names.get(g.userId) ?? g.userId, g.clientId, g.scopes.join(' ') || '-', g.createdAt, g.expiresAt ?? '-'].join('\t'));
      return 0;
    });
  }
  if (sub === 'revoke') {
    // Taken as written: a grant id may begin with '-' (oidc-provider's ids are base64url), which
    // an option parser would read as an option. `--` before it is accepted as well.
    const positionals = rest[0] === '--' ? rest.slice(1) : rest;
    if (positionals.length !== 1) throw new UsageError('usage: pactum oauth revoke <grant id> (list them with: pactum oauth grants --user <username>)');
    return withDb(async (db) => {
      if (!(await revokeOAuthGrant(db, positionals[0]!))) throw new UsageError(`no grant ${positionals[0]} (list them with: pactum oauth grants --user <username>)`);
      console.log(`revoked grant ${positionals[0]}; its tokens stop working at their next request`);
      return 0;
    });
  }
  throw new UsageError('usage: pactum oauth grants (--user <username> | --org <slug|id>) | pactum oauth revoke <grant id>');
}
