/**
 * auth.login, auth.logout and the RFC 9728 protected-resource metadata. Failed logins are counted
 * per username; past the limit the answer is 429 with Retry-After, so passwords cannot be
 * guessed at speed.
 */
import { HttpError } from '../http/errors.js';
import type { Handler } from '../http/router.js';
import type { Services } from '../server.js';
import { findUserByName } from '../db/users.js';
import { DUMMY_HASH, verifyPassword } from './passwords.js';
import { PERMISSIONS, ROLE_PERMISSIONS } from './permissions.js';
import { createSession, revokeSession } from './sessions.js';

const FAILURE_LIMIT = 10;
const FAILURE_WINDOW_MS = 15 * 60_000;

function cookie(services: Services, value: string, maxAge: number): string {
  const secure = services.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `session=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`;
}

export function login(services: Services): Handler {
  const failures = new Map<string, { count: number; since: number }>();
  return async ({ ctx, body }) => {
    const { username, password } = body as { username: string; password: string };
    const key = username.toLowerCase();
    const now = Date.now();
    const f = failures.get(key);
    if (f && now - f.since > FAILURE_WINDOW_MS) failures.delete(key);
    else if (f && f.count >= FAILURE_LIMIT) {
      const retry = Math.ceil((f.since + FAILURE_WINDOW_MS - now) / 1000);
      throw new HttpError(429, `Too many failed sign-ins for this user; retry in ${retry} s`, { 'Retry-After': String(retry) });
    }
    const user = await findUserByName(services.db, username);
    // The same work, and the same answer, whether the user exists or not.
    const ok = await verifyPassword(password, user?.password_hash ?? DUMMY_HASH);
    if (!user || !ok || !user.active) {
      const entry = failures.get(key) ?? { count: 0, since: now };
      entry.count++;
      failures.set(key, entry);
      throw new HttpError(401, 'Invalid username or password');
    }
    failures.delete(key);
    const session = await createSession(services.db, user.id, services.config.sessionTtlSeconds);
    await services.db('users').where({ id: user.id }).update({ last_login_at: new Date().toISOString() });
    ctx.set('Set-Cookie', cookie(services, session.token, services.config.sessionTtlSeconds));
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

export function logout(services: Services): Handler {
  return async ({ ctx }) => {
    const token = ctx.cookies.get('session');
    if (token) await revokeSession(services.db, token);
    ctx.set('Set-Cookie', cookie(services, '', 0));
    return { status: 204 };
  };
}

export function protectedResource(services: Services): Handler {
  const body = {
    resource: `${services.config.publicUrl}/api/v1/mcp`,
    bearer_methods_supported: ['header'],
    scopes_supported: [...PERMISSIONS],
    resource_name: 'pactum dashboard MCP endpoint',
  };
  return () => ({ status: 200, body });
}
