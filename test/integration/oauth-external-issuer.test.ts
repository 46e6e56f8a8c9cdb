/**
 * pactum as the resource server of an ordinary identity provider (OAUTH_ISSUER): a second,
 * independent oidc-provider that this test starts with its own issuer URL and its own keys, which
 * issues JWT access tokens for a resource indicator (client credentials over HTTP, with the user's
 * email as a claim). pactum finds its keys through its metadata (no JWT_JWKS_URL), maps the token
 * to the pactum user named by OAUTH_USER_CLAIM=email, applies that user's current role narrowed by
 * the token's scope, and refuses a wrong audience, an expired token, another issuer, a key not
 * the issuer's, an unknown subject and a deactivated user with 401 and the challenge. A scope too
 * narrow for a tool the role holds is a 403 step-up.
 */
import { createServer, type Server } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { SignJWT, importJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { userWithPassword } from '../helpers/oauth.js';
import { loadConfig } from '../../src/ground/config.js';

const CLIENTS = { 'ada-agent': 'ada@example.com', 'ghost-agent': 'ghost@example.com' } as const;
const SECRET = 'idp-client-secret-0123456789';

let idpServer: Server;
let issuer: string;
let idpKey: Record<string, unknown>;
let s: TestServer;
let resource: string;

/** The identity provider: its own issuer, its own RS256 key, JWT access tokens for any resource it is asked for. */
async function startIdentityProvider() {
  idpServer = createServer();
  await new Promise<void>((r) => idpServer.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(idpServer.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  idpKey = { ...privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig', kid: 'idp-1' };
  const idp = new Provider(issuer, {
    clients: Object.keys(CLIENTS).map((client_id) => ({ client_id, client_secret: SECRET, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] })),
    jwks: { keys: [idpKey] },
    scopes: ['reports.view', 'scans.create', 'admin.users', 'branding.view', 'compliance.view', 'issues.fix'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'urn:none',
        getResourceServerInfo: (_ctx, indicator) => ({ scope: 'reports.view scans.create admin.users branding.view compliance.view issues.fix', audience: indicator, accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt: { sign: { alg: 'RS256' } } }),
      },
    },
    ttl: { ClientCredentials: 300 },
    extraTokenClaims: (_ctx, token) => ({ email: CLIENTS[(token as { clientId: keyof typeof CLIENTS }).clientId] }),
  });
  const handle = idp.callback();
  idpServer.on('request', (req, res) => void handle(req, res));
}

/** An access token from the identity provider, by the client credentials grant over HTTP. */
async function idpToken(client: keyof typeof CLIENTS, scope: string, forResource = resource): Promise<string> {
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client}:${SECRET}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource: forResource }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

const call = (bearer: string, method: string, params: object = {}) =>
  fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });

beforeAll(async () => {
  await startIdentityProvider();
  s = await startTestServer({ OAUTH_ISSUER: issuer, OAUTH_USER_CLAIM: 'email' });
  resource = `${s.url}/api/v1/mcp`;
  await userWithPassword(s.services.db, { org: 'acme', username: 'ada@example.com', password: 'ada-password-123', role: 'member' });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  idpServer?.closeAllConnections();
  await new Promise((r) => idpServer?.close(r));
});

describe('with an external identity provider', () => {
  it('names the provider in the protected resource metadata; its own authorization server answers 404', async () => {
    const prm = (await (await fetch(`${s.url}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>;
    expect(prm).toMatchObject({ resource, authorization_servers: [issuer] });
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/oauth/jwks', '/oauth/authorize']) {
      expect((await fetch(`${s.url}${path}`)).status, path).toBe(404);
    }
    const token = await fetch(`${s.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    expect(token.status).toBe(404);
  });

  it("accepts the provider's token for tools/list and a call, as the mapped user with its role narrowed by the scope", async () => {
    const token = await idpToken('ada-agent', 'reports.view scans.create');
    const list = await call(token, 'tools/list');
    expect(list.status).toBe(200);
    const names = ((await list.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
    expect(names).toContain('dashboard_list_reports');
    expect(names).toContain('dashboard_scan_page');
    // branding.view: the member's role holds it, this token's scope does not.
    expect(names).not.toContain('dashboard_list_brand_scores');
    const res = await call(token, 'tools/call', { name: 'dashboard_list_reports', arguments: {} });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { isError?: boolean; structuredContent: Record<string, unknown> } };
    expect(body.result.isError).toBeFalsy();
    expect(body.result.structuredContent).toHaveProperty('reports');
  });

  it('answers a tool the role holds and the scope leaves out with 403 insufficient_scope (a step-up)', async () => {
    const token = await idpToken('ada-agent', 'reports.view');
    const res = await call(token, 'tools/call', { name: 'dashboard_list_brand_scores', arguments: {} });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="branding.view", resource_metadata="${s.url}/.well-known/oauth-protected-resource", error_description="dashboard_list_brand_scores needs the scope branding.view, which this access token was not granted"`,
    );
    expect(await res.json()).toMatchObject({ statusCode: 403 });
    // A token with that scope does it.
    const wider = await idpToken('ada-agent', 'reports.view branding.view');
    const again = await call(wider, 'tools/call', { name: 'dashboard_list_brand_scores', arguments: {} });
    expect(again.status).toBe(200);
  });

  it('answers a resource read through a tool the scope leaves out with 403 insufficient_scope too', async () => {
    const token = await idpToken('ada-agent', 'branding.view');
    const res = await call(token, 'resources/read', { uri: 'pactum://findings/open' });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="reports.view", resource_metadata="${s.url}/.well-known/oauth-protected-resource", error_description="reading this resource (dashboard_list_reports, dashboard_query_issues) needs the scope reports.view, which this access token was not granted"`,
    );
    // A URI of the client's own is never echoed into the header.
    const odd = await call(token, 'resources/read', { uri: 'pactum://reports/x", evil="1' });
    expect(odd.status).toBe(403);
    expect(odd.headers.get('www-authenticate')).not.toContain('evil');
    // A resource read through no tool needs no scope; with the scope, the read is answered.
    expect((await call(token, 'resources/read', { uri: 'wcag://criterion/1.1.1' })).status).toBe(200);
    const wider = await idpToken('ada-agent', 'branding.view reports.view');
    expect((await call(wider, 'resources/read', { uri: 'pactum://findings/open' })).status).toBe(200);
  });

  it("refuses what the user's role does not hold as a tool error, not a step-up", async () => {
    const token = await idpToken('ada-agent', 'reports.view admin.users');
    const res = await call(token, 'tools/call', { name: 'dashboard_list_users', arguments: {} });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(body.result.isError).toBe(true);
    expect(JSON.parse(body.result.content[0]!.text)).toMatchObject({ error: 'forbidden' });
  });

  it('applies the role the user holds now, and refuses a deactivated user', async () => {
    const token = await idpToken('ada-agent', 'reports.view scans.create');
    await s.services.db('users').where({ username: 'ada@example.com' }).update({ role: 'viewer' });
    try {
      const list = await call(token, 'tools/list');
      const names = ((await list.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
      expect(names).toContain('dashboard_list_reports');
      expect(names).not.toContain('dashboard_scan_page');
      await s.services.db('users').where({ username: 'ada@example.com' }).update({ active: false });
      const res = await call(token, 'tools/list');
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    } finally {
      await s.services.db('users').where({ username: 'ada@example.com' }).update({ role: 'member', active: true });
    }
  });

  it('refuses an unknown subject, a wrong audience, an expired token, another issuer and a key not the issuer’s: 401 with the challenge', async () => {
    const key = await importJWK(idpKey as never, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    const signed = (claims: Record<string, unknown>, k = key, kid = 'idp-1') =>
      new SignJWT({ email: 'ada@example.com', scope: 'reports.view', ...claims }).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' }).sign(k);
    const { privateKey: stranger } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const cases: Record<string, string> = {
      'unknown subject': await idpToken('ghost-agent', 'reports.view'),
      'wrong audience': await idpToken('ada-agent', 'reports.view', 'https://elsewhere.example/mcp'),
      expired: await signed({ iss: issuer, aud: resource, sub: 'ada-agent', iat: now - 600, exp: now - 60 }),
      'other issuer': await signed({ iss: 'https://other-idp.example', aud: resource, sub: 'ada-agent', exp: now + 300 }),
      'not the issuer’s key': await signed({ iss: issuer, aud: resource, sub: 'ada-agent', exp: now + 300 }, stranger as never, 'idp-1'),
      'no exp': await signed({ iss: issuer, aud: resource, sub: 'ada-agent' }),
    };
    for (const [why, token] of Object.entries(cases)) {
      const res = await call(token, 'tools/list');
      expect(res.status, why).toBe(401);
      expect(res.headers.get('www-authenticate'), why).toBe(`Bearer resource_metadata="${s.url}/.well-known/oauth-protected-resource", error="invalid_token"`);
      const text = await res.text();
      expect(text, why).not.toContain(token);
    }
    s.expectConformant();
  });
});

describe('an identity provider that cannot be reached', () => {
  it("answers 503 with Retry-After while its keys cannot be read, and starts anyway", async () => {
    const gone = createServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
    const unreachable = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
    await new Promise((r) => gone.close(r));
    const down = await startTestServer({ OAUTH_ISSUER: unreachable });
    try {
      const key = await importJWK(idpKey as never, 'RS256');
      const jwt = await new SignJWT({ sub: 'ada@example.com' }).setProtectedHeader({ alg: 'RS256', kid: 'idp-1' }).setIssuer(unreachable).setAudience(`${down.url}/api/v1/mcp`).setExpirationTime('5m').sign(key);
      const res = await fetch(`${down.url}/api/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(((await res.json()) as { message: string }).message).toContain(unreachable);
      down.expectConformant();
    } finally {
      await down.stop();
    }
  });
});

describe('an issuer whose metadata cannot be read', () => {
  it('is asked once for a flood of tokens naming it, not once a token', async () => {
    let asked = 0;
    const broken = createServer((_req, res) => (asked++, res.writeHead(404).end()));
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
    const issuer = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
    const down = await startTestServer({ OAUTH_ISSUER: issuer });
    try {
      const key = await importJWK(idpKey as never, 'RS256');
      const jwt = await new SignJWT({ sub: 'ada@example.com' }).setProtectedHeader({ alg: 'RS256', kid: 'idp-1' }).setIssuer(issuer).setAudience(`${down.url}/api/v1/mcp`).setExpirationTime('5m').sign(key);
      const send = () => fetch(`${down.url}/api/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      const first = await send();
      expect(first.status).toBe(503);
      // One discovery: each metadata location once.
      expect(asked).toBe(2);
      const flood = await Promise.all(Array.from({ length: 20 }, send));
      expect(flood.map((r) => r.status)).toEqual(Array(20).fill(503));
      expect(flood.every((r) => r.headers.get('retry-after') === '5')).toBe(true);
      expect(asked).toBe(2);
    } finally {
      await down.stop();
      await new Promise((r) => broken.close(r));
    }
  });
});

describe('mistyped settings', () => {
  it('refuse to start, naming the setting', () => {
    expect(() => loadConfig({ OAUTH_ISSUER: 'idp.example.com' })).toThrow(/OAUTH_ISSUER/);
    expect(() => loadConfig({ OAUTH_ISSUER: 'http://idp.example.com' })).toThrow(/OAUTH_ISSUER: must be an https/);
    expect(() => loadConfig({ OAUTH_ISSUER: 'https://idp.example.com/?tenant=1' })).toThrow(/OAUTH_ISSUER: an issuer identifier has no query/);
    expect(() => loadConfig({ OAUTH_ISSUER: 'https://idp.example.com', JWT_ISSUER: 'https://other.example' })).toThrow(/JWT_ISSUER: with OAUTH_ISSUER/);
    expect(() => loadConfig({ OAUTH_USER_CLAIM: 'email' })).toThrow(/OAUTH_USER_CLAIM: only with OAUTH_ISSUER/);
    expect(() => loadConfig({ OAUTH_ISSUER: 'https://idp.example.com', OAUTH_USER_CLAIM: 'e mail' })).toThrow(/OAUTH_USER_CLAIM/);
    expect(() => loadConfig({ CORS_ORIGINS: 'localhost:6274' })).toThrow(/CORS_ORIGINS: localhost:6274 is not an origin/);
    expect(loadConfig({ OAUTH_ISSUER: 'https://idp.example.com' }).oauth).toMatchObject({ issuer: 'https://idp.example.com', userClaim: 'sub' });
  });
});
