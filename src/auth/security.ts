/**
 * The dashboard's security schemes, bound by name to the spec's securitySchemes: bearerAuth
 * (a JWT) and sessionCookie (`__Host-session` over HTTPS, `session` over HTTP; see
 * session-cookie.ts). A credential that is present but wrong, or ambiguous, is a 401, never a
 * silent fall-through to anonymous.
 */
import type { Context } from 'koa';
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import { findUserById, type UserRow } from '../db/users.js';
import type { UserState } from './user-state.js';
import { HttpError, RevokedCredential, StaleSessionCookie } from '../http/errors.js';
import type { SecurityHandler } from '../http/router.js';
import type { Identity } from '../domain/access/identity.js';
import type { TokenService } from './jwt.js';
import { ROLE_PERMISSIONS, grants, type Permission } from '../domain/access/permissions.js';
import { readSessionCookie, sessionCookieName, sessionSetCookies } from './session-cookie.js';
import { resolveSession } from './sessions.js';

export function dashboardChallenge(config: Config, error?: string): Record<string, string> {
  const meta = `${config.publicUrl}/.well-known/oauth-protected-resource`;
  return { 'WWW-Authenticate': `Bearer resource_metadata="${meta}"${error ? `, error="${error}"` : ''}` };
}

export const identityOfUser = (user: Pick<UserRow, 'id' | 'username' | 'org_id' | 'role' | 'credential_version'>, scheme: Identity['scheme'], sessionId?: string): Identity => ({
  scheme,
  subject: user.id,
  username: user.username,
  orgId: user.org_id,
  role: user.role,
  permissions: new Set(ROLE_PERMISSIONS[user.role]),
  sessionId,
  credentialVersion: Number(user.credential_version),
});

/**
 * Whether a user's token still stands against the user's credential version now (moved by a new
 * password, deactivation, reactivation or a revoked personal token). A token that names its
 * version must name the current one. A token that names none was minted before tokens carried it
 * (or by an identity provider, which cannot know it): ours stand only while the user's version
 * is still the initial 0, so any change since refuses them; an external issuer's stand as before,
 * the user's being active is what counts for them.
 */
export function credentialsStand(tokenVersion: number | null, userVersion: number, ownKey: boolean): boolean {
  if (tokenVersion !== null) return tokenVersion === userVersion;
  return !ownKey || userVersion === 0;
}

export function bearerAuth(config: Config, users: UserState, tokens: TokenService): SecurityHandler {
  // Tokens signed with our own key (HS256), as opposed to an identity provider's (JWT_JWKS_URL).
  const ownKey = !config.jwt.jwksUrl;
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
    const refuse = (why: string) => new HttpError(401, why, dashboardChallenge(config, 'invalid_token'));
    const revoked = (why: string) => new RevokedCredential(401, why, dashboardChallenge(config, 'invalid_token'));
    // A user's token carries what the user holds now, not what it held when the token was minted.
    if (claims.sub.startsWith('usr_')) {
      const user = await users.get(claims.sub);
      if (!user) throw refuse('The user of this token does not exist');
      if (!user.active) throw revoked('The user of this token is deactivated');
      if (user.org_id !== claims.orgId) throw refuse('This token names an organization its user does not belong to');
      if (!credentialsStand(claims.credentialVersion, Number(user.credential_version), ownKey)) throw revoked("The credentials of this token's user were changed; get a new token");
      return { ...identityOfUser(user, 'bearerAuth'), permissions: narrowed(ROLE_PERMISSIONS[user.role], claims.permissions), heldByRole: new Set(ROLE_PERMISSIONS[user.role]) };
    }
    // Service principals and external issuers keep their claims, within an org that exists.
    if (!(await users.orgExists(claims.orgId))) throw refuse(`The organization ${claims.orgId} of this token does not exist`);
    return {
      scheme: 'bearerAuth',
      subject: claims.sub,
      username: null,
      orgId: claims.orgId,
      role: claims.role,
      permissions: claims.permissions,
    } satisfies Identity;
  };
}

/**
 * The permissions both the user's current role and the token allow: each side's permissions
 * that the other side implies (admin.org implies the org-level ones), so a token scoped to
 * reports.view stays at reports.view and an org admin's token for a demoted user falls to member.
 */
export function narrowed(current: readonly Permission[], token: ReadonlySet<Permission>): Set<Permission> {
  const held = new Set(current);
  const out = new Set<Permission>();
  for (const p of held) if (grants(token, p)) out.add(p);
  for (const p of token) if (grants(held, p)) out.add(p);
  return out;
}

/**
 * The session cookie. One that names no live session is a StaleSessionCookie: the router refuses
 * it where credentials are required and, on a page or where anonymous callers are served, ignores
 * it and sends the cookie's end.
 */
export function sessionCookie(config: Config, db: Db): SecurityHandler {
  const name = sessionCookieName(config.publicUrl);
  const clear = sessionSetCookies(config.publicUrl, '', 0);
  const stale = (message: string, revoked = false) => new StaleSessionCookie(message, dashboardChallenge(config, 'invalid_token'), clear, revoked);
  return async (ctx: Context) => {
    const cookie = readSessionCookie(ctx.get('cookie'), name);
    if (cookie.kind === 'none') return null;
    if (cookie.kind === 'ambiguous') {
      throw stale(`More than one session cookie was sent (${name} is this server's); none is used. Sign out, or clear this site's cookies, and sign in again`);
    }
    const session = await resolveSession(db, cookie.token);
    const user = session && (await findUserById(db, session.userId));
    const ended = 'The session has ended; sign in again';
    if (!session || !user) throw stale(ended);
    // Signed out, its user deactivated or given new credentials: a revocation (counted apart).
    if (session.revoked || !user.active || Number(user.credential_version) !== session.credentialVersion) throw stale(ended, true);
    return identityOfUser(user, 'sessionCookie', session.id);
  };
}
