/**
 * DNS-rebinding and cross-site protection for the operations that accept browser credentials
 * (POST /api/v1/mcp and /api/v1/auth/*): the Host header must be one we serve under, and an
 * Origin, when a browser sends one, must be allowed. The MCP specification requires 403 for a bad
 * Origin; the operations declare it.
 */
import type { Middleware } from 'koa';
import { operations } from '../../generated/operations.js';
import type { Config } from '../ground/config.js';
import { HttpError } from './errors.js';

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
      if (origin && !origins.has(origin.toLowerCase())) throw new HttpError(403, `Origin ${origin} is not allowed`);
    }
    await next();
  };
}
