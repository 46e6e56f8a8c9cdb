/**
 * Bearer JWTs (jose). HS256 with the server key by default; RS256/ES256 through a JWKS when
 * JWT_JWKS_URL is set. Audience `<PUBLIC_URL>/api/v1/mcp`; `exp` required; `alg: none` and
 * algorithms outside the configured family are refused. A token for a local user carries the
 * user's credential version (`credentialVersion`), which auth/security.ts compares with the
 * user's current one at each request.
 */
import { createSecretKey } from 'node:crypto';
import { SignJWT, jwtVerify, createRemoteJWKSet, type JWTPayload } from 'jose';
import type { Config } from '../ground/config.js';
import { ROLE_PERMISSIONS, isPermission, isRole, type Permission, type Role } from '../domain/access/permissions.js';
import { loadOrCreateKey } from '../ground/keys.js';

export interface TokenClaims {
  sub: string;
  orgId: string;
  role: Role | null;
  permissions: Set<Permission>;
  /** A user's credential version when the token was minted (claim `credentialVersion`); null when the token names none. */
  credentialVersion: number | null;
}

export interface TokenService {
  verify(token: string): Promise<TokenClaims>;
  /** Only with the HS256 key: a JWKS verifier has no private key to sign with. */
  sign(claims: { sub: string; orgId: string; role?: Role; scopes?: Permission[]; credentialVersion?: number }, ttlSeconds: number): Promise<string>;
}

export class TokenError extends Error {}

export function hs256Key(config: Config): Buffer {
  return config.jwt.secret ? Buffer.from(config.jwt.secret, 'utf8') : loadOrCreateKey(config.dataDir, 'jwt-hs256', 32);
}

export function claimsOf(payload: JWTPayload): TokenClaims {
  const sub = payload.sub;
  const orgId = payload.orgId;
  if (typeof sub !== 'string' || !sub) throw new TokenError('the token has no sub');
  if (typeof orgId !== 'string' || !orgId) throw new TokenError('the token has no orgId');
  const role = typeof payload.role === 'string' && isRole(payload.role) ? payload.role : null;
  if (payload.role !== undefined && !role) throw new TokenError(`unknown role ${typeof payload.role === 'string' ? payload.role : JSON.stringify(payload.role)}`);
  const scopes = Array.isArray(payload.scopes)
    ? payload.scopes
    : typeof payload.scope === 'string'
      ? payload.scope.split(' ')
      : [];
  const permissions = new Set<Permission>(role ? ROLE_PERMISSIONS[role] : []);
  for (const s of scopes) if (typeof s === 'string' && isPermission(s)) permissions.add(s);
  const version = payload.credentialVersion;
  if (version !== undefined && !(Number.isSafeInteger(version) && (version as number) >= 0)) throw new TokenError('the token has an invalid credentialVersion');
  return { sub, orgId, role, permissions, credentialVersion: version === undefined ? null : (version as number) };
}

/**
 * Verified tokens, by their full text (signature included, so nothing can be forged into the
 * cache), until shortly before they expire. Agents send the same token on every call; checking
 * its signature once is enough.
 */
class VerifiedTokens {
  private readonly entries = new Map<string, { claims: TokenClaims; until: number }>();
  get(token: string): TokenClaims | null {
    const e = this.entries.get(token);
    if (!e) return null;
    if (Date.now() < e.until) return e.claims;
    this.entries.delete(token);
    return null;
  }
  set(token: string, claims: TokenClaims, exp: number) {
    if (this.entries.size >= 10_000) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, { claims, until: Math.min(exp * 1000, Date.now() + 5 * 60_000) });
  }
}

export function createTokenService(config: Config): TokenService {
  const audience = config.jwt.audience;
  const issuer = config.jwt.issuer ?? undefined;
  // A raw key would be imported into WebCrypto on every verify; import it once.
  const key = config.jwt.jwksUrl ? null : createSecretKey(hs256Key(config));
  const jwks = config.jwt.jwksUrl ? createRemoteJWKSet(new URL(config.jwt.jwksUrl)) : null;
  const verified = new VerifiedTokens();
  return {
    async verify(token) {
      const known = verified.get(token);
      if (known) return known;
      try {
        const { payload } = jwks
          ? await jwtVerify(token, jwks, { audience, issuer, algorithms: ['RS256', 'ES256'], requiredClaims: ['exp'], clockTolerance: 5 })
          : await jwtVerify(token, key!, { audience, issuer, algorithms: ['HS256'], requiredClaims: ['exp'], clockTolerance: 5 });
        const claims = claimsOf(payload);
        verified.set(token, claims, payload.exp!);
        return claims;
      } catch (err) {
        if (err instanceof TokenError) throw err;
        // jose says '"exp" claim timestamp check failed': say when, for the person who must renew it.
        if ((err as { code?: string }).code === 'ERR_JWT_EXPIRED') {
          const exp = (err as { payload?: JWTPayload }).payload?.exp;
          throw new TokenError(typeof exp === 'number' ? `token expired at ${new Date(exp * 1000).toISOString()}` : 'token expired');
        }
        throw new TokenError((err as Error).message);
      }
    },
    async sign(claims, ttlSeconds) {
      if (!key) throw new TokenError('tokens are verified with JWT_JWKS_URL; sign them with the identity provider that owns those keys');
      const body: Record<string, unknown> = { orgId: claims.orgId };
      if (claims.role) body.role = claims.role;
      if (claims.scopes?.length) body.scopes = claims.scopes;
      if (claims.credentialVersion !== undefined) body.credentialVersion = claims.credentialVersion;
      return new SignJWT(body)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(claims.sub)
        .setAudience(audience)
        .setIssuer(issuer ?? config.publicUrl)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
        .sign(key);
    },
  };
}

/** "90s", "15m", "1h", "7d" or plain seconds. */
export function parseTtl(text: string): number {
  const m = /^(\d+)\s*([smhd]?)$/.exec(text.trim());
  if (!m) throw new Error(`invalid duration ${text}: use for example 900, 15m, 1h or 7d`);
  const n = Number(m[1]);
  const seconds = n * ({ '': 1, s: 1, m: 60, h: 3600, d: 86400 } as Record<string, number>)[m[2]!]!;
  if (seconds < 1) throw new Error('the duration must be at least one second');
  return seconds;
}
