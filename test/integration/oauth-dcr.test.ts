/**
 * Dynamic Client Registration, the deprecated fallback: off by default (404, and the metadata
 * names no registration endpoint); with OAUTH_DCR=true the MCP SDK's client registers itself
 * (no metadata document), signs in and calls a tool; registrations are public clients only and
 * capped per client address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MemoryOAuthProvider, authorizeByForms, userWithPassword } from '../helpers/oauth.js';

const REDIRECT = 'http://127.0.0.1:45998/callback';
const register = (url: string, body: object) => fetch(`${url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('without OAUTH_DCR', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.stop());

  it('serves no registration: 404, and the metadata names no registration endpoint', async () => {
    const meta = (await (await fetch(`${s.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(meta.registration_endpoint).toBeUndefined();
    expect(meta.client_id_metadata_document_supported).toBe(true);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.authorization_response_iss_parameter_supported).toBe(true);
    expect(meta.issuer).toBe(s.url);
    const openid = (await (await fetch(`${s.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(openid).toEqual(meta);
    const prm = (await (await fetch(`${s.url}/.well-known/oauth-protected-resource/api/v1/mcp`)).json()) as Record<string, unknown>;
    expect(prm.authorization_servers).toEqual([s.url]);
    const res = await register(s.url, { redirect_uris: [REDIRECT] });
    expect(res.status).toBe(404);
    s.expectConformant();
  });
});

describe('with OAUTH_DCR=true', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ OAUTH_DCR: 'true' });
    await userWithPassword(s.services.db, { org: 'acme', username: 'ada', password: 'ada-password-123' });
  });
  afterAll(() => s.stop());

  it('lets the MCP SDK client register itself, sign in and call a tool', async () => {
    const auth = new MemoryOAuthProvider(REDIRECT, undefined, 'Registered client');
    const mcpUrl = new URL(`${s.url}/api/v1/mcp`);
    const first = new Client({ name: 'dcr-test', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth }))).rejects.toThrow(UnauthorizedError);
    expect(auth.info?.client_id).toBeTruthy();
    expect(auth.info?.client_id).not.toMatch(/^https:/);
    const url = auth.authorizationUrl!;
    const { answer } = await authorizeByForms(s.url, Object.fromEntries(url.searchParams), { username: 'ada', password: 'ada-password-123' });
    expect(answer?.get('iss')).toBe(s.url);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth });
    await transport.finishAuth(answer!.get('code')!);
    const client = new Client({ name: 'dcr-test', version: '1.0.0' });
    await client.connect(transport);
    const result = await client.callTool({ name: 'dashboard_list_reports', arguments: {} });
    expect(result.isError).toBeFalsy();
    await client.close();
    s.expectConformant();
  });

  it('registers public clients only, and at most 20 per address an hour', async () => {
    const confidential = await register(s.url, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' });
    expect(confidential.status).toBe(400);
    expect(((await confidential.json()) as { error: string }).error).toBe('invalid_client_metadata');
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) statuses.push((await register(s.url, { redirect_uris: [REDIRECT], application_type: 'native', token_endpoint_auth_method: 'none' })).status);
    expect(statuses.filter((x) => x === 201).length).toBeLessThanOrEqual(19);
    const refused = await register(s.url, { redirect_uris: [REDIRECT], application_type: 'native', token_endpoint_auth_method: 'none' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    s.expectConformant();
  });
});

describe('with OAUTH_ISSUER (an external authorization server)', () => {
  let s: TestServer;
  const issuer = 'https://idp.example';
  beforeAll(async () => {
    s = await startTestServer({ OAUTH_ISSUER: issuer, JWT_JWKS_URL: `${issuer}/jwks`, JWT_ISSUER: issuer });
  });
  afterAll(() => s.stop());

  it('names that issuer in the protected resource metadata, and serves no authorization server of its own', async () => {
    const prm = (await (await fetch(`${s.url}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>;
    expect(prm.authorization_servers).toEqual([issuer]);
    expect(prm.resource).toBe(`${s.url}/api/v1/mcp`);
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/oauth/jwks', '/oauth/authorize']) {
      expect((await fetch(`${s.url}${path}`)).status, path).toBe(404);
    }
    // The session cookie and the challenge still work as before; an opaque token is no one's.
    const res = await fetch(`${s.url}/api/v1/mcp`, { method: 'POST', headers: { authorization: 'Bearer abcdefghijklmnopqrstuvwxyz012345', 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    s.expectConformant();
  });

  it("starts without JWT_JWKS_URL: the issuer's keys are found through its metadata", async () => {
    const { loadConfig } = await import('../../src/ground/config.js');
    expect(loadConfig({ OAUTH_ISSUER: issuer }).jwt.jwksUrl).toBeNull();
  });
});
