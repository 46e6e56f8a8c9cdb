/**
 * Two instances of pactum's authorization server share one database and one set of secrets
 * (as a deployment behind a load balancer does: one PUBLIC_URL, so one issuer): a code minted by
 * one is redeemed on the other, the token works on both, a grant revoked on one is refused by the
 * other at once, and a refresh token rotated on one is spent on the other. Run it on PostgreSQL
 * with PACTUM_TEST_BACKEND=postgres (on SQLite both share the database file).
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PAIR_SECRETS, startTestServer, type TestServer } from '../helpers/server.js';
import { authorizeByForms, clientDocument, pkce, startMetadataHost, userWithPassword, type MetadataHost } from '../helpers/oauth.js';

const REDIRECT = 'http://127.0.0.1:45998/callback';
const ada = { username: 'ada', password: 'ada-password-123' };

let a: TestServer;
let b: TestServer;
let bUrl: string;
let host: MetadataHost;
let clientId: string;
let resource: string;

const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  host = await startMetadataHost();
  const common = { ...PAIR_SECRETS, OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', OAUTH_CLIENT_METADATA_CA_FILE: host.caFile };
  a = await startTestServer(common);
  const port = await freePort();
  // The second instance: the first one's database and data directory, its public URL (the issuer), its own port.
  b = await startTestServer({ ...common, DATA_DIR: a.dataDir, PUBLIC_URL: a.url, PORT: String(port) });
  bUrl = `http://127.0.0.1:${port}`;
  clientId = `${host.url}/client.json`;
  host.documents.set('/client.json', clientDocument(clientId, REDIRECT));
  resource = `${a.url}/api/v1/mcp`;
  await userWithPassword(a.services.db, { org: 'acme', username: ada.username, password: ada.password });
}, 60_000);

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await host?.close();
});

const token = (base: string, form: Record<string, string>) =>
  fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });

const tool = async (base: string, bearer: string, name: string, args: object = {}) => {
  const res = await fetch(`${base}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return { status: res.status, body: res.status === 200 ? ((await res.json()) as { result: { isError?: boolean; structuredContent?: Record<string, unknown> } }) : null };
};

/** Signed in and allowed on instance A; the code redeemed on instance B. */
async function tokensAcross(): Promise<{ access_token: string; refresh_token: string }> {
  const p = pkce();
  const { answer } = await authorizeByForms(a.url, { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: 'S256', scope: 'reports.view offline_access', state: 's', resource }, ada);
  expect(answer?.get('iss')).toBe(a.url);
  const res = await token(bUrl, { grant_type: 'authorization_code', code: answer!.get('code')!, code_verifier: p.verifier, redirect_uri: REDIRECT, client_id: clientId, resource });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string };
}

it('redeems on one instance a code minted by the other; the token works on both', async () => {
  expect(bUrl).not.toBe(a.url);
  const t = await tokensAcross();
  expect((await tool(a.url, t.access_token, 'dashboard_list_reports')).status).toBe(200);
  expect((await tool(bUrl, t.access_token, 'dashboard_list_reports')).status).toBe(200);
});

it('refuses on one instance a grant revoked on the other, and a refresh token spent on the other', async () => {
  const kept = await tokensAcross();
  const ended = await tokensAcross();
  const row = await a.services.db('oauth_models').where({ model: 'AccessToken', id: ended.access_token }).first('grant_id');
  const revoked = await tool(a.url, kept.access_token, 'dashboard_revoke_oauth_grant', { grantId: row.grant_id });
  expect(revoked.body?.result.isError).toBeFalsy();
  expect((await tool(bUrl, ended.access_token, 'dashboard_list_reports')).status).toBe(401);
  expect((await token(bUrl, { grant_type: 'refresh_token', refresh_token: ended.refresh_token, client_id: clientId })).status).toBe(400);
  expect((await tool(bUrl, kept.access_token, 'dashboard_list_reports')).status).toBe(200);
  // Rotated on A; the spent one replayed on B is invalid_grant and ends the grant everywhere.
  const rotated = await token(a.url, { grant_type: 'refresh_token', refresh_token: kept.refresh_token, client_id: clientId });
  expect(rotated.status).toBe(200);
  const next = (await rotated.json()) as { access_token: string };
  const replay = await token(bUrl, { grant_type: 'refresh_token', refresh_token: kept.refresh_token, client_id: clientId });
  expect(replay.status).toBe(400);
  expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
  expect((await tool(a.url, next.access_token, 'dashboard_list_reports')).status).toBe(401);
  a.expectConformant();
  b.expectConformant();
});
