/**
 * A tools/call answered in JSON is called straight, without the SDK's per-request Server and
 * transport (src/mcp/endpoint.ts); one with a progress token goes through the SDK and streams.
 * Both must answer the same: the same result, the same JSON-RPC error for an unknown tool, and
 * the same refusal of malformed params, through the MCP SDK's own client too.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { insertOrg } from '../../src/db/users.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';

let s: TestServer;
let token: string;
let orgId: string;
beforeAll(async () => {
  s = await startTestServer();
  orgId = (await insertOrg(s.services.db, { name: 'Direct', slug: 'direct' })).id;
  token = await s.token({ sub: 'usr_direct_admin', orgId, role: 'org_admin' });
});
afterAll(() => s.stop());
afterEach(() => s.expectConformant());

/** One JSON-RPC message to the endpoint; the JSON-RPC response, whether sent as JSON or as SSE. */
async function rpc(message: object): Promise<{ contentType: string; body: { result?: unknown; error?: { code: number; message: string } } }> {
  const res = await fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  });
  expect(res.status).toBe(200);
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (contentType.startsWith('text/event-stream')) {
    // The last data line is the response (progress notifications, if any, come before it).
    const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { id?: unknown });
    return { contentType, body: data.filter((m) => m.id !== undefined).at(-1) as never };
  }
  return { contentType, body: JSON.parse(text) as never };
}

const call = (name: string, args: object, progress: boolean) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name, arguments: args, ...(progress ? { _meta: { progressToken: 'p1' } } : {}) },
});

describe('tools/call straight and through the SDK', () => {
  it('gives the same result as JSON (straight) and as SSE (through the SDK)', async () => {
    const direct = await rpc(call('dashboard_get_org', { targetOrgId: orgId }, false));
    const viaSdk = await rpc(call('dashboard_get_org', { targetOrgId: orgId }, true));
    expect(direct.contentType).toMatch(/^application\/json/);
    expect(viaSdk.contentType).toMatch(/^text\/event-stream/);
    expect(direct.body).toEqual(viaSdk.body);
    expect((direct.body.result as { isError?: boolean }).isError).toBeFalsy();
  });

  it('answers an unknown tool with the same JSON-RPC error both ways', async () => {
    const direct = await rpc(call('dashboard_no_such_tool', {}, false));
    const viaSdk = await rpc(call('dashboard_no_such_tool', {}, true));
    expect(direct.body.error?.code).toBe(-32602);
    expect(direct.body).toEqual(viaSdk.body);
  });

  it('refuses malformed params with -32602 before either way runs', async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { arguments: {} } });
    expect(res.body.error?.code).toBe(-32602);
    expect(res.body.error?.message).toContain('Invalid params for tools/call');
  });

  it('serves the MCP SDK client, which asks for JSON', async () => {
    const client = await mcpClient(s.url, bearer(token));
    try {
      const org = ok(await client.callTool({ name: 'dashboard_get_org', arguments: { targetOrgId: orgId } }));
      expect(org.id).toBe(orgId);
    } finally {
      await client.close();
    }
  });
});
