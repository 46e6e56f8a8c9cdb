/**
 * Who may do what with a repository's objects, and the object APIs' security schemes.
 *
 *   anonymous          read on public repositories
 *   admin.system       admin everywhere; admin.org: admin on its org's repositories
 *   a grant            read, write or admin on one repository
 *   a transfer token   exactly the one transfer it names
 *
 * Refusals follow Git LFS: 401 (with the Basic challenge) when credentials could help, 404 for
 * a repository the caller may not see, 403 for a reader that tries to write.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Identity } from '../domain/access/identity.js';
import { ROLE_PERMISSIONS } from '../domain/access/permissions.js';
import { checkPassword, hashPassword, needsRehash } from '../auth/passwords.js';
import type { PasswordThrottle } from '../auth/throttle.js';
import { findGrant, findPersonalToken, findRepo, findRepoWithGrant, noteTokenUse, type RepoAccess, type RepoRow } from '../db/repos.js';
import { findUserById, findUserByName } from '../db/users.js';
import type { UserRowSnapshot } from '../db/point-reads.js';
import type { UserState } from '../auth/user-state.js';
import type { Db } from '../db/knex.js';
import { HttpError, RevokedCredential } from '../http/errors.js';
import type { SecurityHandler } from '../http/router.js';
import type { TransferTokens } from './transfer-tokens.js';

export const LFS_CHALLENGE = { 'LFS-Authenticate': 'Basic realm="pactum"', 'WWW-Authenticate': 'Basic realm="pactum"' };

const RANK: Record<RepoAccess | 'none', number> = { none: 0, read: 1, write: 2, admin: 3 };

export interface RepoContext {
  repo: RepoRow;
  access: RepoAccess;
  identity: Identity | null;
}

function identityOfUser(user: UserRowSnapshot, scheme: Identity['scheme']): Identity {
  return {
    scheme, subject: user.id, username: user.username, orgId: user.org_id, role: user.role,
    permissions: new Set(ROLE_PERMISSIONS[user.role]), credentialVersion: Number(user.credential_version),
  };
}

/**
 * HTTP Basic: a dashboard user's username with its password or a personal token. Successful
 * password checks are remembered for a minute (by a hash of the credentials), because git-lfs
 * sends them on every request and scrypt is deliberately slow. The user behind remembered
 * credentials is read through `users` (auth/user-state.ts), which drops a user at every change to
 * it: its state counts at the very next request, without a query per request.
 */
export function basicAuth(db: Db, throttle: PasswordThrottle, users: Pick<UserState, 'get'>): SecurityHandler & { forget(userId: string): void } {
  const verified = new Map<string, { userId: string; version: number; until: number }>();
  const handler = async (ctx: Context) => {
    const m = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(ctx.get('authorization'));
    if (!m) return null;
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const username = decoded.slice(0, colon);
    const secret = decoded.slice(colon + 1);
    const refuse = () => new HttpError(401, 'Invalid username, password or token', LFS_CHALLENGE);
    // No user name or secret holds a NUL (and PostgreSQL could not even look one up).
    if (colon < 1 || !secret || decoded.includes('\0')) throw refuse();
    const cacheKey = createHash('sha256').update(`${username}\0${secret}`).digest('hex');
    // The same refusal to the client whatever the cause; the metrics count revocations apart.
    const revoked = () => new RevokedCredential(401, 'Invalid username, password or token', LFS_CHALLENGE);
    const hit = verified.get(cacheKey);
    let user: UserRowSnapshot | undefined;
    let remembered = false;
    if (hit && hit.until > Date.now() && !secret.startsWith('pat_')) {
      // Remembered credentials count only while the user's credential version stands; once it
      // moves (a new password, a revoked token) the password is checked again.
      const known = await users.get(hit.userId);
      if (known && Number(known.credential_version) === hit.version) {
        user = known;
        remembered = true;
      } else verified.delete(cacheKey);
    }
    if (!remembered && secret.startsWith('pat_')) {
      const token = await findPersonalToken(db, secret);
      const owner = token && (await findUserById(db, token.user_id));
      if (!token || !owner || owner.username !== username || token.expired) throw refuse();
      if (token.revoked || !owner.active) throw revoked();
      user = owner;
      await noteTokenUse(db, token.id);
    } else if (!remembered) {
      // Throttled before scrypt; an unknown user costs the same scrypt as a known one.
      const candidate = await findUserByName(db, username);
      const matches = await throttle.guard(username, ctx.ip, () => checkPassword(secret, candidate?.password_hash, ctx.ip));
      if (matches && candidate) {
        if (!candidate.active) throw revoked();
        if (needsRehash(candidate.password_hash)) await db('users').where({ id: candidate.id }).update({ password_hash: await hashPassword(secret, ctx.ip) });
        user = candidate;
      }
    }
    if (!user || !user.active) throw refuse();
    if (!remembered) {
      if (verified.size >= 10_000) verified.clear();
      verified.set(cacheKey, { userId: user.id, version: Number(user.credential_version), until: Date.now() + 60_000 });
    }
    return identityOfUser(user, 'basicAuth');
  };
  return Object.assign(handler, {
    forget(userId: string) {
      for (const [k, v] of verified) if (v.userId === userId) verified.delete(k);
    },
  });
}

export function transferToken(tokens: TransferTokens): SecurityHandler {
  return (ctx: Context) => {
    const m = /^Bearer +(\S+) *$/i.exec(ctx.get('authorization'));
    if (!m) return null;
    let claims;
    try {
      claims = tokens.verify(m[1]!);
    } catch (err) {
      throw new HttpError(401, (err as Error).message, LFS_CHALLENGE);
    }
    return {
      scheme: 'transferToken',
      subject: claims.subject,
      username: claims.username,
      orgId: claims.orgId,
      role: null,
      permissions: new Set(),
      credentialVersion: claims.credentialVersion ?? undefined,
      transfer: { repoId: claims.repoId, oid: claims.oid, size: claims.size, op: claims.op },
    } satisfies Identity;
  };
}

/** `grant`: the identity's grant on the repository when already read (findRepoWithGrant). */
async function accessOf(db: Db, repo: RepoRow, identity: Identity | null, grant?: RepoAccess | null): Promise<RepoAccess | 'none'> {
  const publicRead = repo.public ? 'read' : 'none';
  if (!identity) return publicRead;
  if (identity.permissions.has('admin.system')) return 'admin';
  if (identity.permissions.has('admin.org') && identity.orgId === repo.org_id) return 'admin';
  const access = grant !== undefined ? grant : ((await findGrant(db, repo.id, identity.subject))?.access ?? null);
  return access && RANK[access] > RANK[publicRead] ? access : publicRead;
}

/**
 * A transfer token outlives nothing: at each use its user must still be active under the same
 * credential version (else 401: git-lfs asks for credentials again), and the access it was
 * issued for must still hold (else 403, as for any caller that lost a grant). Service callers
 * keep what their token says; anonymous ones need the repository to be public still.
 */
async function recheckTransfer(db: Db, repo: RepoRow, identity: Identity, need: 'read' | 'write'): Promise<void> {
  let now: Identity | null = null;
  if (identity.subject.startsWith('usr_')) {
    const user = await findUserById(db, identity.subject);
    if (!user || !user.active || Number(user.credential_version) !== identity.credentialVersion) {
      throw new RevokedCredential(401, 'The credentials behind this transfer token were changed or revoked; authenticate again', LFS_CHALLENGE);
    }
    now = identityOfUser(user, 'basicAuth');
  } else if (identity.subject !== 'anonymous') return;
  const access = await accessOf(db, repo, now);
  if (RANK[access] < RANK[need]) throw new RevokedCredential(403, `The access this transfer token was issued for has been revoked; ${repo.org_slug}/${repo.name} is no longer open to ${identity.username ?? identity.subject} for this`);
}

/**
 * The repository of the request and the caller's access to it, or the refusal. A transfer token
 * must name this repository, this object and this operation.
 */
export async function authorize(
  db: Db,
  params: { org: string; repo: string; oid?: string },
  identity: Identity | null,
  need: 'read' | 'write',
  transferOp?: 'upload' | 'download',
): Promise<RepoContext> {
  const name = `${params.org}/${params.repo}`;
  if (identity?.transfer) {
    const repo = await findRepo(db, params.org, params.repo);
    const t = identity.transfer;
    if (!repo || t.repoId !== repo.id || (params.oid && t.oid !== params.oid) || t.op !== transferOp) {
      throw new HttpError(401, 'This transfer token is for another object or operation; request new actions', LFS_CHALLENGE);
    }
    await recheckTransfer(db, repo, identity, t.op === 'upload' ? 'write' : 'read');
    return { repo, access: t.op === 'upload' ? 'write' : 'read', identity };
  }
  const found = await findRepoWithGrant(db, params.org, params.repo, identity?.subject ?? null);
  const repo = found?.repo;
  const access = found ? await accessOf(db, found.repo, identity, found.grant) : 'none';
  if (!repo || access === 'none') {
    if (!identity) throw new HttpError(401, `Credentials are needed for ${name}`, LFS_CHALLENGE);
    throw new HttpError(404, `Repository ${name} not found`);
  }
  if (RANK[access] < RANK[need]) {
    if (!identity) throw new HttpError(401, `Credentials are needed to write to ${name}`, LFS_CHALLENGE);
    throw new HttpError(403, `${identity.username ?? identity.subject} may read ${name} but not write to it`);
  }
  return { repo, access, identity };
}
