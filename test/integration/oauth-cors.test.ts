/**
 * CORS for browser-based MCP clients: the endpoints of discovery, registration, token exchange and
 * MCP calls answer preflights and cross-origin reads (any origin by default, CORS_ORIGINS to
 * restrict), expose WWW-Authenticate and the Mcp-* headers, never allow credentials, and the
 * cookie-authenticated paths stay same-origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const INSPECTOR = 'http://localhost:6274';
const EVIL = 'http://evil.example';

const preflight = (url: string, origin: string, method = 'POST', headers = 'authorization, content-type, mcp-protocol-version') =>
  fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

const mcp = (url: string, headers: Record<string, string>) =>
  fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

function expectNoCredentials(res: Response) {
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
}

describe('by default (any origin)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ OAUTH_DCR: 'true' });
  });
  afterAll(() => s?.stop());

  it('answers the preflight of the MCP endpoint with the MCP headers allowed, and nothing else', async () => {
    const res = await preflight(`${s.url}/api/v1/mcp`, INSPECTOR, 'POST', 'authorization, content-type, mcp-protocol-version, mcp-session-id, x-other');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, mcp-protocol-version, mcp-session-id');
    expectNoCredentials(res);
    expect(await res.text()).toBe('');
  });

  it('lets a page of another origin read the 401 challenge and, with a token, the answer', async () => {
    const anonymous = await mcp(s.url, { origin: INSPECTOR });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('access-control-allow-origin')).toBe('*');
    expect(anonymous.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
    expect(anonymous.headers.get('www-authenticate')).toContain('resource_metadata=');
    expectNoCredentials(anonymous);
    const token = await s.token();
    const res = await mcp(s.url, { origin: INSPECTOR, authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toBe('WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version, Retry-After');
  });

  it('refuses a cross-origin MCP request that carries a cookie (403), and gives the cookie paths no CORS', async () => {
    const token = await s.token();
    const res = await mcp(s.url, { origin: INSPECTOR, authorization: `Bearer ${token}`, cookie: 'session=abc' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toBe(`Origin ${INSPECTOR} is not allowed`);
    for (const path of ['/api/v1/auth/login', '/api/v1/auth/session']) {
      const pre = await preflight(`${s.url}${path}`, INSPECTOR);
      expect(pre.headers.get('access-control-allow-origin'), path).toBeNull();
    }
    const login = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { origin: INSPECTOR, 'content-type': 'application/json' }, body: '{"username":"a","password":"b"}' });
    expect(login.status).toBe(403);
    expect(login.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('serves discovery and registration cross-origin, and the token endpoint only to the origin of a redirect URI', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/v1/mcp', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/oauth/jwks']) {
      const pre = await preflight(`${s.url}${path}`, INSPECTOR, 'GET', '');
      expect(pre.status, path).toBe(204);
      expect(pre.headers.get('access-control-allow-origin'), path).toBe('*');
      const res = await fetch(`${s.url}${path}`, { headers: { origin: INSPECTOR } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('access-control-allow-origin'), path).toMatch(/^(\*|http:\/\/localhost:6274)$/);
      expectNoCredentials(res);
    }
    const pre = await preflight(`${s.url}/oauth/register`, INSPECTOR, 'POST', 'content-type');
    expect(pre.status).toBe(204);
    const registered = await fetch(`${s.url}/oauth/register`, {
      method: 'POST',
      headers: { origin: INSPECTOR, 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [`${INSPECTOR}/oauth/callback`], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], client_name: 'Browser client' }),
    });
    expect(registered.status).toBe(201);
    expect(registered.headers.get('access-control-allow-origin')).toBe('*');
    const { client_id } = (await registered.json()) as { client_id: string };
    const exchange = (origin: string) =>
      fetch(`${s.url}/oauth/token`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'not-a-code', code_verifier: 'v'.repeat(43), redirect_uri: `${INSPECTOR}/oauth/callback`, client_id }),
      });
    const own = await exchange(INSPECTOR);
    expect(own.status).toBe(400);
    expect(await own.json()).toMatchObject({ error: 'invalid_grant' });
    expect(own.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
    expect(own.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
    const other = await exchange(EVIL);
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ error: 'invalid_request' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    s.expectConformant();
  });
});

describe('with CORS_ORIGINS', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ CORS_ORIGINS: INSPECTOR });
  });
  afterAll(() => s?.stop());

  it('answers the listed origin by name and no other', async () => {
    const listed = await preflight(`${s.url}/api/v1/mcp`, INSPECTOR);
    expect(listed.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
    expect(listed.headers.get('vary')).toMatch(/origin/i);
    const unlisted = await preflight(`${s.url}/api/v1/mcp`, EVIL);
    expect(unlisted.status).toBe(204);
    expect(unlisted.headers.get('access-control-allow-origin')).toBeNull();
    const token = await s.token();
    const ok = await mcp(s.url, { origin: INSPECTOR, authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
    const refused = await mcp(s.url, { origin: EVIL, authorization: `Bearer ${token}` });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const prm = await fetch(`${s.url}/.well-known/oauth-protected-resource`, { headers: { origin: EVIL } });
    expect(prm.headers.get('access-control-allow-origin')).toBeNull();
    s.expectConformant();
  });
});
