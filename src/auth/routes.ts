/**
 * auth.login, auth.logout and the RFC 9728 protected-resource metadata. Failed sign-ins go through
 * the same throttle as HTTP Basic on the object APIs (auth/throttle.ts): 429 with Retry-After.
 */
import { HttpError } from '../http/errors.js';
import type { Handler } from '../http/router.js';
import type { AuthDeps } from './services.js';
import { findUserByName } from '../db/users.js';
import { checkPassword, hashPassword, needsRehash } from './passwords.js';
import { PERMISSIONS, ROLE_PERMISSIONS } from '../domain/access/permissions.js';
import { sessionCookieValues, sessionSetCookies } from './session-cookie.js';
import { createSession, revokeSession } from './sessions.js';

export function login(services: Pick<AuthDeps, 'config' | 'db' | 'passwords'>): Handler<'auth.login'> {
  return async ({ ctx, body }) => {
    const { username, password } = body;
    const user = await findUserByName(services.db, username);
    // The same work, and the same answer, whether the user exists or not; throttled before scrypt.
    const ok = await services.passwords.guard(username, ctx.ip, () => checkPassword(password, user?.password_hash, ctx.ip));
    if (!user || !ok || !user.active) throw new HttpError(401, 'Invalid username or password');
    if (needsRehash(user.password_hash)) await services.db('users').where({ id: user.id }).update({ password_hash: await hashPassword(password, ctx.ip) });
    const session = await createSession(services.db, user.id, services.config.sessionTtlSeconds);
    await services.db('users').where({ id: user.id }).update({ last_login_at: new Date().toISOString() });
    ctx.set('Set-Cookie', sessionSetCookies(services.config.publicUrl, session.token, services.config.sessionTtlSeconds));
    ctx.set('Cache-Control', 'no-store');
    return {
      status: 200,
      body: {
        userId: user.id,
        orgId: user.org_id,
        username: user.username,
        role: user.role,
        permissions: [...ROLE_PERMISSIONS[user.role]],
        expiresAt: session.expiresAt,
      },
    };
  };
}

/** A browser sends one session cookie, two where one was planted: more are not looked up. */
const MAX_LOGOUT_COOKIES = 4;

/** Every session a session cookie of the request names is revoked: with several (ambiguous elsewhere), none is picked, all end. */
export function logout(services: Pick<AuthDeps, 'config' | 'db'>): Handler<'auth.logout'> {
  return async ({ ctx }) => {
    const tokens = new Set(sessionCookieValues(ctx.get('cookie')).map((c) => c.value).filter(Boolean));
    for (const token of [...tokens].slice(0, MAX_LOGOUT_COOKIES)) await revokeSession(services.db, token);
    ctx.set('Set-Cookie', sessionSetCookies(services.config.publicUrl, '', 0));
    return { status: 204 };
  };
}

export function protectedResource(services: Pick<AuthDeps, 'config'>): Handler<'auth.protectedResource' | 'auth.protectedResourceForMcp'> {
  const body = {
    resource: `${services.config.publicUrl}/api/v1/mcp`,
    // Our own authorization server, or the external one that issues the tokens (OAUTH_ISSUER).
    authorization_servers: [services.config.oauth.issuer ?? services.config.publicUrl.replace(/\/$/, '')],
    bearer_methods_supported: ['header'],
    scopes_supported: [...PERMISSIONS],
    resource_name: 'pactum dashboard MCP endpoint',
  };
  return () => ({ status: 200, body });
}
