import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { createTokenService, parseTtl } from '../auth/jwt.js';
import { isPermission, isRole, type Permission, type Role } from '../auth/permissions.js';
import { findUserByName } from '../db/users.js';
import { UsageError, withDb } from './args.js';

/**
 * `pactum token`: prints a bearer JWT that a server with the same DATA_DIR (or JWT_SECRET)
 * accepts. Either for an existing user (--user, with its role and org) or for any subject
 * (--sub and --org, with --perm and/or --role).
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
    },
  });
  let ttl: number;
  try {
    ttl = parseTtl(values.ttl!);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const scopes = (values.perm ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  const unknown = scopes.filter((p) => !isPermission(p));
  if (unknown.length) throw new UsageError(`unknown permission ${unknown.join(', ')}`);
  if (values.role && !isRole(values.role)) throw new UsageError(`unknown role ${values.role}`);

  let claims: { sub: string; orgId: string; role?: Role; scopes: Permission[] };
  if (values.user) {
    const user = await withDb((db) => findUserByName(db, values.user!));
    if (!user) throw new UsageError(`no user ${values.user}`);
    if (!user.active) throw new UsageError(`${values.user} is deactivated`);
    claims = { sub: user.id, orgId: user.org_id, role: user.role, scopes: scopes as Permission[] };
  } else {
    if (!values.sub || !values.org) throw new UsageError('token needs --user <username>, or --sub <id> and --org <orgId>');
    if (!scopes.length && !values.role) throw new UsageError('token needs --perm or --role: a token without permissions can call nothing');
    claims = { sub: values.sub, orgId: values.org, role: values.role as Role | undefined, scopes: scopes as Permission[] };
  }
  console.log(await createTokenService(loadConfig()).sign(claims, ttl));
  return 0;
}
