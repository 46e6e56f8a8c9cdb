/**
 * The Koa app of a server: the middleware in the order a request meets it, and the router with
 * every operationId bound to its handler (handlers.ts) and every security scheme to its check.
 */
import type { Middleware } from 'koa';
import type Koa from 'koa';
import { createKoa, errorBoundary, requestContext } from '../http/app.js';
import { createRouter } from '../http/router.js';
import { originGuard } from '../http/origin-guard.js';
import { clientAddressMiddleware } from '../http/client-address.js';
import { securityHeaders } from '../http/security-headers.js';
import { noteKnownConnections } from '../http/slow-clients.js';
import { bearerAuth, dashboardChallenge, sessionCookie } from '../auth/security.js';
import { oauthBearer } from '../auth/oauth-bearer.js';
import { withExternalIssuer } from '../auth/external-issuer.js';
import { cors } from '../http/cors.js';
import { LFS_CHALLENGE, transferToken } from '../objects/access.js';
import { RATE_LIMITED, rateKey } from '../objects/rate-key.js';
import { storageFailures } from '../objects/storage-failure.js';
import { swaggerUiStyleHashes } from '../ops/docs.js';
import { bindHandlers } from './handlers.js';
import type { Services } from './services.js';

/** `before`: middleware placed before the router (tests use it to check every response against the specs). */
export function createApp(services: Services, opts: { before: Middleware[] }): Koa {
  const { config, log } = services;
  return createKoa([
    clientAddressMiddleware(config.trustedProxies, config.trustedProxyHeader),
    requestContext(log, services.metrics),
    securityHeaders(config.publicUrl, swaggerUiStyleHashes),
    // Outside the error boundary, which starts an error's headers afresh.
    cors(config.corsOrigins),
    errorBoundary(config.errorDocsUrl, services.metrics, [storageFailures(services.metrics)]),
    ...opts.before,
    noteKnownConnections,
    originGuard(config),
    createRouter({
      handlers: bindHandlers(services),
      security: {
        // The authorization server's opaque access tokens, else the external issuer's JWT (OAUTH_ISSUER), else pactum's own JWT (pactum token, personal tokens).
        bearerAuth: oauthBearer(config, services.users, services.oauth, withExternalIssuer(config, services.db, bearerAuth(config, services.users, services.tokens))),
        sessionCookie: sessionCookie(config, services.db),
        basicAuth: services.objects.basic,
        transferToken: transferToken(services.objects.tokens),
      },
      challenge: (api) => (api === 'dashboard' ? dashboardChallenge(config) : LFS_CHALLENGE),
      maxJsonBytes: config.maxJsonBytes,
      maxAnonymousJsonBytes: config.maxAnonymousJsonBytes,
      allowedOrigins: config.allowedOrigins,
      bodyLimits: { 'batch.batch': { bytes: config.lfs.maxBatchBytes, setting: 'LFS_MAX_BATCH_BYTES' } },
      // Before authorization (and, for anonymous callers, before any lookup), not in the handlers.
      rateLimit: (ctx, op, identity) => (RATE_LIMITED.has(op.operationId) ? services.objects.limits.rate(rateKey(identity, ctx)) : undefined),
    }),
  ]);
}
