import { parseArgs } from 'node:util';
import { createTokenService, parseTtl } from '../auth/jwt.js';
import { isPermission, isRole, type Permission, type Role } from '../domain/access/permissions.js';
import { findUserById, findUserByName } from '../db/users.js';
import { UsageError, orgOf, serverUrl, unknownRole, withDb } from './args.js';

const MCP_PATH = '/api/v1/mcp';

/** --audience takes the server's URL, or the full audience (its MCP endpoint). */
function audienceBase(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--audience ${value} is not a URL (give the server's URL, e.g. http://127.0.0.1:8080)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--audience ${value}: use an http or https URL`);
  return url.href.replace(/\/$/, '').replace(new RegExp(`${MCP_PATH}$`), '');
}

/**
 * `pactum token`: prints a bearer JWT for the server that shares this CLI's database and keys
 * (DATA_DIR or DATABASE_URL, JWT_SECRET). Either for an existing user (--user, with its role and
 * org) or for a service subject (--sub, in an org that exists, with --perm and/or --role).
 * The audience is that server's URL (see serverUrl); stderr says which one when it was not given.
 */
export async function token(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      user: { type: 'string' },
      sub: { type: 'string' },
      org: { type: 'string' },
      perm: { type: 'string' },
      role: { type: 'string' },
      ttl: { type: 'string', default: '1h' },
      audience: { type: 'string' },
    },
  });
  let ttl: number;
  try {
    ttl = parseTtl(values.ttl);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const scopes = (values.perm ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  const unknown = scopes.filter((p) => !isPermission(p));
  if (unknown.length) throw new UsageError(`unknown permission ${unknown.join(', ')}`);
  if (values.role && !isRole(values.role)) throw new UsageError(unknownRole(values.role));
  if (values.user && (values.sub || values.org)) throw new UsageError('--user takes the user\'s org and id: leave out --sub and --org');
  if (!values.user) {
    if (!values.sub || !values.org) throw new UsageError('token needs --user <username>, or --sub <id> and --org <slug|id>');
    if (!scopes.length && !values.role) throw new UsageError('token needs --perm or --role: a token without permissions can call nothing');
  }
  const explicit = values.audience ? audienceBase(values.audience) : null;

  const { claims, base, config } = await withDb(async (db, config) => {
    let claims: { sub: string; orgId: string; role?: Role; scopes: Permission[]; credentialVersion?: number };
    if (values.user) {
      const user = await findUserByName(db, values.user);
      if (!user) throw new UsageError(`no user ${values.user} (list them with: pactum user list)`);
      if (!user.active) throw new UsageError(`${values.user} is deactivated`);
      // Bound to the user's credentials as they are now: a new password, deactivation or
      // reactivation ends the token (auth/security.ts).
      claims = { sub: user.id, orgId: user.org_id, role: user.role, scopes: scopes as Permission[], credentialVersion: Number(user.credential_version) };
    } else {
      const org = await orgOf(db, values.org!);
      // A user's id as a subject: the server refuses a token whose user does not exist.
      let credentialVersion: number | undefined;
      if (values.sub!.startsWith('usr_')) {
        const user = await findUserById(db, values.sub!);
        if (!user) throw new UsageError(`no user ${values.sub} (for a user, use --user <username>)`);
        if (user.org_id !== org.id) throw new UsageError(`${values.sub} is not in ${org.slug}`);
        credentialVersion = Number(user.credential_version);
      }
      claims = { sub: values.sub!, orgId: org.id, role: values.role as Role | undefined, scopes: scopes as Permission[], credentialVersion };
    }
    if (explicit) return { claims, base: explicit, config };
    const server = await serverUrl(db, config);
    if (server.source !== 'PUBLIC_URL') console.error(`pactum token: for ${server.url} (${server.source}); --audience URL chooses another server`);
    return { claims, base: server.url, config };
  });
  // The same key as the server's (JWT_SECRET or DATA_DIR/keys); the audience of the chosen server.
  const service = createTokenService({ ...config, publicUrl: base, jwt: { ...config.jwt, audience: `${base}${MCP_PATH}` } });
  console.log(await service.sign(claims, ttl));
  return 0;
}
