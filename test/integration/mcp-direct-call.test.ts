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

/** A 2026-07-28 tools/call: the revision's `_meta` envelope and its standard headers, which `headers` may override (null: left out). */
async function modernCall(name: string, args: object, opts: { progress?: boolean; capabilities?: object; headers?: Record<string, string | null> } = {}) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'direct-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': opts.capabilities ?? {},
    ...(opts.progress ? { progressToken: 'p2' } : {}),
  };
  const headers: Record<string, string> = { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name };
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === null) delete headers[k];
    else headers[k] = v;
  }
  const res = await fetch(`${s.url}/api/v1/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name, arguments: args, _meta: meta } }) });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  const body = contentType.startsWith('text/event-stream')
    ? (text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { id?: unknown }).filter((m) => m.id !== undefined).at(-1) as Record<string, unknown>)
    : (JSON.parse(text) as Record<string, unknown>);
  return { status: res.status, body };
}

describe('2026-07-28 tools/call straight and through the SDK', () => {
  it('gives the same result both ways: resultType, the server identity in _meta, the structured content', async () => {
    const direct = await modernCall('dashboard_get_org', { targetOrgId: orgId });
    const viaSdk = await modernCall('dashboard_get_org', { targetOrgId: orgId }, { progress: true });
    expect(direct.status).toBe(200);
    expect(direct.body).toEqual(viaSdk.body);
    const result = direct.body.result as { resultType: string; _meta: Record<string, { name: string }>; structuredContent: { id: string } };
    expect(result.resultType).toBe('complete');
    expect(result._meta['io.modelcontextprotocol/serverInfo']!.name).toBe('pactum-dashboard');
    expect(result.structuredContent.id).toBe(orgId);
  });

  it('gives the same tool error both ways', async () => {
    const direct = await modernCall('dashboard_get_org', { targetOrgId: 5 });
    const viaSdk = await modernCall('dashboard_get_org', { targetOrgId: 5 }, { progress: true });
    expect((direct.body.result as { isError?: boolean }).isError).toBe(true);
    expect(direct.body).toEqual(viaSdk.body);
  });

  it('leaves every header the body disagrees with, or that is missing, to the SDK, which refuses it', async () => {
    for (const headers of [{ 'mcp-name': 'dashboard_list_orgs' }, { 'mcp-name': null }, { 'mcp-method': 'tools/list' }, { 'mcp-method': null }, { 'mcp-protocol-version': null }, { 'mcp-protocol-version': '2025-11-25' }] as Record<string, string | null>[]) {
      const res = await modernCall('dashboard_get_org', { targetOrgId: orgId }, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect((res.body.error as { code: number }).code, JSON.stringify(headers)).toBeLessThan(0);
      expect(res.body.result).toBeUndefined();
    }
  });

  it('asks a client that declares elicitation to confirm, as the SDK path does', async () => {
    const res = await modernCall('dashboard_update_user', { userId: 'usr_direct_admin', active: false }, { capabilities: { elicitation: { form: {} } } });
    expect((res.body.result as { resultType: string }).resultType).toBe('input_required');
  });

  it('writes one audit row for each call, straight or not', async () => {
    const rows = async () => Number(((await s.services.db('audit_log').where({ tool: 'dashboard_get_org' }).count({ n: '*' }).first()) as { n: number | string }).n);
    const before = await rows();
    await modernCall('dashboard_get_org', { targetOrgId: orgId });
    await modernCall('dashboard_get_org', { targetOrgId: orgId }, { progress: true });
    expect(await rows()).toBe(before + 2);
  });
});
