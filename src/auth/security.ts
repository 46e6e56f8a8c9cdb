/**
 * The dashboard's security schemes, bound by name to the spec's securitySchemes: bearerAuth
 * (a JWT) and sessionCookie. A credential that is present but wrong is a 401, never a silent
 * fall-through to anonymous.
 */
import type { Context } from 'koa';
import type { Config } from '../config.js';
import type { Db } from '../db/knex.js';
import { findUserById, type UserRow } from '../db/users.js';
import type { UserState } from './user-state.js';
import { HttpError } from '../http/errors.js';
import type { SecurityHandler } from '../http/router.js';
import type { Identity } from './identity.js';
import type { TokenService } from './jwt.js';
import { ROLE_PERMISSIONS } from './permissions.js';
import { resolveSession } from './sessions.js';

export function dashboardChallenge(config: Config, error?: string): Record<string, string> {
  const meta = `${config.publicUrl}/.well-known/oauth-protected-resource`;
  return { 'WWW-Authenticate': `Bearer resource_metadata="${meta}"${error ? `, error="${error}"` : ''}` };
}

export const identityOfUser = (user: UserRow, scheme: Identity['scheme'], sessionId?: string): Identity => ({
  scheme,
  subject: user.id,
  username: user.username,
  orgId: user.org_id,
  role: user.role,
  permissions: new Set(ROLE_PERMISSIONS[user.role]),
  sessionId,
});

export function bearerAuth(config: Config, users: UserState, tokens: TokenService): SecurityHandler {
  return async (ctx: Context) => {
    const header = ctx.get('authorization');
    const m = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
    if (!m) return null;
    let claims;
    try {
      claims = await tokens.verify(m[1]!);
    } catch (err) {
      throw new HttpError(401, `The bearer token is not valid: ${(err as Error).message}`, dashboardChallenge(config, 'invalid_token'));
    }
    // A token may name a user; a deactivated user's tokens stop working at once.
    const user = claims.sub.startsWith('usr_') ? await users.get(claims.sub) : undefined;
    if (user && !user.active) throw new HttpError(401, 'The user of this token is deactivated', dashboardChallenge(config, 'invalid_token'));
    return {
      scheme: 'bearerAuth',
      subject: claims.sub,
      username: user?.username ?? null,
      orgId: claims.orgId,
      role: claims.role,
      permissions: claims.permissions,
    } satisfies Identity;
  };
}

export function sessionCookie(config: Config, db: Db): SecurityHandler {
  return async (ctx: Context) => {
    const token = ctx.cookies.get('session');
    if (!token) return null;
    const session = await resolveSession(db, token);
    const user = session && (await findUserById(db, session.userId));
    if (!session || !user || !user.active) {
      throw new HttpError(401, 'The session has ended; sign in again', dashboardChallenge(config, 'invalid_token'));
    }
    return identityOfUser(user, 'sessionCookie', session.id);
  };
}
