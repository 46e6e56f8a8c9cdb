/**
 * Answers a newcomer meets early, each readable on its own: an expired token says when it
 * expired, a tus PATCH without its protocol header names the header, dashboard_get_org without
 * targetOrgId reads the caller's org, a token name shared by older tokens is not revoked blindly,
 * and the landing page gives the status the server answers for an upload that is not its oid.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPersonalToken, listPersonalTokens } from '../../src/db/repos.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let fixture: Awaited<ReturnType<typeof lfsFixture>>;
const basic = `Basic ${Buffer.from('wally:wally-password-1').toString('base64')}`;

beforeAll(async () => {
  s = await startTestServer();
  fixture = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
});
afterAll(() => s.stop());

async function rpc(token: string, method: string, params: unknown) {
  const res = await fetch(`${s.directUrl}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

it('an expired token answers when it expired, not the JWT library\'s words', async () => {
  const token = await s.token({ orgId: fixture.org.id, perms: ['admin.system'], ttl: -120 });
  const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { exp: number };
  const res = await rpc(token, 'ping', {});
  expect(res.status).toBe(401);
  const said = `${res.headers.get('www-authenticate')} ${res.text}`;
  expect(said).toContain(`token expired at ${new Date(exp.exp * 1000).toISOString()}`);
  expect(said).not.toMatch(/claim timestamp check failed/);
});

it('a tus PATCH without Tus-Resumable names the header', async () => {
  const oid = createHash('sha256').update('x').digest('hex');
  const res = await fetch(`${s.directUrl}/acme/site.git/info/lfs/tus/${oid}`, {
    method: 'PATCH',
    headers: { authorization: basic, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: 'x',
  });
  const body = (await res.json()) as { message: string };
  expect(res.status).toBe(412);
  expect(body.message).toMatch(/the header Tus-Resumable is required/);
  expect(body.message).not.toMatch(/parameter {2}must/);
});

it('dashboard_get_org without targetOrgId reads the caller\'s own org', async () => {
  const token = await s.token({ orgId: fixture.org.id, perms: ['admin.org'], role: 'org_admin' });
  const res = await rpc(token, 'tools/call', { name: 'dashboard_get_org', arguments: {} });
  expect(res.status).toBe(200);
  const structured = (JSON.parse(res.text) as { result: { isError?: boolean; structuredContent: { id: string; slug: string } } }).result;
  expect(structured.isError ?? false).toBe(false);
  expect(structured.structuredContent).toMatchObject({ id: fixture.org.id, slug: 'acme' });
  s.expectConformant();
});

it('revoking by a name that several older live tokens share revokes none and lists their ids', async () => {
  const a = await createPersonalToken(s.services.db, fixture.user.id, 'ci');
  const b = await createPersonalToken(s.services.db, fixture.user.id, 'ci');
  const token = await s.token({ orgId: fixture.org.id, perms: ['admin.system'] });
  const res = await rpc(token, 'tools/call', { name: 'dashboard_revoke_user_token', arguments: { userId: fixture.user.id, token: 'ci' } });
  const text = (JSON.parse(res.text) as { result: { isError: boolean; content: { text: string }[] } }).result;
  expect(text.isError).toBe(true);
  expect(JSON.parse(text.content[0]!.text)).toMatchObject({ error: 'conflict', message: expect.stringContaining(`2 live tokens are named ci (`) });
  expect((await listPersonalTokens(s.services.db, fixture.user.id)).filter((t) => t.revoked_at)).toEqual([]);
  // By id: exactly that one.
  const byId = await rpc(token, 'tools/call', { name: 'dashboard_revoke_user_token', arguments: { userId: fixture.user.id, token: a.id } });
  expect((JSON.parse(byId.text) as { result: { structuredContent: { revoked: number } } }).result.structuredContent.revoked).toBe(1);
  const left = await listPersonalTokens(s.services.db, fixture.user.id);
  expect(left.filter((t) => !t.revoked_at).map((t) => t.id)).toEqual([b.id]);
});

it('the landing page gives 422 for an upload whose bytes are not its oid, as the server answers', async () => {
  const page = await (await fetch(`${s.directUrl}/`)).text();
  const row = (status: number) => new RegExp(`${status}[^]*?(?=\\n|</tr>|</li>|</dt>)`).exec(page.slice(page.indexOf('object-api-errors')))?.[0] ?? '';
  expect(page.slice(page.indexOf('object-api-errors'))).toMatch(/422[^]{0,400}do not hash to its oid/);
  expect(row(409)).not.toMatch(/hash to its oid/);
});

it('the partner-clients script names the Java library openapitools.json configures', () => {
  const root = join(import.meta.dirname, '..', '..');
  const library = (JSON.parse(readFileSync(join(root, 'openapitools.json'), 'utf8')) as { 'generator-cli': { generators: { java: { additionalProperties: { library: string } } } } })['generator-cli'].generators.java.additionalProperties.library;
  expect(readFileSync(join(root, 'scripts', 'clients.sh'), 'utf8')).toMatch(new RegExp(`^#\\s+java/\\s+java \\(the ${library} library`, 'm'));
});
