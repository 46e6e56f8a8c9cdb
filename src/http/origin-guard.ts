/**
 * DNS-rebinding and cross-site protection for the operations that accept browser credentials
 * (POST /api/v1/mcp and /api/v1/auth/*): the Host header must be one we serve under, and an
 * Origin, when a browser sends one, must be allowed (ALLOWED_ORIGINS), or, for the MCP endpoint
 * called without cookies, admitted by CORS_ORIGINS (cors.ts). The MCP specification requires 403
 * for a bad Origin; the operations declare it.
 */
import type { Middleware } from 'koa';
import { operations } from '../../generated/operations.js';
import type { Config } from '../ground/config.js';
import { HttpError } from './errors.js';
import { CORS_PATHS, corsAdmits } from './cors.js';

const guarded = new Map(
  operations.filter((o) => /^\/api\/v1\/(mcp$|auth\/)/.test(o.path) && '403' in o.responses).map((o) => [`${o.method} ${o.path}`, o]),
);

export function originGuard(config: Config): Middleware {
  const hosts = new Set(config.allowedHosts.map((h) => h.toLowerCase()));
  const origins = new Set(config.allowedOrigins.map((o) => o.replace(/\/$/, '').toLowerCase()));
  return async function guardOrigin(ctx, next) {
    const op = guarded.get(`${ctx.method} ${ctx.path}`);
    if (op) {
      ctx.state.api = 'dashboard';
      ctx.state.operation = op;
      const host = ctx.get('host').toLowerCase();
      if (!hosts.has(host)) throw new HttpError(403, `Host ${host || '(none)'} is not allowed`);
      const origin = ctx.get('origin');
      // Another site's page may call the MCP endpoint as a browser-based MCP client, with a bearer
      // token or none (to be told where to get one), never with the browser's cookies.
      const crossOrigin = CORS_PATHS.has(ctx.path) && corsAdmits(config.corsOrigins, origin) && !ctx.get('cookie');
      if (origin && !origins.has(origin.toLowerCase()) && !crossOrigin) throw new HttpError(403, `Origin ${origin} is not allowed`);
    }
    await next();
  };
}
