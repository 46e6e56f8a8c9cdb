/**
 * `pactum repo …`: repositories of the object store and who may read or write them.
 * A repository is named <org slug>/<name>; git-lfs reaches it at
 * <PUBLIC_URL>/<org>/<name>.git/info/lfs.
 */
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import type { Db } from '../db/knex.js';
import { createRepo, findRepo, setGrant, type RepoAccess } from '../db/repos.js';
import { findOrgBySlug, findUserByName, isUniqueViolation } from '../db/users.js';
import { repoBase } from '../objects/links.js';
import { openBackend } from '../objects/store/open.js';
import { createLogger } from '../telemetry/log.js';
import { contentStore } from '../objects/store/content-store.js';
import { deleteObject, restoreObject } from '../objects/objects-table.js';
import { createAuditLog } from '../mcp/audit.js';
import { UsageError, cliConfig, serverUrl, withDb } from './args.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

function parseRef(ref: string | undefined) {
  const m = ref ? /^([^/]+)\/([^/]+)$/.exec(ref) : null;
  if (!m) throw new UsageError('name the repository as <org>/<repo>');
  const name = m[2]!.replace(/\.git$/, '');
  if (!NAME.test(name)) throw new UsageError(`${name} is not a valid repository name (letters, digits, . _ -)`);
  return { org: m[1]!, name };
}

/** Who ran a command, as the audit trail names it: the CLI has no token, so the OS user. */
function cliSubject(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

/** One audit row for a change the CLI made (tool: the command), beside the MCP tools' rows. */
async function audit(db: Db, orgId: string, command: string, args: Record<string, string>, message: string, started: number) {
  const log = createAuditLog(db);
  await log.write({ requestId: null, subject: cliSubject(), orgId, tool: `pactum repo ${command}`, args, outcome: 'ok', message, durationMs: Date.now() - started });
}

async function repoOf(db: Db, ref: string) {
  const { org, name } = parseRef(ref);
  const repo = await findRepo(db, org, name);
  if (!repo) throw new UsageError(`no repository ${org}/${name} (create it with: pactum repo create ${org}/${name})`);
  return repo;
}

export async function repo(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { public: { type: 'boolean' }, reason: { type: 'string' } } });
  // One parse for every subcommand: an option or argument that this one does not take is a mistake.
  if (values.public !== undefined && sub !== 'create') throw new UsageError('--public is an option of repo create only');
  if (values.reason !== undefined && sub !== 'delete-object' && sub !== 'restore-object') throw new UsageError('--reason is an option of repo delete-object and restore-object only');
  const most = { create: 1, list: 0, grant: 3, revoke: 2, 'delete-object': 2, 'restore-object': 2 }[sub ?? ''];
  if (most !== undefined && positionals.length > most) throw new UsageError(`unexpected argument ${positionals[most]}`);
  switch (sub) {
    case 'create': {
      const { org, name } = parseRef(positionals[0]);
      return withDb(async (db, config) => {
        const o = await findOrgBySlug(db, org);
        if (!o) throw new UsageError(`no organization ${org} (create it with: pactum org create ${org})`);
        try {
          await createRepo(db, o.id, name, Boolean(values.public));
        } catch (err) {
          if (isUniqueViolation(err)) throw new UsageError(`${org}/${name} exists already`);
          throw err;
        }
        console.log(`created ${values.public ? 'public' : 'private'} repository ${org}/${name}`);
        console.log(`git-lfs endpoint: ${repoBase((await serverUrl(db, config)).url, { org_slug: org, name })}`);
        return 0;
      });
    }
    case 'list':
      return withDb(async (db) => {
        const rows = await db('repos as r').join('orgs as o', 'o.id', 'r.org_id').orderBy(['o.slug', 'r.name']).select<{ slug: string; name: string; public: boolean | 0 | 1 }[]>('o.slug', 'r.name', 'r.public');
        for (const r of rows) console.log(`${r.slug}/${r.name}\t${r.public ? 'public' : 'private'}`);
        return 0;
      });
    case 'grant':
    case 'revoke': {
      const [ref, username, level] = positionals;
      const access = sub === 'revoke' ? null : (level as RepoAccess);
      if (!ref || !username || (sub === 'grant' && !['read', 'write', 'admin'].includes(level ?? ''))) {
        throw new UsageError('usage: pactum repo grant <org>/<repo> <username> read|write|admin | pactum repo revoke <org>/<repo> <username>');
      }
      return withDb(async (db) => {
        const r = await repoOf(db, ref);
        const u = await findUserByName(db, username);
        if (!u) throw new UsageError(`no user ${username}`);
        await setGrant(db, r.id, u.id, access);
        console.log(access ? `${username} may now ${access === 'read' ? 'read' : access === 'write' ? 'read and write' : 'administer'} ${ref}` : `${username} no longer has a grant on ${ref}`);
        return 0;
      });
    }
    case 'delete-object': {
      const [ref, oid] = positionals;
      if (!ref || !oid || !values.reason) throw new UsageError('usage: pactum repo delete-object <org>/<repo> <oid> --reason "why"');
      return withDb(async (db) => {
        const started = Date.now();
        const r = await repoOf(db, ref);
        const backend = await openBackend(cliConfig(), createLogger('error'));
        try {
          if (!(await deleteObject(db, contentStore(backend.store), r.id, oid, values.reason!))) throw new UsageError(`${ref} has no object ${oid}`);
        } finally {
          backend.close();
        }
        await audit(db, r.org_id, 'delete-object', { repo: ref, oid, reason: values.reason! }, 'taken down', started);
        console.log(`deleted ${oid} from ${ref}; clients now get 410 with the reason, and uploads of it are refused until: pactum repo restore-object ${ref} ${oid} --reason "why"`);
        return 0;
      });
    }
    case 'restore-object': {
      const [ref, oid] = positionals;
      if (!ref || !oid || !values.reason) throw new UsageError('usage: pactum repo restore-object <org>/<repo> <oid> --reason "why"');
      return withDb(async (db) => {
        const started = Date.now();
        const r = await repoOf(db, ref);
        const backend = await openBackend(cliConfig(), createLogger('error'));
        let state: 'live' | 'absent' | null;
        try {
          state = await restoreObject(db, contentStore(backend.store), r.id, oid);
        } finally {
          backend.close();
        }
        if (!state) throw new UsageError(`${ref} has no deleted object ${oid}`);
        await audit(db, r.org_id, 'restore-object', { repo: ref, oid, reason: values.reason! }, state === 'live' ? 'takedown lifted; served again' : 'takedown lifted; may be uploaded again', started);
        console.log(
          state === 'live'
            ? `lifted the takedown of ${oid} in ${ref}; the store still holds it, so it is served again`
            : `lifted the takedown of ${oid} in ${ref}; its content is no longer stored, so a writer may upload it again`,
        );
        return 0;
      });
    }
    default:
      throw new UsageError('usage: pactum repo create <org>/<repo> [--public] | list | grant | revoke | delete-object | restore-object');
  }
}
