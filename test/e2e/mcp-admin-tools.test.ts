/**
 * The MCP endpoint end to end, through the MCP SDK's Client and Streamable HTTP transport: the
 * admin tools for a system admin, an org admin, a caller of another org and no credentials;
 * bearer tokens and the session cookie; progress; the audit trail; and no secret in any response
 * body or log line of the whole run.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { toolNames } from '../../generated/tools.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { insertOrg } from '../../src/db/users.js';

const PASSWORDS = { ada: 'ada-password-1234', grace: 'grace-password-5678', bob: 'bob-password-9012', newpass: 'a-brand-new-password' };
const SECRETS = { good: 'client-secret-GOOD-9f3a', bad: 'client-secret-BAD-7c1e', changed: 'client-secret-CHANGED-2b2b' };

let s: TestServer;
let system: Client; // admin.system, in org acme
let acmeAdmin: Client; // org_admin of acme
let globexAdmin: Client; // org_admin of globex
let acmeMember: Client; // member of acme
let acmeId: string;
let globexId: string;
const users: Record<string, string> = {};

// A stand-in for a connected service: OAuth client credentials, then a health endpoint.
let fake: Server;
let fakeUrl: string;
let healthStatus = 200;
beforeAll(async () => {
  fake = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url === '/api/v1/oauth/token' && req.method === 'POST') {
        const b = JSON.parse(body);
        if (b.grant_type === 'client_credentials' && b.client_id === 'pactum' && b.client_secret === SECRETS.good) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'tok-123', token_type: 'Bearer' }));
        } else res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `bad client ${b.client_secret}` }));
      } else if (req.url === '/api/v1/health') {
        res.writeHead(req.headers.authorization === 'Bearer tok-123' ? healthStatus : 401).end();
      } else res.writeHead(404).end();
    });
  }).listen(0, '127.0.0.1');
  await new Promise((r) => fake.once('listening', r));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;

  s = await startTestServer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  // A service principal's token is bounded by an org that exists: root's is acme's.
  acmeId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  const root = await mcpClient(s.url, bearer(await s.token({ sub: 'svc_root', orgId: acmeId, perms: ['admin.system'] })));
  globexId = ok(await root.callTool({ name: 'dashboard_create_org', arguments: { name: 'Globex', slug: 'globex' } })).id;
  for (const [username, role, orgId, password] of [
    ['ada', 'system_admin', acmeId, PASSWORDS.ada],
    ['grace', 'org_admin', acmeId, PASSWORDS.grace],
    ['bob', 'org_admin', globexId, PASSWORDS.bob],
  ] as const) {
    users[username] = ok(await root.callTool({ name: 'dashboard_create_user', arguments: { username, password, role, targetOrgId: orgId } })).id;
  }
  await root.close();
  const tokenOf = (name: string, role: string, orgId: string) => s.token({ sub: users[name], orgId, role, perms: [] });
  system = await mcpClient(s.url, bearer(await tokenOf('ada', 'system_admin', acmeId)));
  acmeAdmin = await mcpClient(s.url, bearer(await tokenOf('grace', 'org_admin', acmeId)));
  globexAdmin = await mcpClient(s.url, bearer(await tokenOf('bob', 'org_admin', globexId)));
  acmeMember = await mcpClient(s.url, bearer(await s.token({ sub: 'svc_member', orgId: acmeId, role: 'member', perms: [] })));
});

afterAll(async () => {
  for (const c of [system, acmeAdmin, globexAdmin, acmeMember]) await c?.close();
  await s.stop();
  fake.close();
});
afterEach(() => s.expectConformant());

describe('transport and discovery', () => {
  it('initializes and lists tools as JSON Schema, only those the caller may call', async () => {
    expect(system.getServerVersion()).toMatchObject({ name: 'pactum-dashboard', version: '3.4.0' });
    const all = (await system.listTools()).tools;
    expect(all.map((t) => t.name).sort()).toEqual([...toolNames].sort());
    for (const t of all) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(t.annotations).toHaveProperty('readOnlyHint');
    }
    const memberTools = (await acmeMember.listTools()).tools.map((t) => t.name);
    expect(memberTools).toContain('dashboard_get_report');
    expect(memberTools).not.toContain('dashboard_create_org');
    expect(memberTools).not.toContain('dashboard_create_user');
    expect(memberTools).not.toContain('dashboard_create_service_connection');
  });

  it('refuses a client without credentials with 401', async () => {
    await expect(mcpClient(s.url, {})).rejects.toThrow(/401|Unauthorized/);
  });

  it('enforces every tool\'s permission in one place: a caller with no permission can call nothing', async () => {
    const nobody = await mcpClient(s.url, bearer(await s.token({ sub: 'svc_nobody', orgId: acmeId, perms: [] })));
    expect((await nobody.listTools()).tools).toEqual([]);
    for (const name of toolNames) {
      const f = failure(await nobody.callTool({ name, arguments: {} }));
      expect(f.error, name).toBe('forbidden');
    }
    await nobody.close();
  });

  it('answers an unknown tool with JSON-RPC -32602 and bad arguments with a readable error result', async () => {
    await expect(system.callTool({ name: 'dashboard_does_not_exist', arguments: {} })).rejects.toThrow(/-32602/);
    const f = failure(await system.callTool({ name: 'dashboard_create_org', arguments: { name: '', slug: 'Not A Slug' } }));
    expect(f.error).toBe('invalid_arguments');
    expect(f.message).toMatch(/name/);
    expect(f.message).toMatch(/slug/);
  });

  it('streams progress notifications when the caller asks for them', async () => {
    ok(await acmeAdmin.callTool({ name: 'dashboard_create_service_connection', arguments: { serviceId: 'branding', url: fakeUrl, clientId: 'pactum', clientSecret: SECRETS.good } }));
    const progress: number[] = [];
    const result = await acmeAdmin.callTool(
      { name: 'dashboard_test_service_connection', arguments: { serviceId: 'branding' } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(ok(result)).toMatchObject({ ok: true, serviceId: 'branding' });
    expect(progress).toEqual([0, 2]);
  });
});

describe('orgs', () => {
  it('lets only admin.system create orgs, and refuses a taken slug', async () => {
    expect(failure(await acmeAdmin.callTool({ name: 'dashboard_create_org', arguments: { name: 'X', slug: 'x-corp' } })).error).toBe('forbidden');
    const dup = failure(await system.callTool({ name: 'dashboard_create_org', arguments: { name: 'Acme again', slug: 'acme' } }));
    expect(dup).toMatchObject({ error: 'conflict' });
    expect(dup.message).toMatch(/acme/);
  });

  it('reads any org for admin.system, only its own for admin.org', async () => {
    expect(ok(await system.callTool({ name: 'dashboard_get_org', arguments: { targetOrgId: globexId } }))).toMatchObject({ slug: 'globex' });
    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_get_org', arguments: { targetOrgId: acmeId } }))).toMatchObject({ slug: 'acme', name: 'Acme' });
    expect(failure(await acmeAdmin.callTool({ name: 'dashboard_get_org', arguments: { targetOrgId: globexId } })).error).toBe('forbidden');
    expect(failure(await system.callTool({ name: 'dashboard_get_org', arguments: { targetOrgId: 'org_nope' } })).error).toBe('not_found');
  });

  it('lists every org for admin.system and only its own for others, page by page', async () => {
    const slugs: string[] = [];
    let cursor: string | undefined;
    do {
      const page = ok(await system.callTool({ name: 'dashboard_list_orgs', arguments: { limit: 1, ...(cursor ? { cursor } : {}) } }));
      expect(page.orgs.length).toBeLessThanOrEqual(1);
      slugs.push(...page.orgs.map((o: { slug: string }) => o.slug));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(slugs).toEqual(['acme', 'globex']);
    expect(ok(await globexAdmin.callTool({ name: 'dashboard_list_orgs', arguments: {} })).orgs.map((o: { slug: string }) => o.slug)).toEqual(['globex']);
    expect(failure(await system.callTool({ name: 'dashboard_list_orgs', arguments: { cursor: 'bogus!' } })).error).toBe('invalid_arguments');
  });

  it('updates its own org, not another', async () => {
    expect(ok(await globexAdmin.callTool({ name: 'dashboard_update_org', arguments: { targetOrgId: globexId, name: 'Globex Corp' } }))).toMatchObject({ name: 'Globex Corp', slug: 'globex' });
    expect(failure(await globexAdmin.callTool({ name: 'dashboard_update_org', arguments: { targetOrgId: acmeId, name: 'Taken over' } })).error).toBe('forbidden');
    expect(failure(await globexAdmin.callTool({ name: 'dashboard_update_org', arguments: { targetOrgId: globexId } })).error).toBe('invalid_arguments');
    expect(failure(await globexAdmin.callTool({ name: 'dashboard_update_org', arguments: { targetOrgId: globexId, slug: 'acme' } })).error).toBe('conflict');
  });
});

describe('users', () => {
  let memberId: string;
  it('creates users in the caller\'s org, never returning the password or its hash', async () => {
    const created = ok(await acmeAdmin.callTool({ name: 'dashboard_create_user', arguments: { username: 'mallory', password: 'mallory-password', role: 'member' } }));
    memberId = created.id;
    expect(created).toMatchObject({ username: 'mallory', role: 'member', orgId: acmeId, active: true });
    expect(Object.keys(created).sort()).toEqual(['active', 'createdAt', 'id', 'lastLoginAt', 'orgId', 'permissions', 'role', 'updatedAt', 'username']);
  });

  it('refuses short passwords, taken usernames, and roles above the caller', async () => {
    expect(failure(await acmeAdmin.callTool({ name: 'dashboard_create_user', arguments: { username: 'eve', password: 'short', role: 'member' } })).error).toBe('invalid_arguments');
    expect(failure(await acmeAdmin.callTool({ name: 'dashboard_create_user', arguments: { username: 'mallory', password: 'long enough pw', role: 'member' } })).error).toBe('conflict');
    expect(failure(await acmeAdmin.callTool({ name: 'dashboard_create_user', arguments: { username: 'eve', password: 'long enough pw', role: 'system_admin' } })).error).toBe('forbidden');
    expect(failure(await acmeAdmin.callTool({ name: 'dashboard_create_user', arguments: { username: 'eve', password: 'long enough pw', role: 'member', targetOrgId: globexId } })).error).toBe('forbidden');
    expect(failure(await acmeMember.callTool({ name: 'dashboard_create_user', arguments: { username: 'eve', password: 'long enough pw', role: 'viewer' } })).error).toBe('forbidden');
  });

  it('reads and lists users of its own org only', async () => {
    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_get_user', arguments: { userId: memberId } }))).toMatchObject({ username: 'mallory' });
    expect(failure(await globexAdmin.callTool({ name: 'dashboard_get_user', arguments: { userId: memberId } })).error).toBe('not_found');
    const list = ok(await acmeAdmin.callTool({ name: 'dashboard_list_users', arguments: { role: 'member' } }));
    expect(list.users.map((u: { username: string }) => u.username)).toEqual(['mallory']);
    expect(ok(await system.callTool({ name: 'dashboard_list_users', arguments: { targetOrgId: globexId } })).users.map((u: { username: string }) => u.username)).toEqual(['bob']);
  });

  it('changes role and state, and a reset password or deactivation ends the user\'s sessions', async () => {
    const login = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'mallory', password: 'mallory-password' }) });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const viaCookie = await mcpClient(s.url, { cookie });
    expect(failure(await viaCookie.callTool({ name: 'dashboard_coordinated_pr_status', arguments: { id: 'cpr_none' } })).error).toBe('not_found');
    await viaCookie.close();

    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_update_user', arguments: { userId: memberId, role: 'viewer' } }))).toMatchObject({ role: 'viewer', permissions: ['reports.view', 'branding.view', 'compliance.view'] });
    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_update_user', arguments: { userId: memberId, password: PASSWORDS.newpass } }))).toMatchObject({ username: 'mallory' });
    await expect(mcpClient(s.url, { cookie })).rejects.toThrow(/401/);
    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_update_user', arguments: { userId: memberId, active: false } }))).toMatchObject({ active: false });
    const refused = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'mallory', password: PASSWORDS.newpass }) });
    expect(refused.status).toBe(401);
    await refused.body?.cancel();
    // An org admin cannot demote the system admin of its org.
    expect(failure(await acmeAdmin.callTool({ name: 'dashboard_update_user', arguments: { userId: users.ada, active: false } })).error).toBe('forbidden');
  });
});

describe('service connections', () => {
  it('creates (upserts) with a redacted preview, reads hasSecret, lists per org', async () => {
    const created = ok(await acmeAdmin.callTool({ name: 'dashboard_create_service_connection', arguments: { serviceId: 'compliance', url: fakeUrl, clientId: 'pactum', clientSecret: SECRETS.bad } }));
    expect(created).toMatchObject({ serviceId: 'compliance', url: fakeUrl, clientId: 'pactum', hasSecret: true, secretPreview: 'xxxx7c1e' });
    const replaced = ok(await acmeAdmin.callTool({ name: 'dashboard_create_service_connection', arguments: { serviceId: 'compliance', url: fakeUrl, clientId: 'pactum', clientSecret: SECRETS.good } }));
    expect(replaced.secretPreview).toBe('xxxx9f3a');
    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_get_service_connection', arguments: { serviceId: 'compliance' } }))).toMatchObject({ hasSecret: true, secretPreview: 'xxxx9f3a' });
    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_list_service_connections', arguments: {} })).connections.map((c: { serviceId: string }) => c.serviceId)).toEqual(['branding', 'compliance']);
    expect(ok(await globexAdmin.callTool({ name: 'dashboard_list_service_connections', arguments: {} })).connections).toEqual([]);
    expect(failure(await globexAdmin.callTool({ name: 'dashboard_get_service_connection', arguments: { serviceId: 'compliance' } })).error).toBe('not_found');
  });

  it('tests a connection: ok with latency, or the failing step without the secret', async () => {
    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_test_service_connection', arguments: { serviceId: 'compliance' } }))).toMatchObject({ ok: true, latencyMs: expect.any(Number) });
    ok(await acmeAdmin.callTool({ name: 'dashboard_update_service_connection', arguments: { serviceId: 'compliance', clientSecret: SECRETS.bad } }));
    const oauth = ok(await acmeAdmin.callTool({ name: 'dashboard_test_service_connection', arguments: { serviceId: 'compliance' } }));
    expect(oauth).toMatchObject({ ok: false, step: 'oauth' });
    expect(oauth.error).toMatch(/401/);
    ok(await acmeAdmin.callTool({ name: 'dashboard_update_service_connection', arguments: { serviceId: 'compliance', clientSecret: SECRETS.good } }));
    healthStatus = 503;
    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_test_service_connection', arguments: { serviceId: 'compliance' } }))).toMatchObject({ ok: false, step: 'health' });
    healthStatus = 200;
    ok(await acmeAdmin.callTool({ name: 'dashboard_update_service_connection', arguments: { serviceId: 'compliance', url: 'http://127.0.0.1:1', clientSecret: SECRETS.good } }));
    expect(ok(await acmeAdmin.callTool({ name: 'dashboard_test_service_connection', arguments: { serviceId: 'compliance' } }))).toMatchObject({ ok: false, step: 'oauth' });
    expect(failure(await acmeAdmin.callTool({ name: 'dashboard_update_service_connection', arguments: { serviceId: 'llm', clientId: 'x' } })).error).toBe('not_found');
    expect(failure(await acmeMember.callTool({ name: 'dashboard_get_service_connection', arguments: { serviceId: 'compliance' } })).error).toBe('forbidden');
  });
});

describe('moving a service connection', () => {
  const update = (args: Record<string, string>) => acmeAdmin.callTool({ name: 'dashboard_update_service_connection', arguments: { serviceId: 'branding', ...args } });
  it('needs the client secret again for another origin; a new path on the same origin keeps it', async () => {
    ok(await acmeAdmin.callTool({ name: 'dashboard_create_service_connection', arguments: { serviceId: 'branding', url: 'https://brand.example.com', clientId: 'pactum', clientSecret: SECRETS.good } }));
    for (const url of ['https://attacker.example', 'http://brand.example.com', 'https://brand.example.com:8443']) {
      const refused = failure(await update({ url }));
      expect(refused.error, url).toBe('invalid_arguments');
      expect(refused.message).toMatch(/clientSecret/);
      expect(JSON.stringify(refused)).not.toContain(SECRETS.good);
    }
    expect((await s.services.connections.credentials(acmeId, 'branding'))?.url).toBe('https://brand.example.com');
    expect(ok(await update({ url: 'https://brand.example.com/v2' }))).toMatchObject({ url: 'https://brand.example.com/v2', hasSecret: true, secretPreview: 'xxxx9f3a' });
    expect(ok(await update({ url: 'https://brand2.example.com', clientSecret: SECRETS.changed }))).toMatchObject({ url: 'https://brand2.example.com', secretPreview: 'xxxx2b2b' });
    expect((await s.services.connections.credentials(acmeId, 'branding'))?.clientSecret).toBe(SECRETS.changed);
  });
});

describe('coordinated PRs', () => {
  it('reads a coordinated PR and its legs within the caller\'s org; admin.system reads any', async () => {
    const db = s.services.db;
    const now = new Date().toISOString();
    await db('sites').insert({ id: 'site_a', org_id: acmeId, url: 'https://www.acme.example/', created_at: now });
    await db('coordinated_prs').insert({ id: 'cpr_a', org_id: acmeId, team_id: null, created_by: users.grace, status: 'opening', summary: 'Fix 1.1.1', wcag_criterion: '1.1.1', created_at: now });
    await db('coordinated_pr_legs').insert({ id: 'leg_a', coordinated_pr_id: 'cpr_a', site_id: 'site_a', host_pr_url: null, host_pr_state: null, last_error: null, leg_status: 'queued', approval_status: 'pending' });
    const read = ok(await acmeAdmin.callTool({ name: 'dashboard_coordinated_pr_status', arguments: { id: 'cpr_a' } }));
    expect(read.pr).toMatchObject({ id: 'cpr_a', orgId: acmeId, status: 'opening' });
    expect(read.legs).toEqual([expect.objectContaining({ id: 'leg_a', siteId: 'site_a', siteUrl: 'https://www.acme.example/', legStatus: 'queued' })]);
    expect(failure(await globexAdmin.callTool({ name: 'dashboard_coordinated_pr_status', arguments: { id: 'cpr_a' } })).error).toBe('not_found'); // like a missing one
    expect(ok(await system.callTool({ name: 'dashboard_coordinated_pr_status', arguments: { id: 'cpr_a' } })).pr.id).toBe('cpr_a');
    expect(failure(await system.callTool({ name: 'dashboard_coordinated_pr_status', arguments: { id: 'cpr_missing' } })).error).toBe('not_found');
  });
});

describe('sessions and audit', () => {
  it('signs in with the session cookie, and logout revokes it at once', async () => {
    const login = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'grace', password: PASSWORDS.grace }) });
    expect(login.status).toBe(200);
    const setCookie = login.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(await login.json()).toMatchObject({ username: 'grace', role: 'org_admin', orgId: acmeId });
    const cookie = setCookie.split(';')[0]!;
    const viaCookie = await mcpClient(s.url, { cookie });
    expect(ok(await viaCookie.callTool({ name: 'dashboard_get_org', arguments: { targetOrgId: acmeId } })).slug).toBe('acme');
    await viaCookie.close();
    const out = await fetch(`${s.url}/api/v1/auth/logout`, { method: 'POST', headers: { cookie } });
    expect(out.status).toBe(204);
    await expect(mcpClient(s.url, { cookie })).rejects.toThrow(/401/);
    const wrong = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'grace', password: 'not her password' }) });
    expect(wrong.status).toBe(401);
    await wrong.body?.cancel();
  });

  it('writes every tools/call to the audit log, secrets redacted', async () => {
    const rows = await s.services.db('audit_log').orderBy('at');
    expect(rows.length).toBeGreaterThan(40);
    const create = rows.find((r) => r.tool === 'dashboard_create_service_connection' && r.outcome === 'ok');
    expect(JSON.parse(create.arguments)).toMatchObject({ serviceId: expect.any(String), clientSecret: '[redacted]' });
    expect(rows.some((r) => r.outcome === 'forbidden' && r.subject === 'svc_nobody')).toBe(true);
    for (const r of rows) expect(r.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('never lets a password, a password hash or a client secret reach a response or a log line', async () => {
    const hashes = (await s.services.db('users').select('password_hash')).map((r) => r.password_hash as string);
    const ciphertexts = (await s.services.db('service_connections').select('secret_ciphertext')).map((r) => r.secret_ciphertext as string);
    const forbidden = [...Object.values(PASSWORDS), 'mallory-password', ...Object.values(SECRETS), ...hashes, ...ciphertexts, 'tok-123'];
    expect(s.bodies.length).toBeGreaterThan(50);
    expect(s.logLines.length).toBeGreaterThan(50);
    for (const text of [...s.bodies, ...s.logLines]) for (const secret of forbidden) expect(text).not.toContain(secret);
  });
});
