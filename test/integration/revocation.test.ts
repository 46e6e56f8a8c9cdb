/**
 * Privilege changes and revocations take effect at the next request: bearer JWTs carry the
 * user's current role, and personal tokens, cached Basic credentials, sessions and
 * transfer tokens die with the user's credential version or grant (§2). Changes come both from
 * this process (MCP tools) and from another one writing the database (the CLI).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { pactum } from '../helpers/cli.js';
import { backendEnv, backendMode } from '../helpers/backends.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { hashPassword } from '../../src/auth/passwords.js';
import type { Role } from '../../src/domain/access/permissions.js';
import { createPersonalToken } from '../../src/db/repos.js';
import { insertOrg, insertUser } from '../../src/db/users.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const content = (n: number) => {
  const bytes = randomBytes(n);
  return { bytes, oid: createHash('sha256').update(bytes).digest('hex'), size: n };
};

let s: TestServer;
let cli: Record<string, string>;
let acmeId: string;
let root: Awaited<ReturnType<typeof mcpClient>>;
let lfs: string;

beforeAll(async () => {
  s = await startTestServer();
  // The CLI is another process on the same database: what it changes, no cache of ours hears of.
  cli = { DATA_DIR: s.dataDir, ...(await backendEnv(s.dataDir)) };
  acmeId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  root = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_root', orgId: acmeId, perms: ['admin.system'] })));
  lfs = `${s.url}/acme/site.git/info/lfs`;
});
afterAll(async () => {
  await root?.close();
  await s?.stop();
});
afterEach(() => s.expectConformant());

async function user(username: string, role: Role, password = `${username}-password-1`) {
  return insertUser(s.services.db, { orgId: acmeId, username, passwordHash: await hashPassword(password), role });
}

const tokenOf = (u: { id: string; orgId: string; role: Role }, orgId = u.orgId) => s.services.tokens.sign({ sub: u.id, orgId, role: u.role }, 600);

/**
 * The status a request gets once another process's change has reached this server: at once on
 * SQLite (the next request checks data_version), once the change's notification has arrived on
 * PostgreSQL, which sends it after the commit (docs/security.md).
 */
async function statusAfterOtherProcess(request: () => Promise<number>, expected: number) {
  if (backendMode === 'embedded') return expect(await request()).toBe(expected);
  await expect.poll(request, { timeout: 5000, interval: 50 }).toBe(expected);
}

/** The status and body of an MCP tools/list with this bearer token or cookie. */
async function mcpStatus(auth: { authorization: string } | { cookie: string }) {
  const res = await fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { ...auth, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  return { status: res.status, text: await res.text() };
}

function lfsApi(url: string, auth: string, body?: unknown) {
  return fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { accept: GIT_LFS, authorization: auth, ...(body === undefined ? {} : { 'content-type': GIT_LFS }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function batch(auth: string, operation: 'upload' | 'download', c: { oid: string; size: number }) {
  const res = await lfsApi(`${lfs}/objects/batch`, auth, { operation, transfers: ['basic'], objects: [{ oid: c.oid, size: c.size }] });
  expect(res.status).toBe(200);
  return (await res.json()).objects[0].actions as Record<string, { href: string; header: Record<string, string> }>;
}

async function login(username: string, password: string) {
  const res = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
  expect(res.status).toBe(200);
  await res.body?.cancel();
  return { cookie: /session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')![0] };
}

describe('bearer tokens carry the role the user has now', () => {
  it('a demoted org admin cannot re-promote itself or create an org admin with its old token', async () => {
    const alice = await user('alice', 'org_admin');
    const old = await mcpClient(s.url, bearer(await tokenOf(alice)));
    // The control: while she is an org admin, the token may manage users.
    expect(ok(await old.callTool({ name: 'dashboard_get_user', arguments: { userId: alice.id } })).role).toBe('org_admin');
    ok(await root.callTool({ name: 'dashboard_update_user', arguments: { userId: alice.id, role: 'member' } }));

    expect(failure(await old.callTool({ name: 'dashboard_update_user', arguments: { userId: alice.id, role: 'org_admin' } })).error).toBe('forbidden');
    expect(failure(await old.callTool({ name: 'dashboard_create_user', arguments: { username: 'backdoor', password: 'backdoor-password', role: 'org_admin' } })).error).toBe('forbidden');
    const tools = (await old.listTools()).tools.map((t) => t.name);
    expect(tools).not.toContain('dashboard_update_user');
    expect(tools).toContain('dashboard_list_reports');
    expect(await s.services.db('users').where({ username: 'backdoor' }).first()).toBeUndefined();
    expect((await s.services.db('users').where({ id: alice.id }).first()).role).toBe('member');
    await old.close();
  });

  it('a token scoped narrower than the role stays that narrow', async () => {
    const ann = await user('ann', 'org_admin');
    const scoped = await s.services.tokens.sign({ sub: ann.id, orgId: acmeId, scopes: ['reports.view'] }, 600);
    const c = await mcpClient(s.url, bearer(scoped));
    const tools = (await c.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('dashboard_list_reports');
    expect(tools).not.toContain('dashboard_list_users');
    await c.close();
  });

  it('refuses with 401 the tokens of a deactivated user, a deleted user and a user that never existed', async () => {
    const bob = await user('bob', 'member');
    const bobToken = bearer(await tokenOf(bob));
    expect((await mcpStatus(bobToken)).status).toBe(200);
    ok(await root.callTool({ name: 'dashboard_update_user', arguments: { userId: bob.id, active: false } }));
    expect(await mcpStatus(bobToken)).toMatchObject({ status: 401, text: expect.stringMatching(/deactivated/) });

    const carol = await user('carol', 'member');
    const carolToken = bearer(await tokenOf(carol));
    expect((await mcpStatus(carolToken)).status).toBe(200);
    await s.services.db('users').where({ id: carol.id }).delete();
    expect(await mcpStatus(carolToken)).toMatchObject({ status: 401, text: expect.stringMatching(/does not exist/) });

    const ghost = bearer(await s.services.tokens.sign({ sub: 'usr_01ghost0000000000000000000', orgId: acmeId, scopes: ['admin.system'] }, 600));
    expect(await mcpStatus(ghost)).toMatchObject({ status: 401, text: expect.stringMatching(/does not exist/) });
    const nul = bearer(await s.services.tokens.sign({ sub: 'usr_\u0000', orgId: acmeId, scopes: ['admin.system'] }, 600));
    expect(await mcpStatus(nul)).toMatchObject({ status: 401, text: expect.stringMatching(/does not exist/) });
  });

  it("refuses a user's token that names another org with 401", async () => {
    const other = (await insertOrg(s.services.db, { name: 'Other', slug: 'other' })).id;
    const dan = await user('dan', 'org_admin');
    expect((await mcpStatus(bearer(await tokenOf(dan))).then((r) => r.status))).toBe(200);
    expect(await mcpStatus(bearer(await tokenOf(dan, other)))).toMatchObject({ status: 401, text: expect.stringMatching(/organization its user does not belong to/) });
  });

  it("keeps a service principal's claims within an org that exists, and refuses an unknown org with 401, not 500", async () => {
    const svc = (orgId: string) => s.services.tokens.sign({ sub: 'svc_ci', orgId, scopes: ['reports.view'] }, 600);
    expect((await mcpStatus(bearer(await svc(acmeId)))).status).toBe(200);
    for (const orgId of ['org_01nowhere000000000000000000', 'org_\u00e9\u0000x', 'x'.repeat(500)]) {
      expect(await mcpStatus(bearer(await svc(orgId))), orgId.slice(0, 20)).toMatchObject({ status: 401, text: expect.stringMatching(/does not exist/) });
    }
  });
});

describe('personal tokens', () => {
  it('are listed (never their secret) and revoked through the CLI, and record their last use', { timeout: 240_000 }, async () => {
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'dora', password: 'dora-password-1', access: 'read' });
    const made = await pactum(['user', 'token', 'dora', '--name', 'laptop', '--ttl', '30d'], cli);
    expect(made.code, made.stderr).toBe(0);
    const pat = made.stdout.trim();
    expect(pat).toMatch(/^pat_/);
    expect(made.stderr).toMatch(/valid until 20\d\d-/);

    const before = await pactum(['user', 'tokens', 'dora'], cli);
    expect(before.stdout).toMatch(/^pat_\w+\tlaptop\t\S+\t20\d\d-\S+\tnever-used\tlive$/m);
    expect((await lfsApi(`${lfs}/locks`, basic('dora', pat))).status).toBe(200);
    const after = await pactum(['user', 'tokens', 'dora'], cli);
    expect(after.stdout).toMatch(/^pat_\w+\tlaptop\t\S+\t20\d\d-\S+\t20\d\d-\S+\tlive$/m);
    // Neither the secret nor its hash is ever listed.
    expect(after.stdout).not.toContain(pat);
    expect(after.stdout).not.toContain(createHash('sha256').update(pat).digest('hex'));

    const revoked = await pactum(['user', 'token', 'revoke', 'dora', 'laptop'], cli);
    expect(revoked).toMatchObject({ code: 0, stdout: expect.stringMatching(/revoked 1 token of dora/) });
    await statusAfterOtherProcess(async () => (await lfsApi(`${lfs}/locks`, basic('dora', pat))).status, 401);
    expect((await pactum(['user', 'tokens', 'dora'], cli)).stdout).toMatch(/\tlaptop\t.*\trevoked 20\d\d-/);
    expect(await pactum(['user', 'token', 'revoke', 'dora', 'laptop'], cli)).toMatchObject({ code: 2, stderr: expect.stringMatching(/no live token named laptop/) });
  });

  it('are listed and revoked by an admin through the MCP user tools', async () => {
    const { user: eve } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'eve', password: 'eve-password-1', access: 'read' });
    const { token: pat, id } = await createPersonalToken(s.services.db, eve.id, 'ci');
    expect((await lfsApi(`${lfs}/locks`, basic('eve', pat))).status).toBe(200);
    const listed = ok(await root.callTool({ name: 'dashboard_list_user_tokens', arguments: { userId: eve.id } }));
    expect(listed.tokens).toEqual([expect.objectContaining({ id, name: 'ci', state: 'live', expiresAt: null, lastUsedAt: expect.any(String) })]);
    expect(JSON.stringify(listed)).not.toContain(pat);

    // A member may not; an unknown token is not_found.
    const member = await mcpClient(s.url, bearer(await tokenOf(await user('mo', 'member'))));
    expect(failure(await member.callTool({ name: 'dashboard_revoke_user_token', arguments: { userId: eve.id, token: id } })).error).toBe('forbidden');
    await member.close();
    expect(failure(await root.callTool({ name: 'dashboard_revoke_user_token', arguments: { userId: eve.id, token: 'nope' } })).error).toBe('not_found');

    const revoked = ok(await root.callTool({ name: 'dashboard_revoke_user_token', arguments: { userId: eve.id, token: id } }));
    expect(revoked).toMatchObject({ revoked: 1, tokens: [expect.objectContaining({ id, state: 'revoked' })] });
    expect((await lfsApi(`${lfs}/locks`, basic('eve', pat))).status).toBe(401);
  });

  it('stop working when they expire', async () => {
    const { user: fay } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'fay', password: 'fay-password-1', access: 'read' });
    const { token: pat, id } = await createPersonalToken(s.services.db, fay.id, 'short', 3600);
    expect((await lfsApi(`${lfs}/locks`, basic('fay', pat))).status).toBe(200);
    await s.services.db('personal_tokens').where({ id }).update({ expires_at: new Date(Date.now() - 1000).toISOString() });
    expect((await lfsApi(`${lfs}/locks`, basic('fay', pat))).status).toBe(401);
    expect(ok(await root.callTool({ name: 'dashboard_list_user_tokens', arguments: { userId: fay.id } })).tokens[0].state).toBe('expired');
  });
});

describe('passwords, sessions and Basic credentials', () => {
  it('a password change ends the remembered Basic credentials at once, in this process and from the CLI', { timeout: 120_000 }, async () => {
    const { user: gus } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'gus', password: 'gus-password-1', access: 'read' });
    const first = basic('gus', 'gus-password-1');
    expect((await lfsApi(`${lfs}/locks`, first)).status).toBe(200);
    expect((await lfsApi(`${lfs}/locks`, first)).status).toBe(200); // now remembered
    ok(await root.callTool({ name: 'dashboard_update_user', arguments: { userId: gus.id, password: 'gus-password-2' } }));
    expect((await lfsApi(`${lfs}/locks`, first)).status).toBe(401);

    const second = basic('gus', 'gus-password-2');
    expect((await lfsApi(`${lfs}/locks`, second)).status).toBe(200);
    expect((await lfsApi(`${lfs}/locks`, second)).status).toBe(200);
    expect((await pactum(['user', 'passwd', 'gus', '--password-stdin'], cli, 'gus-password-3\n')).code).toBe(0);
    await statusAfterOtherProcess(async () => (await lfsApi(`${lfs}/locks`, second)).status, 401);
    expect((await lfsApi(`${lfs}/locks`, basic('gus', 'gus-password-3'))).status).toBe(200);
  });

  it('a role change or a password change from the CLI ends the sessions', { timeout: 120_000 }, async () => {
    const hal = await user('hal', 'org_admin');
    const session = await login('hal', 'hal-password-1');
    expect((await mcpStatus(session)).status).toBe(200);
    ok(await root.callTool({ name: 'dashboard_update_user', arguments: { userId: hal.id, role: 'viewer' } }));
    expect((await mcpStatus(session)).status).toBe(401);

    const again = await login('hal', 'hal-password-1');
    expect((await mcpStatus(again)).status).toBe(200);
    expect((await pactum(['user', 'passwd', 'hal', '--password-stdin'], cli, 'hal-password-2\n')).code).toBe(0);
    await statusAfterOtherProcess(async () => (await mcpStatus(again)).status, 401);
  });
});

describe('transfer tokens', () => {
  it('an upload in flight stops with 403 when the grant is revoked between the batch and the PUT', { timeout: 120_000 }, async () => {
    await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'ivy', password: 'ivy-password-1', access: 'write' });
    const auth = basic('ivy', 'ivy-password-1');
    // The control: with the grant in place the same steps succeed.
    const ok1 = content(300);
    const a1 = await batch(auth, 'upload', ok1);
    expect((await fetch(a1.upload!.href, { method: 'PUT', headers: a1.upload!.header, body: ok1.bytes })).status).toBe(200);

    const c = content(300);
    const a = await batch(auth, 'upload', c);
    expect(await pactum(['repo', 'revoke', 'acme/site', 'ivy'], cli)).toMatchObject({ code: 0 });
    const put = await fetch(a.upload!.href, { method: 'PUT', headers: a.upload!.header, body: c.bytes });
    expect(put.status).toBe(403);
    expect(await put.json()).toMatchObject({ message: expect.stringMatching(/revoked/) });
    const verify = await fetch(a.verify!.href, { method: 'POST', headers: { ...a.verify!.header, 'content-type': GIT_LFS, accept: GIT_LFS }, body: JSON.stringify({ oid: c.oid, size: c.size }) });
    expect(verify.status).toBe(403);
    await verify.body?.cancel();
  });

  it('a download in flight stops when the user is deactivated (401) or loses its grant (403)', { timeout: 180_000 }, async () => {
    const { user: jo } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'jo', password: 'jo-password-1', access: 'write' });
    const auth = basic('jo', 'jo-password-1');
    const c = content(200);
    const up = await batch(auth, 'upload', c);
    expect((await fetch(up.upload!.href, { method: 'PUT', headers: up.upload!.header, body: c.bytes })).status).toBe(200);

    const down = await batch(auth, 'download', c);
    const get = () => fetch(down.download!.href, { headers: down.download!.header });
    const control = await get();
    expect(control.status).toBe(200);
    await control.body?.cancel();
    expect(await pactum(['repo', 'revoke', 'acme/site', 'jo'], cli)).toMatchObject({ code: 0 });
    const revoked = await get();
    expect(revoked.status).toBe(403);
    await revoked.body?.cancel();
    expect(await pactum(['repo', 'grant', 'acme/site', 'jo', 'read'], cli)).toMatchObject({ code: 0 });
    const regranted = await get();
    expect(regranted.status).toBe(200);
    await regranted.body?.cancel();

    ok(await root.callTool({ name: 'dashboard_update_user', arguments: { userId: jo.id, active: false } }));
    const deactivated = await get();
    expect(deactivated.status).toBe(401);
    expect(deactivated.headers.get('lfs-authenticate')).toMatch(/^Basic/);
    await deactivated.body?.cancel();
  });
});
