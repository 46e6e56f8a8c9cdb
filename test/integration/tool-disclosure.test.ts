/**
 * What the MCP tools give away beyond their answer. Another org's scan, user, coordinated PR or
 * site is answered exactly as a missing one (same code, same message but for the id asked for); a
 * system admin's tokens are not an org admin's to read; a taken username or slug names no holder;
 * and a service URL never carries credentials: refused on create and update, never echoed for
 * one stored before, never in the audit trail or the log.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../src/db/repos.js';
import { insertOrg } from '../../src/db/users.js';
import { newId } from '../../src/ground/ids.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let acmeId: string;
let globexId: string;
/** acme's org admin, acme's system admin, globex's org admin. */
let acme: Client;
let root: Client;
let globex: Client;
/** Globex's things that acme must not be able to tell from missing ones. */
const g = { userId: '', scanId: '', siteId: '', prId: '' };
let rootUserId = '';
let memberId = '';

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

beforeAll(async () => {
  s = await startTestServer();
  acmeId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  globexId = (await insertOrg(s.services.db, { name: 'Globex', slug: 'globex' })).id;
  rootUserId = 'usr_disclosure_root';
  acme = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_disclosure_acme_admin', orgId: acmeId, role: 'org_admin' })));
  root = await mcpClient(s.url, bearer(await s.token({ sub: rootUserId, orgId: acmeId, role: 'system_admin' })));
  globex = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_disclosure_globex_admin', orgId: globexId, role: 'org_admin' })));

  g.userId = ok(await call(globex, 'dashboard_create_user', { username: 'globex-grace', password: 'grace-password-1', role: 'member' })).id;
  memberId = ok(await call(acme, 'dashboard_create_user', { username: 'acme-ann', password: 'ann-password-12', role: 'member' })).id;
  const now = new Date().toISOString();
  g.siteId = newId('site');
  g.scanId = newId('scn');
  g.prId = newId('cpr');
  await s.services.db('sites').insert({ id: g.siteId, org_id: globexId, url: 'https://globex.example/', created_at: now });
  await s.services.db('scans').insert({
    id: g.scanId, org_id: globexId, site_id: g.siteId, site_url: 'https://globex.example/', standard: 'WCAG2AA', scan_mode: 'single', max_pages: 1, concurrency: 1,
    jurisdictions: '[]', status: 'completed', pages_scanned: 1, total_pages: 1, total_issues: 0, summary: null, error: null, attempts: 1, created_at: now, started_at: now, finished_at: now, last_updated: now,
  });
  await s.services.db('coordinated_prs').insert({ id: g.prId, org_id: globexId, team_id: null, created_by: 'usr_disclosure_globex_admin', status: 'draft', summary: 'Globex plan', wcag_criterion: '1.1.1', created_at: now });
  await createPersonalToken(s.services.db, rootUserId, 'root-laptop');
  await createPersonalToken(s.services.db, memberId, 'ann-laptop');
});
afterAll(async () => {
  await Promise.all([acme, root, globex].map((c) => c?.close()));
  await s?.stop();
});
afterEach(() => s.expectConformant());

/** The refusal with the id it was asked about replaced, so two ids' answers can be compared. */
const shape = (f: { error: string; message: string }, id: string) => ({ error: f.error, message: f.message.split(id).join('<id>') });

describe("another org's things look missing", () => {
  // [tool, arguments for an id, the id of globex's thing (filled in beforeAll), a missing id of the same kind]
  const cases: [string, (id: string) => Record<string, unknown>, () => string, string][] = [
    ['dashboard_coordinated_pr_status', (id) => ({ id }), () => g.prId, newId('cpr')],
    ['dashboard_get_scan_progress', (scanId) => ({ scanId }), () => g.scanId, newId('scn')],
    ['dashboard_get_report', (scanId) => ({ scanId }), () => g.scanId, newId('scn')],
    ['dashboard_query_issues', (scanId) => ({ scanId }), () => g.scanId, newId('scn')],
    ['dashboard_get_brand_score', (scanId) => ({ scanId }), () => g.scanId, newId('scn')],
    ['dashboard_get_user', (userId) => ({ userId }), () => g.userId, newId('usr')],
    ['dashboard_update_user', (userId) => ({ userId, active: false }), () => g.userId, newId('usr')],
    ['dashboard_list_user_tokens', (userId) => ({ userId }), () => g.userId, newId('usr')],
    ['dashboard_revoke_user_token', (userId) => ({ userId, token: 'laptop' }), () => g.userId, newId('usr')],
    ['dashboard_queue_bulk_fix', (siteId) => ({ wcagCriterion: '1.1.1', siteIds: [siteId] }), () => g.siteId, newId('site')],
    ['dashboard_get_org', (targetOrgId) => ({ targetOrgId }), () => globexId, newId('org')],
  ];

  it.each(cases)('%s: the same answer for globex\'s id and a missing one', async (tool, args, foreignId, missingId) => {
    const foreign = failure(await call(acme, tool, args(foreignId())));
    const missing = failure(await call(acme, tool, args(missingId)));
    expect(shape(foreign, foreignId())).toEqual(shape(missing, missingId));
    expect(foreign.message).not.toMatch(/another org|belongs to|globex/i);
  });

  it("lets a system admin read another org's coordinated PR (the refusal above is scope, not a broken read)", async () => {
    expect(ok(await call(root, 'dashboard_coordinated_pr_status', { id: g.prId })).pr).toMatchObject({ id: g.prId, orgId: globexId });
  });
});

describe('personal tokens of a user the caller may not manage', () => {
  it("are not an org admin's to list or revoke when they are a system admin's, answered as for a missing user", async () => {
    const missingId = newId('usr');
    for (const [tool, args] of [['dashboard_list_user_tokens', {}], ['dashboard_revoke_user_token', { token: 'root-laptop' }]] as const) {
      const admins = failure(await call(acme, tool, { userId: rootUserId, ...args }));
      const missing = failure(await call(acme, tool, { userId: missingId, ...args }));
      expect(shape(admins, rootUserId)).toEqual(shape(missing, missingId));
      expect(JSON.stringify(admins)).not.toContain('root-laptop');
    }
    // The token is still live: nothing was revoked on the way.
    expect(ok(await call(root, 'dashboard_list_user_tokens', { userId: rootUserId })).tokens).toEqual([expect.objectContaining({ name: 'root-laptop', state: 'live' })]);
  });

  it("are still the org admin's for a member of its org", async () => {
    expect(ok(await call(acme, 'dashboard_list_user_tokens', { userId: memberId })).tokens).toEqual([expect.objectContaining({ name: 'ann-laptop' })]);
  });
});

describe('taken names', () => {
  it('answer a username taken in another org exactly as one taken in the own org', async () => {
    const elsewhere = failure(await call(acme, 'dashboard_create_user', { username: 'globex-grace', password: 'intruder-pass-1', role: 'member' }));
    const here = failure(await call(acme, 'dashboard_create_user', { username: 'acme-ann', password: 'intruder-pass-1', role: 'member' }));
    expect(shape(elsewhere, 'globex-grace')).toEqual(shape(here, 'acme-ann'));
    expect(elsewhere.error).toBe('conflict');
    expect(elsewhere.message).not.toMatch(new RegExp(`${globexId}|(?<![\\w-])globex(?![\\w-])|Globex|another org`));
  });
});

describe('service URLs with credentials', () => {
  const PASSWORD = 'url-pass-CANARY-71c2';
  const withCredentials = [`https://svc-user:${PASSWORD}@svc.example`, `https://${PASSWORD}@svc.example/base`, `https://:${PASSWORD}@svc.example`, `http://svc-user:${PASSWORD}@svc.example:8443/api`];

  it.each(withCredentials)('%s is refused on create, pointing at clientSecret, and nothing is stored', async (url) => {
    const refused = failure(await call(acme, 'dashboard_create_service_connection', { serviceId: 'branding', url, clientId: 'pactum', clientSecret: 'a-real-secret-1' }));
    expect(refused.error).toBe('invalid_arguments');
    expect(refused.message).toMatch(/user name or password.*clientSecret/);
    expect(refused.message).not.toContain(PASSWORD);
    expect(failure(await call(acme, 'dashboard_get_service_connection', { serviceId: 'branding' })).error).toBe('not_found');
  });

  it.each(withCredentials)('%s is refused on update, and the stored url is kept', async (url) => {
    ok(await call(acme, 'dashboard_create_service_connection', { serviceId: 'compliance', url: 'https://svc.example', clientId: 'pactum', clientSecret: 'a-real-secret-1' }));
    const refused = failure(await call(acme, 'dashboard_update_service_connection', { serviceId: 'compliance', url, clientSecret: 'a-real-secret-2' }));
    expect(refused.error).toBe('invalid_arguments');
    expect(refused.message).toMatch(/user name or password.*clientSecret/);
    expect(ok(await call(acme, 'dashboard_get_service_connection', { serviceId: 'compliance' })).url).toBe('https://svc.example');
  });

  it('never writes them to the audit trail or the log', async () => {
    const rows = await s.services.db('audit_log').where({ tool: 'dashboard_create_service_connection' }).orWhere({ tool: 'dashboard_update_service_connection' });
    expect(rows.length).toBeGreaterThanOrEqual(withCredentials.length * 2);
    expect(JSON.stringify(rows)).not.toContain(PASSWORD);
    expect(JSON.stringify(rows)).toContain('[redacted]@svc.example');
    expect(s.logLines.join('\n')).not.toContain(PASSWORD);
  });

  it('shows, and calls, a url stored with credentials before they were refused without them', async () => {
    ok(await call(acme, 'dashboard_create_service_connection', { serviceId: 'llm', url: 'https://llm.example/base', clientId: 'pactum', clientSecret: 'a-real-secret-1' }));
    await s.services.db('service_connections').where({ org_id: acmeId, service_id: 'llm' }).update({ url: `https://old-user:${PASSWORD}@llm.example/base` });
    const got = ok(await call(acme, 'dashboard_get_service_connection', { serviceId: 'llm' }));
    const listed = ok(await call(acme, 'dashboard_list_service_connections', {}));
    expect(got.url).toBe('https://llm.example/base');
    expect(JSON.stringify([got, listed])).not.toContain(PASSWORD);
    expect(JSON.stringify([got, listed])).not.toContain('old-user');
    expect((await s.services.connections.credentials(acmeId, 'llm'))?.url).toBe('https://llm.example/base');
  });
});
