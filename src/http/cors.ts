/**
 * CORS for browser-based MCP clients (the MCP Inspector's web UI, a chat in a web page): the
 * endpoints an MCP client reaches in OAuth discovery, registration, token exchange and MCP calls
 * answer cross-origin reads, and their preflights (OPTIONS), for the origins CORS_ORIGINS admits
 * (any by default). None of them takes an ambient credential across origins: no answer ever
 * carries `Access-Control-Allow-Credentials`, so a browser never sends cookies with such a
 * request nor lets a page read an answer to one that had them, and the MCP endpoint refuses a
 * cross-origin request that carries a cookie (origin-guard.ts). The pages and the
 * cookie-authenticated API (/api/v1/auth/*, reports, the web UI) get no CORS at all.
 *
 * The specs state this as a global rule (dashboard-mcp.openapi.yaml, "Browser clients (CORS)"),
 * not as OPTIONS operations: a preflight is answered here, outside the router and before the
 * error boundary, so it meets no operation, credential or response check.
 */
import type { Middleware } from 'koa';

interface CorsPath {
  methods: string;
  /**
   * Whether oidc-provider answers this path's own requests with its CORS headers (discovery and
   * JWKS open, token and revocation only for the origins of the client's redirect URIs, which
   * clientBasedCORS in auth/oauth-server.ts narrows to CORS_ORIGINS too). pactum adds them only
   * to what it answers itself there (a refusal before the provider, 404 with OAUTH_ISSUER).
   */
  provider?: boolean;
}

export const CORS_PATHS: ReadonlyMap<string, CorsPath> = new Map([
  ['/api/v1/mcp', { methods: 'POST' }],
  ['/.well-known/oauth-protected-resource', { methods: 'GET' }],
  ['/.well-known/oauth-protected-resource/api/v1/mcp', { methods: 'GET' }],
  ['/.well-known/oauth-authorization-server', { methods: 'GET', provider: true }],
  ['/.well-known/openid-configuration', { methods: 'GET', provider: true }],
  ['/oauth/jwks', { methods: 'GET', provider: true }],
  ['/oauth/token', { methods: 'POST', provider: true }],
  ['/oauth/revoke', { methods: 'POST', provider: true }],
  ['/oauth/register', { methods: 'POST' }],
]);

/** Request headers a cross-origin page may send: the bearer token, the body's type, and MCP's own. */
const ALLOWED_HEADERS = new Set(['authorization', 'content-type', 'accept', 'last-event-id']);
const EXPOSED = 'WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version, Retry-After';

/** Whether CORS_ORIGINS admits an origin: `*`, or the origin listed. */
export function corsAdmits(corsOrigins: readonly string[], origin: string): boolean {
  return admitsOf(corsOrigins)(origin);
}

/** Each setting's admission test, made once: the settings' list lives as long as the server. */
const admitters = new WeakMap<readonly string[], (origin: string) => boolean>();

/** The admission test of CORS_ORIGINS, its origins normalised once (not at each request). */
function admitsOf(corsOrigins: readonly string[]): (origin: string) => boolean {
  let admits = admitters.get(corsOrigins);
  if (!admits) {
    const listed = new Set(corsOrigins.map((o) => o.replace(/\/$/, '').toLowerCase()));
    admits = listed.has('*') ? (origin) => Boolean(origin) : (origin) => Boolean(origin) && listed.has(origin.toLowerCase());
    admitters.set(corsOrigins, admits);
  }
  return admits;
}

export function cors(corsOrigins: readonly string[]): Middleware {
  const any = corsOrigins.includes('*');
  const admits = admitsOf(corsOrigins);
  return async function corsHeaders(ctx, next) {
    const entry = CORS_PATHS.get(ctx.path);
    if (!entry) {
      await next();
      return;
    }
    const origin = ctx.get('origin');
    ctx.vary('Origin');
    const admitted = admits(origin);
    const allowOrigin = any ? '*' : origin;
    if (ctx.method === 'OPTIONS' && ctx.get('access-control-request-method')) {
      // A preflight: answered here, before any credential or body is looked at.
      ctx.status = 204;
      if (!admitted) return;
      const asked = ctx.get('access-control-request-headers').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
      const allowed = asked.filter((h) => ALLOWED_HEADERS.has(h) || h.startsWith('mcp-'));
      ctx.set({
        'Access-Control-Allow-Origin': allowOrigin,
        'Access-Control-Allow-Methods': entry.methods,
        'Access-Control-Max-Age': '600',
        ...(allowed.length ? { 'Access-Control-Allow-Headers': allowed.join(', ') } : {}),
      });
      return;
    }
    const set = () => {
      if (!admitted || ctx.res.headersSent) return;
      ctx.set({ 'Access-Control-Allow-Origin': allowOrigin, 'Access-Control-Expose-Headers': EXPOSED });
      ctx.vary('Origin');
    };
    // Before: for what the provider writes without CORS of its own (registration); after: for
    // every answer pactum writes itself, errors included (the error boundary starts afresh).
    if (!entry.provider) set();
    await next();
    set();
  };
}
