/**
 * Bearer tokens from an identity provider: RS256 and ES256 tokens verified against a JWKS URL
 * (JWT_JWKS_URL), and everything else refused — the server's own HS256 tokens included.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type KeyObject } from 'jose';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { changeUser, insertOrg, insertUser } from '../../src/db/users.js';

let idp: Server;
let s: TestServer;
let orgId: string;
const keys: Record<string, { privateKey: CryptoKey | KeyObject; kid: string; alg: string }> = {};

beforeAll(async () => {
  const jwks = { keys: [] as object[] };
  for (const alg of ['RS256', 'ES256']) {
    const { publicKey, privateKey } = await generateKeyPair(alg);
    const kid = `key-${alg}`;
    jwks.keys.push({ ...(await exportJWK(publicKey)), kid, alg, use: 'sig' });
    keys[alg] = { privateKey, kid, alg };
  }
  idp = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks))).listen(0, '127.0.0.1');
  await new Promise((r) => idp.once('listening', r));
  s = await startTestServer({ JWT_JWKS_URL: `http://127.0.0.1:${(idp.address() as AddressInfo).port}/.well-known/jwks.json`, JWT_ISSUER: 'https://idp.example' });
  orgId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
});
afterAll(async () => {
  await s?.stop();
  idp?.close();
});
afterEach(() => s.expectConformant());

const sign = (alg: string, claims: Record<string, unknown> = {}, opts: { issuer?: string; audience?: string; key?: CryptoKey | KeyObject; subject?: string } = {}) =>
  new SignJWT({ orgId, role: 'org_admin', ...claims })
    .setProtectedHeader({ alg, kid: keys[alg]!.kid })
    // An identity provider's subject, not a local user: its claims carry the role.
    .setSubject(opts.subject ?? 'idp|from_idp')
    .setIssuer(opts.issuer ?? 'https://idp.example')
    .setAudience(opts.audience ?? `${s.url}/api/v1/mcp`)
    .setExpirationTime('5m')
    .sign(opts.key ?? keys[alg]!.privateKey);

it('accepts RS256 and ES256 tokens the JWKS vouches for', async () => {
  for (const alg of ['RS256', 'ES256']) {
    const c = await mcpClient(s.url, bearer(await sign(alg)));
    expect(ok(await c.callTool({ name: 'dashboard_get_org', arguments: { targetOrgId: orgId } })).slug, alg).toBe('acme');
    await c.close();
  }
});

it('refuses tokens of another key, issuer or audience, and HS256 tokens, with 401', async () => {
  const stranger = (await generateKeyPair('RS256')).privateKey;
  const { SignJWT: S } = await import('jose');
  const hs = await new S({ orgId, role: 'org_admin' }).setProtectedHeader({ alg: 'HS256' }).setSubject('x').setAudience(`${s.url}/api/v1/mcp`).setExpirationTime('5m').sign(new TextEncoder().encode('a shared secret that is long enough!!'));
  for (const [name, token] of Object.entries({
    otherKey: await sign('RS256', {}, { key: stranger }),
    otherIssuer: await sign('RS256', {}, { issuer: 'https://evil.example' }),
    otherAudience: await sign('ES256', {}, { audience: 'https://elsewhere.example/api/v1/mcp' }),
    hs256: hs,
  })) {
    await expect(mcpClient(s.url, bearer(token)), name).rejects.toThrow(/401/);
  }
  await expect(s.token()).rejects.toThrow(/JWKS/);
});

it("keeps an identity provider's token for a local user working after the user's credentials moved (it cannot know our version)", async () => {
  const ada = await insertUser(s.services.db, { orgId, username: 'ada', passwordHash: 'x', role: 'member' });
  await changeUser(s.services.db, ada.id, { passwordHash: 'y' });
  const c = await mcpClient(s.url, bearer(await sign('RS256', {}, { subject: ada.id })));
  expect((await c.listTools()).tools.map((t) => t.name)).toContain('dashboard_list_reports');
  await c.close();
  await changeUser(s.services.db, ada.id, { active: false });
  await expect(mcpClient(s.url, bearer(await sign('RS256', {}, { subject: ada.id })))).rejects.toThrow(/401/);
});
