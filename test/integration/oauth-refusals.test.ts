/**
 * What the authorization server and the MCP endpoint refuse, each with the error the OAuth and
 * MCP specifications name: a wrong PKCE verifier, a code used twice, a redirect URI the metadata
 * document does not list, a metadata document on a private address, too large or too slow, a
 * token asked for another resource, an expired token, a replayed refresh token (which ends the
 * grant), a denied consent, the OAuth 2.1 leftovers (implicit, no PKCE, plain PKCE), a token of
 * one org on another's data, and a user's new password or deactivation ending its tokens.
 * The forms are driven without a browser (the end-to-end test drives them in Chromium).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { backendEnv } from '../helpers/backends.js';
import { pactum } from '../helpers/cli.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { MemoryOAuthProvider, authorizeByForms, clientDocument, pkce, startMetadataHost, userWithPassword, type MetadataHost } from '../helpers/oauth.js';

let s: TestServer;
let host: MetadataHost;
const ada = { username: 'ada', password: 'ada-password-123' };
const REDIRECT = 'http://127.0.0.1:45999/callback';
let clientId: string;
let resource: string;

beforeAll(async () => {
  host = await startMetadataHost();
  s = await startTestServer({
    OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
    OAUTH_CLIENT_METADATA_CA_FILE: host.caFile,
    OAUTH_CLIENT_METADATA_TIMEOUT_MS: '700',
    OAUTH_CLIENT_METADATA_MAX_BYTES: '2048',
  });
  await userWithPassword(s.services.db, { org: 'acme', username: ada.username, password: ada.password });
  clientId = `${host.url}/good.json`;
  host.documents.set('/good.json', clientDocument(clientId, REDIRECT));
  resource = `${s.url}/api/v1/mcp`;
}, 60_000);

afterAll(async () => {
  await s?.stop();
  await host?.close();
});

const token = (form: Record<string, string>) =>
  fetch(`${s.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });

const mcp = (bearer: string) =>
  fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_list_reports', arguments: {} } }),
  });

function authParams(challenge: string, extra: Record<string, string> = {}) {
  return { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', scope: 'reports.view offline_access', state: 'st-1', resource, ...extra };
}

/** A code for ada, and the verifier that redeems it. */
async function code(who = ada): Promise<{ code: string; verifier: string }> {
  const p = pkce();
  const { answer } = await authorizeByForms(s.url, authParams(p.challenge), who);
  expect(answer?.get('iss')).toBe(s.url);
  expect(answer?.get('state')).toBe('st-1');
  return { code: answer!.get('code')!, verifier: p.verifier };
}

async function tokens(who = ada): Promise<{ access_token: string; refresh_token: string; scope: string }> {
  const c = await code(who);
  const res = await token({ grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string; scope: string };
}

describe('the token endpoint', () => {
  it('redeems a code with its verifier only, once: a wrong verifier and a second use are invalid_grant', async () => {
    const c = await code();
    const wrong = await token({ grant_type: 'authorization_code', code: c.code, code_verifier: pkce().verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    const right = await token({ grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
    expect(right.status).toBe(200);
    const issued = (await right.json()) as { access_token: string };
    expect((await mcp(issued.access_token)).status).toBe(200);
    // A code presented again: refused, and what it gave is revoked (it may have been stolen).
    const again = await token({ grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await mcp(issued.access_token)).status).toBe(401);
  });

  it('issues tokens only for the MCP endpoint: another resource is invalid_target', async () => {
    const c = await code();
    const other = await token({ grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT, client_id: clientId, resource: 'https://elsewhere.example/mcp' });
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ error: 'invalid_target' });
  });

  it('grants only the scopes asked for and held: reports.view, not admin', async () => {
    const t = await tokens();
    expect(t.scope.split(' ')).toContain('reports.view');
    expect(t.scope).not.toContain('admin');
    expect((await mcp(t.access_token)).status).toBe(200);
  });

  it('rotates refresh tokens; a spent one replayed is invalid_grant and ends the grant', async () => {
    const t = await tokens();
    const first = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: clientId });
    expect(first.status).toBe(200);
    const next = (await first.json()) as { access_token: string; refresh_token: string };
    expect(next.refresh_token).not.toBe(t.refresh_token);
    const replay = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: clientId });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
    expect((await mcp(next.access_token)).status).toBe(401);
    const later = await token({ grant_type: 'refresh_token', refresh_token: next.refresh_token, client_id: clientId });
    expect(later.status).toBe(400);
  });

  it('refuses the password grant and client credentials (unsupported_grant_type)', async () => {
    for (const grant_type of ['password', 'client_credentials', 'implicit']) {
      const res = await token({ grant_type, username: ada.username, password: ada.password, client_id: clientId });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/unsupported_grant_type|invalid_request/);
    }
  });
});

describe('a NUL character', () => {
  it('is refused in any field of the token form and in any parameter of an authorization, before the provider looks anything up', async () => {
    const c = await code();
    const good = { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT, client_id: clientId, resource };
    for (const form of [{ ...good, client_id: `${clientId}\u0000` }, { ...good, extra: 'a\u0000b' }, { ...good, ['na\u0000me']: '1' }]) {
      const res = await token(form);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('NUL') });
    }
    // Nothing was spent: the code still redeems once.
    expect((await token(good)).status).toBe(200);
    const query = new URLSearchParams({ ...authParams(pkce().challenge), nonce: 'n\u0000' });
    const res = await fetch(`${s.url}/oauth/authorize?${query}`, { redirect: 'manual', headers: { accept: 'application/json' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain('NUL');
  });
});

describe('the authorization endpoint', () => {
  it('sends a denied consent back as access_denied, with iss', async () => {
    const { answer } = await authorizeByForms(s.url, authParams(pkce().challenge), ada, 'deny');
    expect(answer?.get('error')).toBe('access_denied');
    expect(answer?.get('iss')).toBe(s.url);
    expect(answer?.get('code')).toBeNull();
  });

  it('refuses a redirect URI the metadata document does not list, with a page and no redirect', async () => {
    const { answer, last } = await authorizeByForms(s.url, authParams(pkce().challenge, { redirect_uri: 'http://127.0.0.1:45999/elsewhere' }), ada);
    expect(answer).toBeNull();
    expect(last.status).toBe(400);
    expect(last.text).toContain('redirect_uri');
  });

  it('keeps OAuth 2.1: no implicit flow, no request without PKCE, no plain PKCE', async () => {
    const implicit = await authorizeByForms(s.url, authParams(pkce().challenge, { response_type: 'token' }), ada);
    expect(implicit.answer?.get('error')).toBe('unsupported_response_type');
    const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = authParams('');
    const without = await authorizeByForms(s.url, noPkce, ada);
    expect(without.answer?.get('error')).toBe('invalid_request');
    const p = pkce();
    const plain = await authorizeByForms(s.url, authParams(p.verifier, { code_challenge_method: 'plain' }), ada);
    expect(plain.answer?.get('error')).toBe('invalid_request');
  });

  it('refuses a token for another resource: invalid_target', async () => {
    const { answer } = await authorizeByForms(s.url, authParams(pkce().challenge, { resource: 'https://elsewhere.example/mcp' }), ada);
    expect(answer?.get('error')).toBe('invalid_target');
  });

  it('refuses a metadata document larger than OAUTH_CLIENT_METADATA_MAX_BYTES or slower than the timeout', async () => {
    const big = `${host.url}/big.json`;
    host.documents.set('/big.json', { ...clientDocument(big, REDIRECT), padding: 'x'.repeat(4096) });
    const tooBig = await authorizeByForms(s.url, authParams(pkce().challenge, { client_id: big }), ada);
    expect(tooBig.answer).toBeNull();
    expect(tooBig.last.status).toBe(400);
    expect(tooBig.last.text).toContain('invalid_client');
    const slow = `${host.url}/slow.json`;
    host.documents.set('/slow.json', (_req: unknown, res: import('node:http').ServerResponse) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(clientDocument(slow, REDIRECT))), 2000);
    });
    const tooSlow = await authorizeByForms(s.url, authParams(pkce().challenge, { client_id: slow }), ada);
    expect(tooSlow.answer).toBeNull();
    expect(tooSlow.last.text).toContain('invalid_client');
  });

  it('refuses a document whose client_id is not its own URL', async () => {
    const liar = `${host.url}/liar.json`;
    host.documents.set('/liar.json', clientDocument(`${host.url}/good.json`, REDIRECT));
    const r = await authorizeByForms(s.url, authParams(pkce().challenge, { client_id: liar }), ada);
    expect(r.answer).toBeNull();
    expect(r.last.text).toContain('invalid_client');
  });
});

describe('the MCP endpoint with an access token', () => {
  it('refuses an expired token with 401 and the challenge', async () => {
    const t = await tokens();
    expect((await mcp(t.access_token)).status).toBe(200);
    await s.services.db('oauth_models').where({ model: 'AccessToken', id: t.access_token }).update({ expires_at: new Date(Date.now() - 1000).toISOString() });
    const res = await mcp(t.access_token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource", error="invalid_token"/);
  });

  it('ends every token of a user whose password changes, and of one deactivated', async () => {
    await userWithPassword(s.services.db, { org: 'bmco', username: 'bob', password: 'bob-password-123' });
    const bob = { username: 'bob', password: 'bob-password-123' };
    const t = await tokens(bob);
    expect((await mcp(t.access_token)).status).toBe(200);
    // A new password moves the credential version (as dashboard_update_user and the CLI do).
    await s.services.db('users').where({ username: 'bob' }).increment('credential_version', 1);
    const res = await mcp(t.access_token);
    expect(res.status).toBe(401);
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: clientId });
    expect(refresh.status).toBe(400);
    // Signed in again: a new grant; deactivated: it ends too.
    const again = await tokens(bob);
    expect((await mcp(again.access_token)).status).toBe(200);
    await s.services.db('users').where({ username: 'bob' }).update({ active: false });
    expect((await mcp(again.access_token)).status).toBe(401);
  });

  it("keeps a token of org A out of org B's data", async () => {
    const t = await tokens();
    const other = await s.services.db('orgs').where({ slug: 'bmco' }).first('id');
    const res = await fetch(`${s.url}/api/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_get_org', arguments: { targetOrgId: other.id } } }),
    });
    const body = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(body.result.isError).toBe(true);
    expect(body.result.content[0]!.text).toMatch(/forbidden|not_found/);
  });

  it('answers every response within the specs', () => {
    s.expectConformant();
  });
});

const tool = async (bearer: string, name: string, args: object) => {
  const res = await fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return { status: res.status, body: (await res.json()) as { result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content: { text: string }[] } } };
};

describe('a token scoped too narrowly (step-up)', () => {
  it('is answered 403 insufficient_scope with the scope to ask for; the MCP SDK client asks for it and calls again', async () => {
    // A token for reports.view only (no refresh token: a step-up is a new authorization).
    const p = pkce();
    const { answer } = await authorizeByForms(s.url, authParams(p.challenge, { scope: 'reports.view' }), ada);
    const res = await token({ grant_type: 'authorization_code', code: answer!.get('code')!, code_verifier: p.verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
    const narrow = (await res.json()) as { access_token: string; scope: string };
    expect(narrow.scope).toBe('reports.view');
    const raw = await tool(narrow.access_token, 'dashboard_list_brand_scores', {});
    expect(raw.status).toBe(403);

    const auth = new MemoryOAuthProvider(REDIRECT, clientId);
    auth.saved = { access_token: narrow.access_token, token_type: 'Bearer', scope: narrow.scope };
    const mcpUrl = new URL(resource);
    const client = new Client({ name: 'step-up-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth }));
    expect((await client.callTool({ name: 'dashboard_list_reports', arguments: {} })).isError).toBeFalsy();
    // branding.view: ada's role (member) holds it, the token does not. The SDK reads the challenge
    // and starts an authorization for that scope.
    await expect(client.callTool({ name: 'dashboard_list_brand_scores', arguments: {} })).rejects.toThrow(UnauthorizedError);
    const asked = auth.authorizationUrl!;
    expect(asked.origin + asked.pathname).toBe(`${s.url}/oauth/authorize`);
    expect(asked.searchParams.get('scope')).toBe('branding.view');
    await client.close();
    const again = await authorizeByForms(s.url, Object.fromEntries(asked.searchParams), ada);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth });
    await transport.finishAuth(again.answer!.get('code')!);
    expect(auth.saved?.scope).toBe('branding.view');
    const stepped = new Client({ name: 'step-up-test', version: '1.0.0' });
    await stepped.connect(transport);
    expect((await stepped.callTool({ name: 'dashboard_list_brand_scores', arguments: {} })).isError).toBeFalsy();
    await stepped.close();
  });

  it("is not what a tool the user's role does not hold gets: that is a forbidden tool error", async () => {
    const t = await tokens();
    const res = await tool(t.access_token, 'dashboard_list_users', {});
    expect(res.status).toBe(200);
    expect(res.body.result!.isError).toBe(true);
    expect(res.body.result!.content[0]!.text).toContain('forbidden');
  });
});

describe('grants', () => {
  it("a user lists its grants and revokes one with the MCP tools; the grant's tokens end at once", async () => {
    const kept = await tokens();
    const ended = await tokens();
    const listed = await tool(kept.access_token, 'dashboard_list_oauth_grants', {});
    const grants = listed.body.result!.structuredContent!.grants as { grantId: string; clientId: string; scopes: string[] }[];
    expect(grants.length).toBeGreaterThanOrEqual(2);
    expect(grants.every((g) => g.clientId === clientId)).toBe(true);
    expect(grants[0]!.scopes).toContain('reports.view');
    // The grant behind `ended`: the one whose id its access token names.
    const row = await s.services.db('oauth_models').where({ model: 'AccessToken', id: ended.access_token }).first('grant_id');
    const revoked = await tool(kept.access_token, 'dashboard_revoke_oauth_grant', { grantId: row.grant_id });
    expect(revoked.body.result!.isError).toBeFalsy();
    expect(revoked.body.result!.structuredContent!.revoked).toBe(row.grant_id);
    expect((await mcp(ended.access_token)).status).toBe(401);
    expect((await token({ grant_type: 'refresh_token', refresh_token: ended.refresh_token, client_id: clientId })).status).toBe(400);
    expect((await mcp(kept.access_token)).status).toBe(200);
    // Another user's grant, or one that does not exist: not_found.
    const again = await tool(kept.access_token, 'dashboard_revoke_oauth_grant', { grantId: row.grant_id });
    expect(again.body.result!.isError).toBe(true);
  });

  it('an operator lists and revokes grants with the CLI', async () => {
    const t = await tokens();
    const env = { DATA_DIR: s.dataDir, ...(await backendEnv(s.dataDir)) };
    const list = await pactum(['oauth', 'grants', '--user', 'ada'], env);
    expect(list.code, list.stderr).toBe(0);
    const row = await s.services.db('oauth_models').where({ model: 'AccessToken', id: t.access_token }).first('grant_id');
    expect(list.stdout).toContain(`${row.grant_id}\tada\t${clientId}\t`);
    const revoke = await pactum(['oauth', 'revoke', row.grant_id], env);
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(revoke.stdout).toContain('revoked grant');
    expect((await mcp(t.access_token)).status).toBe(401);
    const unknown = await pactum(['oauth', 'revoke', row.grant_id], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no grant');
    // A grant id is base64url: one beginning with '-' is an id, not an option.
    const dashed = await pactum(['oauth', 'revoke', '-aB3_unknown'], env);
    expect(dashed.stderr).toContain('no grant -aB3_unknown');
  });
});

describe('a metadata document on a private address', () => {
  it('is not fetched unless OUTBOUND_ALLOW_PRIVATE_NETWORKS allows it: invalid_client', async () => {
    const strict = await startTestServer({ OAUTH_CLIENT_METADATA_CA_FILE: host.caFile });
    try {
      await userWithPassword(strict.services.db, { org: 'acme', username: ada.username, password: ada.password });
      const before = host.fetched.length;
      const id = `${host.url}/private.json`;
      host.documents.set('/private.json', clientDocument(id, REDIRECT));
      const r = await authorizeByForms(strict.url, { ...authParams(pkce().challenge, { client_id: id }), resource: `${strict.url}/api/v1/mcp` }, ada);
      expect(r.answer).toBeNull();
      expect(r.last.status).toBe(400);
      expect(r.last.text).toContain('invalid_client');
      expect(host.fetched.slice(before)).not.toContain('/private.json');
      strict.expectConformant();
    } finally {
      await strict.stop();
    }
  });
});
