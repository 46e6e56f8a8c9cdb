/**
 * `pactum org …` and `pactum user …`: the way to set up a new install (its first system admin)
 * without any token. Input is checked with the same generated validators as the MCP tools.
 */
import { parseArgs } from 'node:util';
import { tools } from '../../generated/tools.js';
import { describeErrors } from '../http/router.js';
import { hashPassword } from '../auth/passwords.js';
import { isRole } from '../domain/access/permissions.js';
import { unknownRole } from './args.js';
import { findUserByName, insertOrg, type OrgRow, type UserRow, insertUser, isUniqueViolation, changeUser } from '../db/users.js';
import { UsageError, noArguments, orgOf, readPasswordFromStdin, withDb } from './args.js';
import { AmbiguousTokenName, createPersonalToken, listPersonalTokens, revokePersonalTokens } from '../db/repos.js';
import { parseTtl } from '../auth/jwt.js';

function check(validate: (typeof tools)[keyof typeof tools]['validateInput'], input: unknown) {
  if (!validate(input)) throw new UsageError(describeErrors(validate.errors, 'input').replace(/input\//g, ''));
}

export async function org(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'create') {
    const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { name: { type: 'string' } } });
    const slug = positionals[0];
    if (!slug) throw new UsageError('usage: pactum org create <slug> [--name "Display name"]');
    const input = { slug, name: values.name ?? slug };
    check(tools.dashboard_create_org.validateInput, input);
    return withDb(async (db) => {
      try {
        const created = await insertOrg(db, input);
        console.log(`created organization ${created.slug} (${created.id})`);
        return 0;
      } catch (err) {
        if (isUniqueViolation(err)) throw new UsageError(`the slug ${slug} is taken`);
        throw err;
      }
    }, { creates: true });
  }
  if (sub === 'list') {
    noArguments(rest);
    return withDb(async (db) => {
      for (const o of await db<OrgRow>('orgs').orderBy('slug')) console.log(`${o.slug}\t${o.id}\t${o.name}`);
      return 0;
    });
  }
  throw new UsageError('usage: pactum org create <slug> [--name NAME] | pactum org list');
}

export async function user(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'create') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { org: { type: 'string' }, role: { type: 'string' }, admin: { type: 'boolean' }, 'password-stdin': { type: 'boolean' } },
    });
    const username = positionals[0];
    const role = values.admin ? 'system_admin' : values.role;
    if (!username || !values.org || !role || !values['password-stdin']) {
      throw new UsageError('usage: pactum user create <username> --org <slug> (--role ROLE | --admin) --password-stdin');
    }
    if (!isRole(role)) throw new UsageError(unknownRole(role));
    const password = await readPasswordFromStdin();
    check(tools.dashboard_create_user.validateInput, { username, password, role });
    return withDb(async (db) => {
      const o = await orgOf(db, values.org!);
      try {
        const u = await insertUser(db, { orgId: o.id, username, passwordHash: await hashPassword(password), role });
        console.log(`created user ${u.username} (${u.id}) in ${o.slug} with role ${u.role}`);
        return 0;
      } catch (err) {
        if (isUniqueViolation(err)) throw new UsageError(`the username ${username} is taken`);
        throw err;
      }
    });
  }
  if (sub === 'passwd') {
    const { positionals, values } = parseArgs({ args: rest, allowPositionals: true, options: { 'password-stdin': { type: 'boolean' } } });
    if (!positionals[0] || !values['password-stdin']) throw new UsageError('usage: pactum user passwd <username> --password-stdin');
    const password = await readPasswordFromStdin();
    if (password.length < 8) throw new UsageError('the password needs at least 8 characters');
    return withDb(async (db) => {
      const u = await findUserByName(db, positionals[0]!);
      if (!u) throw new UsageError(`no user ${positionals[0]}`);
      await changeUser(db, u.id, { passwordHash: await hashPassword(password) });
      console.log(`changed the password of ${u.username}; its sessions and bearer tokens are ended`);
      return 0;
    });
  }
  if (sub === 'token' && rest[0] === 'revoke') {
    const { positionals } = parseArgs({ args: rest.slice(1), allowPositionals: true, options: {} });
    if (positionals.length !== 2) throw new UsageError('usage: pactum user token revoke <username> <name|id>');
    const [username, ref] = positionals as [string, string];
    return withDb(async (db) => {
      const u = await findUserByName(db, username);
      if (!u) throw new UsageError(`no user ${username}`);
      const n = await revokePersonalTokens(db, u.id, ref).catch((err: unknown) => {
        if (err instanceof AmbiguousTokenName) throw new UsageError(`${err.message} (list them with: pactum user tokens ${username})`);
        throw err;
      });
      if (!n) throw new UsageError(`${username} has no live token named ${ref} (list them with: pactum user tokens ${username})`);
      console.log(`revoked ${n} token${n === 1 ? '' : 's'} of ${username} (${ref}); it stops working at its next request`);
      return 0;
    });
  }
  if (sub === 'token') {
    const { positionals, values } = parseArgs({ args: rest, allowPositionals: true, options: { name: { type: 'string', default: 'git-lfs' }, ttl: { type: 'string' } } });
    if (!positionals[0]) throw new UsageError('usage: pactum user token <username> [--name NAME] [--ttl 90d] (without --ttl the token never expires)');
    let ttl: number | undefined;
    try {
      ttl = values.ttl ? parseTtl(values.ttl) : undefined;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    return withDb(async (db) => {
      const u = await findUserByName(db, positionals[0]!);
      if (!u) throw new UsageError(`no user ${positionals[0]}`);
      if (!u.active) throw new UsageError(`${u.username} is deactivated`);
      const now = new Date().toISOString();
      const same = (await listPersonalTokens(db, u.id)).find((t) => t.name === values.name && !t.revoked_at && (!t.expires_at || t.expires_at > now));
      if (same) throw new UsageError(`${u.username} has a live token named ${values.name} already (${same.id}, created ${same.created_at}): choose another --name, or revoke it first (pactum user token revoke ${u.username} ${values.name})`);
      const created = await createPersonalToken(db, u.id, values.name, ttl);
      console.log(created.token);
      const until = created.expiresAt ? `, valid until ${created.expiresAt}` : ', never expires: --ttl 90d sets an expiry';
      console.error(`a personal token for ${u.username} (${values.name}, ${created.id}${until}): use it as the password of Git LFS; it is shown only once`);
      return 0;
    });
  }
  if (sub === 'tokens') {
    const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} });
    if (positionals.length !== 1) throw new UsageError('usage: pactum user tokens <username>');
    return withDb(async (db) => {
      const u = await findUserByName(db, positionals[0]!);
      if (!u) throw new UsageError(`no user ${positionals[0]}`);
      const now = new Date().toISOString();
      for (const t of await listPersonalTokens(db, u.id)) {
        const state = t.revoked_at ? `revoked ${t.revoked_at}` : t.expires_at && t.expires_at <= now ? `expired ${t.expires_at}` : 'live';
        console.log([t.id, t.name, t.created_at, t.expires_at ?? 'no-expiry', t.last_used_at ?? 'never-used', state].join('\t'));
      }
      return 0;
    });
  }
  if (sub === 'list') {
    noArguments(rest);
    return withDb(async (db) => {
      const rows = await db('users as u').join('orgs as o', 'o.id', 'u.org_id').orderBy('u.username').select<(UserRow & { slug: string })[]>('u.*', 'o.slug');
      for (const u of rows) console.log(`${u.username}\t${u.id}\t${u.slug}\t${u.role}\t${u.active ? 'active' : 'inactive'}`);
      return 0;
    });
  }
  throw new UsageError('usage: pactum user create|passwd|token|tokens|list …');
}
