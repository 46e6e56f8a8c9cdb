/**
 * pactum's own OAuth 2.1 authorization server for MCP clients, built on oidc-provider: the
 * authorization code grant with PKCE (S256 only) and refresh tokens, nothing else (no implicit,
 * no password grant, no client credentials). Clients identify themselves with a Client ID
 * Metadata Document (an HTTPS client_id URL, fetched through the outbound address policy), or,
 * when OAUTH_DCR=true, by Dynamic Client Registration. Every access token is bound to one
 * resource, the MCP endpoint's canonical URI (RFC 8707), and is opaque: the resource server
 * looks it up, so a revoked grant ends its tokens at the next request.
 *
 * The account id of a grant is `<user id>:<credential version>`: a new password, a deactivation
 * or a revoked personal token moves the version, and every grant made before ends with it.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { generateKeyPairSync, hkdfSync } from 'node:crypto';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import type { SecretBox } from '../ground/secret-box.js';
import { loadOrCreateKey, parseKey } from '../ground/keys.js';
import { PERMISSIONS } from '../domain/access/permissions.js';
import { undici } from '../domain/scan/undici.js';
import { createGuardedLookup, BlockedAddressError } from '../domain/scan/guarded-agent.js';
import { refusedRange, type AddressPolicy } from '../domain/scan/address-policy.js';
import { htmlPageHeaders } from '../http/security-headers.js';
import { corsAdmits } from '../http/cors.js';
import { escapeHtml } from '../http/notice-page.js';
import { knexAdapter } from './oauth-adapter.js';
import { parseAccountId, scopesHeldBy } from './oauth-accounts.js';
import type { UserState } from './user-state.js';

/** The paths of the authorization server (the specs declare each). */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  jwks: '/oauth/jwks',
  revocation: '/oauth/revoke',
  registration: '/oauth/register',
  end_session: '/oauth/end-session',
} as const;

export const interactionPath = (uid: string) => `/oauth/interaction/${uid}`;

/** The scopes of the MCP endpoint: pactum's permissions. */
export const RESOURCE_SCOPES: readonly string[] = PERMISSIONS;

export interface OAuthServer {
  provider: Provider;
  /** The canonical URI of the MCP endpoint, the only audience tokens are issued for. */
  resource: string;
  issuer: string;
}

/** Cookie signing keys, shared by every instance that shares SECRETS_KEY (else the DATA_DIR key). */
function cookieKey(config: Config): string {
  const base = config.secretsKey ? parseKey(config.secretsKey, 'SECRETS_KEY') : loadOrCreateKey(config.dataDir, 'secrets-aes256', 32);
  return Buffer.from(hkdfSync('sha256', base, Buffer.alloc(0), 'pactum oauth cookies', 32)).toString('base64url');
}

/** The ID token signing key: the first instance to start makes it, every instance reads the same one. */
async function signingKey(db: Db, secrets: SecretBox): Promise<Record<string, unknown>> {
  const read = async (): Promise<{ sealed: string } | undefined> => db('oauth_keys').where({ id: 'id-token-es256' }).first('sealed');
  let row = await read();
  if (!row) {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: `es256-${Date.now().toString(36)}` };
    await db('oauth_keys')
      .insert({ id: 'id-token-es256', sealed: secrets.seal(JSON.stringify(jwk), 'oauth_keys:id-token-es256'), created_at: new Date().toISOString() })
      .onConflict('id')
      .ignore();
    row = await read();
  }
  return JSON.parse(secrets.open(row!.sealed, 'oauth_keys:id-token-es256')) as Record<string, unknown>;
}

/**
 * fetch for Client ID Metadata Documents: through the outbound address policy
 * (OUTBOUND_ALLOW_PRIVATE_NETWORKS, as service connections), the address connected to checked
 * (DNS rebinding), no redirect followed, within OAUTH_CLIENT_METADATA_TIMEOUT_MS.
 */
export function clientMetadataFetch(config: Config): (url: string | URL, init: RequestInit) => Promise<Response> {
  const policy: AddressPolicy = { allowPrivateNetworks: config.outboundAllowPrivateNetworks };
  const ca = config.oauth.clientMetadataCaFile ? readFileSync(config.oauth.clientMetadataCaFile, 'utf8') : undefined;
  let agent: import('undici').Agent | undefined;
  return async (url, init) => {
    const target = new URL(String(url));
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    const range = isIP(host) ? refusedRange(host, policy) : null;
    if (range) throw new BlockedAddressError(host, host, range);
    const { Agent, fetch } = undici();
    agent ??= new Agent({
      keepAliveTimeout: 4_000,
      connect: {
        ...(policy.allowPrivateNetworks ? {} : { lookup: createGuardedLookup(policy) }),
        ...(ca ? { ca: [...(await import('node:tls')).rootCertificates, ca] } : {}),
      },
    });
    const headers = Object.fromEntries(new Headers(init.headers));
    return (await fetch(target, {
      method: 'GET',
      headers,
      redirect: 'manual',
      dispatcher: agent,
      signal: AbortSignal.timeout(config.oauth.clientMetadataTimeoutMs),
    })) as unknown as Response;
  };
}

/** The error page of the authorization endpoint when it cannot send the client back (bad client or redirect URI). */
function renderError(config: Config) {
  const headers = htmlPageHeaders(config.publicUrl);
  return (ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }) => {
    ctx.set(headers);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sign-in refused</title>
<link rel="stylesheet" href="/docs/assets/home.css">
</head>
<body>
<main>
<h1>Sign-in refused</h1>
<p>The application that sent you here made a request pactum cannot accept, so you were not sent back to it.</p>
<p><strong>${escapeHtml(out.error)}</strong>${out.error_description ? `: ${escapeHtml(out.error_description)}` : ''}</p>
</main>
</body>
</html>
`;
  };
}

export async function createOAuthServer(deps: { config: Config; db: Db; secrets: SecretBox; users: UserState }): Promise<OAuthServer> {
  const { config, db, users } = deps;
  const issuer = config.publicUrl.replace(/\/$/, '');
  const resource = config.jwt.audience;
  const o = config.oauth;
  const configuration: Configuration = {
    adapter: knexAdapter(db, { clientIdleSeconds: o.refreshTtlSeconds }),
    clients: [],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    responseTypes: ['code'],
    // Public clients only: a registered client gets no secret, a metadata document may name none.
    clientAuthMethods: ['none'],
    pkce: { required: () => true },
    scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES],
    claims: { openid: ['sub'] },
    cookies: {
      keys: [cookieKey(config)],
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    jwks: { keys: [(await signingKey(db, deps.secrets))] },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    routes: OAUTH_ROUTES,
    interactions: { url: (_ctx, interaction) => interactionPath(interaction.uid) },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      revocation: { enabled: true },
      rpInitiatedLogout: { enabled: false },
      registration: {
        enabled: o.dcr,
        initialAccessToken: false,
        issueRegistrationAccessToken: false,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        // Once the user is known, only the scopes its role holds can be granted (and asked for).
        getResourceServerInfo: async (ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`this server issues tokens only for ${resource}`);
          const accountId = ctx.oidc.session?.accountId ?? ctx.oidc.entities.Grant?.accountId;
          const scope = accountId ? await scopesHeldBy(users, accountId) : RESOURCE_SCOPES;
          return { scope: scope.join(' '), audience: resource, accessTokenTTL: o.accessTtlSeconds, accessTokenFormat: 'opaque' };
        },
      },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        cacheDuration: { min: 30, max: 86_400 },
      },
    },
    fetch: clientMetadataFetch(config) as unknown as Configuration['fetch'],
    fetchResponseBodyLimits: { 'client_id metadata document': o.clientMetadataMaxBytes },
    ttl: {
      AccessToken: o.accessTtlSeconds,
      AuthorizationCode: 60,
      RefreshToken: o.refreshTtlSeconds,
      Grant: o.refreshTtlSeconds,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
    },
    rotateRefreshToken: true,
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // A token's user as it is now: deactivated, or with credentials changed since the grant, is no one.
    async findAccount(_ctx, id) {
      const parsed = parseAccountId(id);
      const user = parsed && (await users.get(parsed.userId));
      if (!parsed || !user || !user.active || Number(user.credential_version) !== parsed.credentialVersion) return undefined;
      return { accountId: id, claims: () => ({ sub: id }) };
    },
    // A browser-based client reads the token and revocation answers from its own origin (one of its
    // redirect URIs'), when CORS_ORIGINS admits that origin.
    clientBasedCORS: (_ctx, origin, client) => origin !== 'null' && corsAdmits(config.corsOrigins, origin) && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    renderError: renderError(config),
  };
  const provider = new Provider(issuer, configuration);
  provider.proxy = config.trustedProxies.length > 0;
  return { provider, resource, issuer };
}
