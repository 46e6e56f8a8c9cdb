/**
 * The MCP endpoint's check of an external authorization server's access tokens (OAUTH_ISSUER):
 * JWTs signed with the issuer's keys (JWT_JWKS_URL, else the `jwks_uri` of the issuer's RFC 8414
 * or OpenID metadata, read at the first token), whose `iss` is the issuer, whose audience is the
 * MCP endpoint's canonical URI, and which carry `exp`. The token stands for the pactum user whose
 * username is the value of the claim OAUTH_USER_CLAIM (default `sub`): that user's org and the
 * role it holds now apply, narrowed to the pactum permissions the token's `scope` names, when it
 * names any. An unknown user is no one (401); a deactivated one is refused (401).
 */
import type { Context } from 'koa';
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Config } from '../ground/config.js';
import { findUserByName } from '../db/users.js';
import type { Db } from '../db/knex.js';
import { HttpError, RevokedCredential } from '../http/errors.js';
import type { SecurityHandler } from '../http/router.js';
import { ROLE_PERMISSIONS, isPermission, type Permission } from '../domain/access/permissions.js';
import { dashboardChallenge, identityOfUser, narrowed } from './security.js';
import { authorizationServerMetadataUrls } from '../ground/authorization-metadata.js';

const JWT = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+) *$/i;
const USERNAME = /^[A-Za-z0-9._@+-]{1,64}$/;

/** The issuer's `jwks_uri`, from the first of its metadata documents that answers and names this issuer. */
export async function discoverJwksUri(issuer: string, fetchImpl: typeof fetch = fetch): Promise<string> {
  const problems: string[] = [];
  for (const url of authorizationServerMetadataUrls(issuer)) {
    try {
      const res = await fetchImpl(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(5000) });
      if (!res.ok) {
        problems.push(`${url}: ${res.status}`);
        continue;
      }
      const meta = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
      // RFC 8414 §3.3: the metadata of another issuer must not be used.
      if (meta.issuer !== issuer) throw new Error(`${url} names the issuer ${JSON.stringify(meta.issuer)}, not ${issuer}`);
      if (typeof meta.jwks_uri !== 'string' || !URL.canParse(meta.jwks_uri)) throw new Error(`${url} names no jwks_uri`);
      return meta.jwks_uri;
    } catch (err) {
      if ((err as Error).message.startsWith(url)) throw err;
      problems.push(`${url}: ${(err as Error).message}`);
    }
  }
  throw new Error(`no metadata of ${issuer} could be read (${problems.join('; ')})`);
}

/** The pactum permissions an access token's scope names (`scope` string, or `scp` list), or null when it names none. */
export function permissionScopes(payload: JWTPayload): Set<Permission> | null {
  const raw = typeof payload.scope === 'string' ? payload.scope.split(' ') : Array.isArray(payload.scp) ? payload.scp : [];
  const found = new Set<Permission>(raw.filter((s): s is Permission => typeof s === 'string' && isPermission(s)));
  return found.size ? found : null;
}

/**
 * With OAUTH_ISSUER: a JWT whose `iss` is the issuer goes to the issuer's check; any other bearer
 * credential to `others` (pactum's own tokens: `pactum token`, personal tokens).
 */
export function withExternalIssuer(config: Config, db: Db, others: SecurityHandler): SecurityHandler {
  if (!config.oauth.issuer) return others;
  const external = externalIssuerBearer(config, db);
  return (ctx, op) => {
    const m = JWT.exec(ctx.get('authorization'));
    let iss: unknown;
    try {
      iss = m ? decodeJwt(m[1]!).iss : undefined;
    } catch {
      iss = undefined;
    }
    return iss === config.oauth.issuer ? external(ctx, op) : others(ctx, op);
  };
}

export function externalIssuerBearer(config: Config, db: Db): SecurityHandler {
  const issuer = config.oauth.issuer!;
  const claim = config.oauth.userClaim;
  const audience = config.jwt.audience;
  let keys: Promise<JWTVerifyGetKey> | null = config.jwt.jwksUrl ? Promise.resolve(createRemoteJWKSet(new URL(config.jwt.jwksUrl))) : null;
  // After a failed discovery, tokens are answered 503 for this long before it is tried again: a
  // flood of tokens naming the issuer must not become a flood of requests to it.
  const RETRY_MS = 5000;
  let failedAt = -Infinity;
  const unavailable = () => new HttpError(503, `The keys of the authorization server ${issuer} could not be read; try again shortly`, { 'Retry-After': String(RETRY_MS / 1000) });
  const keySet = () => {
    if (!keys && performance.now() - failedAt < RETRY_MS) return Promise.reject(unavailable());
    // Discovered at the first token; a failure is tried again once RETRY_MS has passed.
    keys ??= discoverJwksUri(issuer).then((uri) => createRemoteJWKSet(new URL(uri)));
    return keys.catch(() => {
      keys = null;
      failedAt = performance.now();
      throw unavailable();
    });
  };
  const refuse = (why: string) => new HttpError(401, why, dashboardChallenge(config, 'invalid_token'));
  return async (ctx: Context) => {
    const m = JWT.exec(ctx.get('authorization'));
    if (!m) return null;
    const getKey = await keySet();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(m[1]!, getKey, { issuer, audience, algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'], requiredClaims: ['exp'], clockTolerance: 5 }));
    } catch (err) {
      const code = (err as { code?: string }).code;
      const why =
        code === 'ERR_JWT_EXPIRED'
          ? 'the token has expired'
          : code === 'ERR_JWT_CLAIM_VALIDATION_FAILED'
            ? `its ${(err as { claim?: string }).claim ?? 'claims'} claim is not what this server accepts (iss ${issuer}, aud ${audience})`
            : code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED'
              ? `it is not signed by a key of ${issuer}`
              : 'it could not be verified';
      throw refuse(`The bearer token is not valid: ${why}`);
    }
    const name = payload[claim];
    if (typeof name !== 'string' || !USERNAME.test(name)) throw refuse(`The access token has no ${claim} claim naming a pactum user`);
    const user = await findUserByName(db, name);
    if (!user) throw refuse(`No pactum user is named by the ${claim} of this access token`);
    if (!user.active) throw new RevokedCredential(401, 'The user of this access token is deactivated', dashboardChallenge(config, 'invalid_token'));
    const role = ROLE_PERMISSIONS[user.role];
    const scopes = permissionScopes(payload);
    return scopes ? { ...identityOfUser(user, 'bearerAuth'), permissions: narrowed(role, scopes), heldByRole: new Set(role) } : identityOfUser(user, 'bearerAuth');
  };
}
