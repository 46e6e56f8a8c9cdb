/**
 * The v2 MCP SDK client (`@modelcontextprotocol/client`) signs in by itself too: discovery, a
 * Client ID Metadata Document served over HTTPS by the test, the sign-in and consent forms
 * (driven without a browser here; in Chromium with the v1 client in e2e/oauth-chromium), the
 * callback's `iss` checked by the SDK (RFC 9207) before the code is redeemed, then a 2026-07-28
 * tools/list and a tool call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MemoryOAuthProvider, authorizeByForms, clientDocument, startMetadataHost, userWithPassword, type MetadataHost } from '../helpers/oauth.js';

let s: TestServer;
let host: MetadataHost;
const REDIRECT = 'http://127.0.0.1:45997/callback';

beforeAll(async () => {
  host = await startMetadataHost();
  s = await startTestServer({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', OAUTH_CLIENT_METADATA_CA_FILE: host.caFile });
  await userWithPassword(s.services.db, { org: 'acme', username: 'ada', password: 'ada-password-123' });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  await host?.close();
});

describe('the v2 SDK client', () => {
  it('discovers, identifies itself with its metadata document, checks iss, and calls a tool', async () => {
    const clientId = `${host.url}/v2-client.json`;
    host.documents.set('/v2-client.json', clientDocument(clientId, REDIRECT, 'Test MCP client v2'));
    const auth = new MemoryOAuthProvider(REDIRECT, clientId, 'Test MCP client v2');
    const mcpUrl = new URL(`${s.url}/api/v1/mcp`);
    const first = new Client({ name: 'oauth-v2', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth }))).rejects.toThrow(UnauthorizedError);
    const url = auth.authorizationUrl!;
    expect(url.searchParams.get('client_id')).toBe(clientId);
    expect(url.searchParams.get('resource')).toBe(mcpUrl.href);
    const { answer } = await authorizeByForms(s.url, Object.fromEntries(url.searchParams), { username: 'ada', password: 'ada-password-123' });
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth });
    // An answer whose iss is not the issuer the client recorded is refused before the code is used.
    const forged = new URLSearchParams(answer!);
    forged.set('iss', 'https://attacker.example');
    await expect(transport.finishAuth(forged)).rejects.toThrow();
    await transport.finishAuth(answer!);
    const client = new Client({ name: 'oauth-v2', version: '1.0.0' });
    await client.connect(transport);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('dashboard_list_oauth_grants');
    const grants = await client.callTool({ name: 'dashboard_list_oauth_grants', arguments: {} });
    expect(grants.isError).toBeFalsy();
    expect(JSON.stringify(grants.structuredContent)).toContain(clientId);
    await client.close();
    s.expectConformant();
  });
});
