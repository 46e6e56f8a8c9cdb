/**
 * The MCP endpoint's check of the access tokens pactum's authorization server issues. They are
 * opaque (no dots, unlike a JWT, which goes to the JWT check): looked up in the shared store, so
 * an expired, revoked or never-issued one is refused at once, on every instance. A token stands
 * only for the MCP endpoint (its audience), only while its user is active with the credentials
 * it had at the grant, and never for more than the user's role holds at this request.
 */
import type { Context } from 'koa';
import type { Config } from '../ground/config.js';
import { HttpError, RevokedCredential } from '../http/errors.js';
import type { SecurityHandler } from '../http/router.js';
import { ROLE_PERMISSIONS, isPermission, type Permission } from '../domain/access/permissions.js';
import { dashboardChallenge, identityOfUser, narrowed } from './security.js';
import type { UserState } from './user-state.js';
import { parseAccountId } from './oauth-accounts.js';
import type { OAuthServerRef } from './oauth-routes.js';

const OPAQUE = /^Bearer +([A-Za-z0-9_-]{20,200}) *$/i;

export function oauthBearer(config: Config, users: UserState, oauth: OAuthServerRef, jwt: SecurityHandler): SecurityHandler {
  const refuse = (why: string) => new HttpError(401, why, dashboardChallenge(config, 'invalid_token'));
  const revoked = (why: string) => new RevokedCredential(401, why, dashboardChallenge(config, 'invalid_token'));
  return async (ctx: Context, op) => {
    const m = OPAQUE.exec(ctx.get('authorization'));
    const server = m ? await oauth() : null;
    if (!m || !server) return jwt(ctx, op);
    const token = await server.provider.AccessToken.find(m[1]!);
    if (!token) throw refuse('The access token is not valid: unknown, expired or revoked');
    const audience = (token as unknown as { aud?: string | string[] }).aud;
    if (!(Array.isArray(audience) ? audience : [audience]).includes(server.resource)) throw refuse(`The access token was issued for another resource, not ${server.resource}`);
    const account = parseAccountId(token.accountId);
    const user = account && (await users.get(account.userId));
    if (!account || !user) throw refuse('The user of this access token does not exist');
    if (!user.active) throw revoked('The user of this access token is deactivated');
    if (Number(user.credential_version) !== account.credentialVersion) throw revoked("The credentials of this access token's user were changed; sign in again");
    const scopes = new Set<Permission>(String(token.scope ?? '').split(' ').filter(isPermission));
    return { ...identityOfUser(user, 'bearerAuth'), permissions: narrowed(ROLE_PERMISSIONS[user.role], scopes), heldByRole: new Set(ROLE_PERMISSIONS[user.role]) };
  };
}
