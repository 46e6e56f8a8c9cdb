/**
 * Credentials end when they should: a bearer JWT carries its user's credential version, so a
 * password reset (CLI or MCP), a deactivation and a reactivation end it; deactivation revokes the
 * user's personal tokens and sessions, so reactivating brings none of them back. A role change
 * keeps bearer tokens (worth the new role). Changes come from this process (MCP tools) and from
 * another one writing the database (the CLI); in the pair topology consecutive requests reach
 * both instances.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PAIR_SECRETS, startTestServer, topology, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { pactum } from '../helpers/cli.js';
import { backendEnv } from '../helpers/backends.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { hashPassword } from '../../src/auth/passwords.js';
import type { Role } from '../../src/domain/access/permissions.js';
import { createPersonalToken } from '../../src/db/repos.js';
import { insertOrg, insertUser } from '../../src/db/users.js';
import { migrate, openDb } from '../../src/db/knex.js';
import { migrationSource } from '../../src/db/migrations/index.js';

const GIT_LFS = 'application/vnd.git-lfs+json';
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const CHANGED = /credentials of this token's user were changed/;

let s: TestServer;
let cli: Record<string, string>;
let acmeId: string;
let root: Awaited<ReturnType<typeof mcpClient>>;
let lfs: string;

beforeAll(async () => {
  s = await startTestServer();
  // The CLI signs with the servers' key: DATA_DIR's, or in the pair topology the shared JWT_SECRET.
  cli = { DATA_DIR: s.dataDir, ...(await backendEnv(s.dataDir)), PUBLIC_URL: s.url, ...(topology === 'pair' ? PAIR_SECRETS : {}) };
  acmeId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  root = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_root', orgId: acmeId, perms: ['admin.system'] })));
  lfs = `${s.url}/acme/site.git/info/lfs`;
});
afterAll(async () => {
  await root?.close();
  await s?.stop();
});
afterEach(() => s.expectConformant());

async function user(username: string, role: Role = 'member') {
  return insertUser(s.services.db, { orgId: acmeId, username, passwordHash: await hashPassword(`${username}-password-1`), role });
}

/** A token as `pactum token --user` mints it: with the user's credential version now. */
async function currentToken(userId: string) {
  const row = await s.services.db('users').where({ id: userId }).first();
  return s.services.tokens.sign({ sub: row.id, orgId: row.org_id, role: row.role, credentialVersion: Number(row.credential_version) }, 600);
}

/** The status and body of an MCP tools/list with this bearer token or cookie. */
async function mcpStatus(auth: { authorization: string } | { cookie: string }) {
  const res = await fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { ...auth, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  return { status: res.status, text: await res.text(), challenge: res.headers.get('www-authenticate') };
}

/** Twice, so that in the pair topology both instances answer. */
async function bothAnswer(auth: { authorization: string } | { cookie: string }) {
  return [(await mcpStatus(auth)).status, (await mcpStatus(auth)).status];
}

const locks = (auth: string) => fetch(`${lfs}/locks`, { headers: { accept: GIT_LFS, authorization: auth } }).then(async (r) => (await r.body?.cancel(), r.status));

const update = (args: Record<string, unknown>) => root.callTool({ name: 'dashboard_update_user', arguments: args }).then(ok);

async function login(username: string) {
  const res = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: `${username}-password-1` }) });
  expect(res.status).toBe(200);
  await res.body?.cancel();
  return { cookie: /session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')![0] };
}

describe('bearer JWTs end with their user\'s credentials', () => {
  it('`pactum token --user` binds the token: `pactum user passwd` ends it with 401, and a new token works', { timeout: 120_000 }, async () => {
    await user('ann');
    const minted = await pactum(['token', '--user', 'ann'], cli);
    expect(minted.code, minted.stderr).toBe(0);
    const token = bearer(minted.stdout.trim());
    const claims = JSON.parse(Buffer.from(minted.stdout.trim().split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims.credentialVersion).toBe(0);
    expect(await bothAnswer(token)).toEqual([200, 200]);

    expect((await pactum(['user', 'passwd', 'ann', '--password-stdin'], cli, 'ann-password-2\n')).code).toBe(0);
    const refused = await mcpStatus(token);
    expect(refused).toMatchObject({ status: 401, text: expect.stringMatching(CHANGED), challenge: expect.stringMatching(/error="invalid_token"/) });
    // The refusal says that the credentials changed, and no more (not what changed, nor the versions).
    expect(refused.text).not.toMatch(/password|version|deactivat/i);
    expect((await mcpStatus(token)).status).toBe(401);

    const fresh = await pactum(['token', '--user', 'ann'], cli);
    expect(await bothAnswer(bearer(fresh.stdout.trim()))).toEqual([200, 200]);
  });

  it('a password reset through dashboard_update_user ends the user\'s tokens on every instance', async () => {
    const ben = await user('ben');
    const token = bearer(await currentToken(ben.id));
    expect(await bothAnswer(token)).toEqual([200, 200]);
    await update({ userId: ben.id, password: 'ben-password-2' });
    expect(await bothAnswer(token)).toEqual([401, 401]);
  });

  it('deactivation ends tokens, and reactivation does not bring them back', async () => {
    const cy = await user('cy');
    const token = bearer(await currentToken(cy.id));
    expect(await bothAnswer(token)).toEqual([200, 200]);
    await update({ userId: cy.id, active: false });
    expect(await mcpStatus(token)).toMatchObject({ status: 401, text: expect.stringMatching(/deactivated/) });
    await update({ userId: cy.id, active: true });
    expect(await mcpStatus(token)).toMatchObject({ status: 401, text: expect.stringMatching(CHANGED) });
    expect(await bothAnswer(bearer(await currentToken(cy.id)))).toEqual([200, 200]);
  });

  it('a role change keeps the token (worth the new role), and so does switching on a user that is on', async () => {
    const dee = await user('dee', 'org_admin');
    const token = await currentToken(dee.id);
    await update({ userId: dee.id, role: 'viewer' });
    await update({ userId: dee.id, active: true });
    const c = await mcpClient(s.url, bearer(token));
    const tools = (await c.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('dashboard_list_reports');
    expect(tools).not.toContain('dashboard_update_user');
    await c.close();
  });

  it('a token minted before tokens carried the version stands until the user\'s version first moves', async () => {
    const eve = await user('eve');
    const old = bearer(await s.services.tokens.sign({ sub: eve.id, orgId: acmeId, role: 'member' }, 600));
    expect(await bothAnswer(old)).toEqual([200, 200]);
    await update({ userId: eve.id, password: 'eve-password-2' });
    expect(await mcpStatus(old)).toMatchObject({ status: 401, text: expect.stringMatching(CHANGED) });
  });

  it('a token naming another version than the user\'s is refused; a service principal has none and keeps working', async () => {
    const fay = await user('fay');
    const ahead = bearer(await s.services.tokens.sign({ sub: fay.id, orgId: acmeId, credentialVersion: 7 }, 600));
    expect(await mcpStatus(ahead)).toMatchObject({ status: 401, text: expect.stringMatching(CHANGED) });
    const svc = bearer(await s.services.tokens.sign({ sub: 'svc_ci', orgId: acmeId, scopes: ['reports.view'] }, 600));
    expect(await bothAnswer(svc)).toEqual([200, 200]);
    // A version that is not a count is not a token we signed for anyone.
    const odd = bearer(await s.services.tokens.sign({ sub: fay.id, orgId: acmeId, credentialVersion: -1 }, 600));
    expect(await mcpStatus(odd)).toMatchObject({ status: 401, text: expect.stringMatching(/invalid credentialVersion/) });
  });
});

describe('reactivation revives no credential issued before deactivation', () => {
  it('personal tokens stay revoked (HTTP Basic on the object APIs), sessions stay ended; new ones work', async () => {
    const { user: gus } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'gus', password: 'gus-password-1', access: 'read' });
    const { token: pat, id } = await createPersonalToken(s.services.db, gus.id, 'laptop');
    const session = await login('gus');
    expect([await locks(basic('gus', pat)), await locks(basic('gus', pat))]).toEqual([200, 200]);
    expect((await mcpStatus(session)).status).toBe(200);

    await update({ userId: gus.id, active: false });
    expect(await locks(basic('gus', pat))).toBe(401);
    await update({ userId: gus.id, active: true });
    expect([await locks(basic('gus', pat)), await locks(basic('gus', pat))]).toEqual([401, 401]);
    expect((await mcpStatus(session)).status).toBe(401);
    const listed = ok(await root.callTool({ name: 'dashboard_list_user_tokens', arguments: { userId: gus.id } }));
    expect(listed.tokens).toEqual([expect.objectContaining({ id, state: 'revoked' })]);

    // The password is the user's own and was never revoked: it works again, as do new tokens.
    expect(await locks(basic('gus', 'gus-password-1'))).toBe(200);
    const { token: fresh } = await createPersonalToken(s.services.db, gus.id, 'laptop-2');
    expect([await locks(basic('gus', fresh)), await locks(basic('gus', fresh))]).toEqual([200, 200]);
    expect((await mcpStatus(await login('gus'))).status).toBe(200);
  });

  it('the CLI gives a deactivated user no personal token', { timeout: 120_000 }, async () => {
    const hal = await user('hal');
    await update({ userId: hal.id, active: false });
    expect(await pactum(['user', 'token', 'hal'], cli)).toMatchObject({ code: 2, stderr: expect.stringMatching(/hal is deactivated/) });
  });
});

describe('an upgrade', () => {
  it('revokes the live personal tokens of users who were deactivated before deactivation revoked them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pactum-upgrade-'));
    const db = openDb({ databaseUrl: (await backendEnv(dataDir)).DATABASE_URL ?? null, dataDir });
    try {
      await migrate(db);
      // Back to the schema before this change, with a user deactivated then and one still active.
      await db.migrate.down({ migrationSource, name: '014_partial_reservations' });
      const org = await insertOrg(db, { name: 'Old', slug: 'old' });
      const off = await insertUser(db, { orgId: org.id, username: 'off', passwordHash: 'x', role: 'member' });
      const on = await insertUser(db, { orgId: org.id, username: 'on', passwordHash: 'x', role: 'member' });
      const offToken = await createPersonalToken(db, off.id, 'old');
      const onToken = await createPersonalToken(db, on.id, 'old');
      await db('users').where({ id: off.id }).update({ active: false });
      await migrate(db);
      expect((await db('personal_tokens').where({ id: offToken.id }).first()).revoked_at).toEqual(expect.any(String));
      expect((await db('personal_tokens').where({ id: onToken.id }).first()).revoked_at).toBeNull();
    } finally {
      await db.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
