/**
 * The real git-lfs client against a test server: an isolated HOME (no system config, no prompts),
 * a credential store with one user's password, and helpers to run git in a work tree.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/knex.js';
import { hashPassword } from '../../src/auth/passwords.js';
import { createRepo, setGrant, type RepoAccess } from '../../src/db/repos.js';
import { findOrgBySlug, insertOrg, insertUser } from '../../src/db/users.js';

export interface GitResult { code: number; stdout: string; stderr: string }

export class LfsWorkspace {
  readonly home: string;
  constructor(readonly root: string, private readonly extraEnv: Record<string, string> = {}) {
    this.home = join(root, 'home');
    mkdirSync(this.home, { recursive: true });
  }

  env(extra: Record<string, string> = {}) {
    return {
      PATH: process.env.PATH!,
      HOME: this.home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_AUTHOR_NAME: 'pactum tests',
      GIT_AUTHOR_EMAIL: 'tests@pactum.invalid',
      GIT_COMMITTER_NAME: 'pactum tests',
      GIT_COMMITTER_EMAIL: 'tests@pactum.invalid',
      ...this.extraEnv,
      ...extra,
    };
  }

  remove() {
    rmSync(this.root, { recursive: true, force: true });
  }

  git(args: string[], cwd: string, env: Record<string, string> = {}): Promise<GitResult> {
    return new Promise((resolve) =>
      execFile('git', args, { cwd, env: this.env(env), maxBuffer: 64 << 20, timeout: 120_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
  }

  async mustGit(args: string[], cwd: string, env: Record<string, string> = {}): Promise<GitResult> {
    const r = await this.git(args, cwd, env);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
    return r;
  }
}

/** A workspace whose credential store holds `username:password` for `baseUrl`. */
const workspaces: LfsWorkspace[] = [];
/** Removes every workspace made so far (call from afterAll). */
export const removeWorkspaces = () => workspaces.splice(0).forEach((w) => w.remove());

export async function lfsWorkspace(baseUrl: string, username: string, password: string): Promise<LfsWorkspace> {
  const ws = new LfsWorkspace(mkdtempSync(join(tmpdir(), 'pactum-lfs-')));
  workspaces.push(ws);
  await ws.mustGit(['config', '--global', 'init.defaultBranch', 'main'], ws.root);
  await ws.mustGit(['config', '--global', 'credential.helper', `store --file=${join(ws.home, '.git-credentials')}`], ws.root);
  await ws.mustGit(['lfs', 'install', '--skip-repo'], ws.root);
  const u = new URL(baseUrl);
  writeFileSync(join(ws.home, '.git-credentials'), `${u.protocol}//${encodeURIComponent(username)}:${encodeURIComponent(password)}@${u.host}\n`, { mode: 0o600 });
  return ws;
}

/**
 * A source repository whose .lfsconfig points at `lfsUrl`, tracking *.bin, with a bare remote
 * next to it. Returns the paths.
 */
export async function sourceRepo(ws: LfsWorkspace, lfsUrl: string, config: Record<string, string> = {}) {
  const remote = join(ws.root, `remote-${randomBytes(3).toString('hex')}.git`);
  const src = join(ws.root, `src-${randomBytes(3).toString('hex')}`);
  await ws.mustGit(['init', '-q', '--bare', remote], ws.root);
  await ws.mustGit(['init', '-q', src], ws.root);
  await ws.mustGit(['remote', 'add', 'origin', remote], src);
  for (const [k, v] of Object.entries(config)) await ws.mustGit(['config', k, v], src);
  writeFileSync(join(src, '.lfsconfig'), `[lfs]\n\turl = ${lfsUrl}\n`);
  await ws.mustGit(['lfs', 'track', '*.bin'], src);
  return { remote, src };
}

/** An org, a user with a password, and a repository the user holds `access` on. */
export async function lfsFixture(db: Db, opts: { org: string; repo: string; username: string; password: string; access?: RepoAccess; public?: boolean }) {
  const org = (await findOrgBySlug(db, opts.org)) ?? (await insertOrg(db, { name: opts.org, slug: opts.org }));
  const user = await insertUser(db, { orgId: org.id, username: opts.username, passwordHash: await hashPassword(opts.password), role: 'member' });
  const repo = (await db('repos').where({ org_id: org.id, name: opts.repo }).first()) ?? (await createRepo(db, org.id, opts.repo, Boolean(opts.public)));
  if (opts.access) await setGrant(db, repo.id, user.id, opts.access);
  return { org, user, repo };
}
