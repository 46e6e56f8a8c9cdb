/**
 * Both MCP revisions on one endpoint, as their clients use it: the v2 SDK's Client pinned to
 * 2026-07-28 (no initialize; version, capabilities and client info in each request's _meta) and
 * the v1 SDK's Client at 2025-11-25 (initialize first) list tools, call one with progress, and
 * read the report App (each running a scan as a task, to completion and to cancellation:
 * test/e2e/mcp-tasks.test.ts); and the 2026-07-28 refusals, exactly: no _meta version, a header
 * that disagrees with the body, an unsupported version (naming every version served, as
 * server/discover does). Then server/discover and the cache hints.
 *
 * In the pair topology (two instances behind a round-robin proxy) consecutive requests reach
 * alternating instances; one test shows a 2026-07-28 client served by both in turn.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client as Client2026, StreamableHTTPClientTransport as Transport2026 } from '@modelcontextprotocol/client';
import type { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { EXTENSION_ID, getUiCapability, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import { startTestServer, topology, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { insertOrg } from '../../src/db/users.js';

const MODERN = '2026-07-28';
const REPORT_VIEW = 'ui://pactum/report';

let s: TestServer;
let site: FixtureSite;
let adminToken: string;
let memberToken: string;
let orgId: string;
let modern: Client2026;
let legacy: Client2025;

async function modernClient(token: string, fetchFn?: typeof fetch): Promise<Client2026> {
  const client = new Client2026({ name: 'pactum-tests-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new Transport2026(new URL(`${s.url}/api/v1/mcp`), { requestInit: { headers: bearer(token) }, ...(fetchFn ? { fetch: fetchFn } : {}) }));
  return client;
}

beforeAll(async () => {
  site = await startFixtureSite(0);
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' });
  orgId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  adminToken = await s.token({ sub: 'svc_acme_admin', orgId, role: 'org_admin', perms: [] });
  memberToken = await s.token({ sub: 'svc_acme_member', orgId, role: 'member', perms: [] });
  modern = await modernClient(adminToken);
  legacy = await mcpClient(s.url, bearer(adminToken));
});
afterAll(async () => {
  await modern?.close();
  await legacy?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

/** One raw POST to the endpoint: the HTTP status, the headers and the JSON-RPC body (the last message of an SSE stream). */
async function post(message: object, headers: Record<string, string> = {}, token = adminToken) {
  const res = await fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(message),
  });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  const body = contentType.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as { id?: unknown })
        .filter((m) => m.id !== undefined)
        .at(-1)
    : text
      ? JSON.parse(text)
      : undefined;
  return { status: res.status, contentType, body };
}

const envelope = (version = MODERN) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientInfo': { name: 'curl', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
});
const modernHeaders = (method: string, name?: string, version = MODERN) => ({ 'mcp-protocol-version': version, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) });

describe('a 2026-07-28 client (the v2 SDK Client)', () => {
  it('lists the tools its role allows, by name, and calls one with progress', async () => {
    const { tools } = await modern.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('dashboard_scan_page');
    const { tools: legacyTools } = await legacy.listTools();
    expect(names).toEqual(legacyTools.map((t) => t.name));

    const progress: number[] = [];
    const page = ok(await modern.callTool({ name: 'dashboard_scan_page', arguments: { url: site.url('/form.html') } }, { onprogress: (p) => progress.push(p.progress) }));
    expect(page.engine).toBe('jsdom');
    expect(page.issues.map((i: { code: string }) => i.code).sort()).toEqual(['label', 'select-name']);
    expect(progress).toEqual([0, 1, 2]);
  });

  it('reads the report App resource, and lists the resource templates', async () => {
    expect(await modern.listResourceTemplates()).toEqual({ resourceTemplates: [expect.objectContaining({ uriTemplate: 'wcag://criterion/{id}' }), expect.objectContaining({ uriTemplate: 'pactum://reports/{scanId}' }), expect.objectContaining({ uriTemplate: 'pactum://acr/{scanId}', mimeType: 'text/html' })], ttlMs: 300_000, cacheScope: 'public', _meta: { 'io.modelcontextprotocol/serverInfo': expect.objectContaining({ name: 'pactum-dashboard' }) } });
    const { resources } = await modern.listResources();
    expect(resources[0]).toEqual(expect.objectContaining({ uri: REPORT_VIEW, mimeType: 'text/html;profile=mcp-app', _meta: { ui: { csp: {}, prefersBorder: true } } }));
    const read = await modern.readResource({ uri: REPORT_VIEW });
    expect(read.contents[0]).toMatchObject({ uri: REPORT_VIEW, mimeType: 'text/html;profile=mcp-app' });
    expect((read.contents[0] as { text: string }).text).toMatch(/^<!doctype html>/i);
  });

  it('declares the MCP Apps extension and the report App as ext-apps 2 reads them: capability, tools\' _meta.ui, the resource and its _meta.ui', async () => {
    expect(getUiCapability(modern.getServerCapabilities())).toEqual({});
    const { tools } = await modern.listTools();
    const withUi = tools.filter((t) => t._meta).map((t) => t.name);
    expect(withUi).toEqual(['dashboard_get_report', 'dashboard_get_scan_progress', 'dashboard_list_fleet', 'dashboard_scan_site', 'dashboard_scan_summary_for_fleet']);
    for (const t of tools.filter((x) => x._meta)) expect(t._meta).toEqual({ ui: { resourceUri: REPORT_VIEW }, [RESOURCE_URI_META_KEY]: REPORT_VIEW });
    const read = await modern.readResource({ uri: REPORT_VIEW });
    expect(read.contents).toEqual([{ uri: REPORT_VIEW, mimeType: RESOURCE_MIME_TYPE, text: expect.stringMatching(/^<!doctype html>/), _meta: { ui: { csp: {}, prefersBorder: true } } }]);
    // The same document to either revision's client.
    expect((await legacy.readResource({ uri: REPORT_VIEW })).contents).toEqual(read.contents);
  });
});

describe('a 2025-11-25 client (the v1 SDK Client)', () => {
  it('initializes at 2025-11-25, lists the tools and calls one with progress', async () => {
    const res = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } });
    expect(res.status).toBe(200);
    expect(res.body.result.protocolVersion).toBe('2025-11-25');
    // Tasks as 2025-11-25 defines them (the 2026-07-28 extension is declared in server/discover instead).
    expect(res.body.result.capabilities).toEqual({
      tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false }, extensions: { 'io.modelcontextprotocol/ui': {} },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    expect(res.body.result).not.toHaveProperty('resultType');

    const { tools } = await legacy.listTools();
    expect(tools.map((t) => t.name)).toContain('dashboard_scan_page');
    const progress: number[] = [];
    const page = ok(await legacy.callTool({ name: 'dashboard_scan_page', arguments: { url: site.url('/form.html') } }, undefined, { onprogress: (p) => progress.push(p.progress) }));
    expect(page.issues.map((i: { code: string }) => i.code).sort()).toEqual(['label', 'select-name']);
    expect(progress).toEqual([0, 1, 2]);
  });

  it('reads the report App resource, and lists the resource templates', async () => {
    expect(await legacy.listResourceTemplates()).toEqual({ resourceTemplates: [expect.objectContaining({ uriTemplate: 'wcag://criterion/{id}' }), expect.objectContaining({ uriTemplate: 'pactum://reports/{scanId}' }), expect.objectContaining({ uriTemplate: 'pactum://acr/{scanId}', mimeType: 'text/html' })] });
    const read = await legacy.readResource({ uri: REPORT_VIEW });
    expect(read.contents[0]).toMatchObject({ uri: REPORT_VIEW, mimeType: 'text/html;profile=mcp-app', _meta: { ui: { csp: {}, prefersBorder: true } } });
    expect((read.contents[0] as { text: string }).text).toMatch(/^<!doctype html>/);
    // The Apps extension, in the capabilities initialize answered with.
    expect(legacy.getServerCapabilities()?.extensions).toEqual({ [EXTENSION_ID]: {} });
  });

  it('refuses an unsupported MCP-Protocol-Version header with 400 in the API error shape, naming the supported versions', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '1900-01-01' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'Bad Request', statusCode: 400 });
    expect(res.body.message).toBe('Unsupported MCP-Protocol-Version 1900-01-01; supported: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07');
  });

  it('is served without initialize, and gets no 2026-07-28 fields', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' });
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/json/);
    expect(res.body.result.tools.length).toBeGreaterThan(0);
    for (const field of ['resultType', 'ttlMs', 'cacheScope', '_meta']) expect(res.body.result).not.toHaveProperty(field);
    const templates = await post({ jsonrpc: '2.0', id: 2, method: 'resources/templates/list' }, { 'mcp-protocol-version': '2025-11-25' });
    expect(templates.status).toBe(200);
    expect(templates.body).toEqual({ jsonrpc: '2.0', id: 2, result: { resourceTemplates: [expect.objectContaining({ uriTemplate: 'wcag://criterion/{id}' }), expect.objectContaining({ uriTemplate: 'pactum://reports/{scanId}' }), expect.objectContaining({ uriTemplate: 'pactum://acr/{scanId}', mimeType: 'text/html' })] } });
  });
});

describe('2026-07-28 over plain HTTP', () => {
  it('answers with resultType, the server identity in _meta, and the cache hints of tools/list', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }, modernHeaders('tools/list'));
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({ resultType: 'complete', ttlMs: 30_000, cacheScope: 'private' });
    expect(res.body.result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'pactum-dashboard', version: expect.any(String) });
  });

  it('shows a member fewer tools than an org admin, in the same order', async () => {
    const admin = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }, modernHeaders('tools/list'));
    const member = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }, modernHeaders('tools/list'), memberToken);
    const adminNames = admin.body.result.tools.map((t: { name: string }) => t.name);
    const memberNames = member.body.result.tools.map((t: { name: string }) => t.name);
    expect(memberNames.length).toBeLessThan(adminNames.length);
    expect(memberNames).toEqual(adminNames.filter((n: string) => memberNames.includes(n)));
    expect(member.body.result.cacheScope).toBe('private');
  });

  it('gives resources/list, resources/templates/list and resources/read their cache hints, and every result its resultType', async () => {
    const list = await post({ jsonrpc: '2.0', id: 2, method: 'resources/list', params: { _meta: envelope() } }, modernHeaders('resources/list'));
    expect(list.body.result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' });
    const templates = await post({ jsonrpc: '2.0', id: 17, method: 'resources/templates/list', params: { _meta: envelope() } }, modernHeaders('resources/templates/list'));
    expect(templates.status).toBe(200);
    expect(templates.body).toEqual({
      jsonrpc: '2.0',
      id: 17,
      result: { resourceTemplates: [expect.objectContaining({ uriTemplate: 'wcag://criterion/{id}' }), expect.objectContaining({ uriTemplate: 'pactum://reports/{scanId}' }), expect.objectContaining({ uriTemplate: 'pactum://acr/{scanId}', mimeType: 'text/html' })], resultType: 'complete', ttlMs: 300_000, cacheScope: 'public', _meta: { 'io.modelcontextprotocol/serverInfo': expect.objectContaining({ name: 'pactum-dashboard' }) } },
    });
    const read = await post({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: REPORT_VIEW, _meta: envelope() } }, modernHeaders('resources/read', REPORT_VIEW));
    expect(read.body.result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' });
    const call = await post(
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'dashboard_get_org', arguments: { targetOrgId: 'org_nope' }, _meta: envelope() } },
      modernHeaders('tools/call', 'dashboard_get_org'),
    );
    expect(call.status).toBe(200);
    expect(call.body.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(call.body.result).not.toHaveProperty('ttlMs');
  });

  it('answers server/discover with the supported versions, the capabilities and the server', async () => {
    const res = await post({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope() } }, modernHeaders('server/discover'));
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({
      resultType: 'complete',
      // Every version served, as the -32022 below names them: the 2025-era ones through initialize.
      supportedVersions: [MODERN, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'],
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false }, extensions: { 'io.modelcontextprotocol/ui': {}, 'io.modelcontextprotocol/tasks': {} } },
      instructions: expect.stringContaining('pactum dashboard'),
      ttlMs: 300_000,
      cacheScope: 'public',
    });
    expect(res.body.result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'pactum-dashboard', title: 'pactum dashboard' });
  });

  it('refuses a request whose _meta has no protocol version', async () => {
    const { 'io.modelcontextprotocol/protocolVersion': _, ...rest } = envelope();
    const res = await post({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: rest } }, modernHeaders('tools/list'));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 5, error: { code: -32602 } });
  });

  it('refuses a request with the 2026-07-28 header but no _meta at all', async () => {
    const res = await post({ jsonrpc: '2.0', id: 11, method: 'tools/list' }, modernHeaders('tools/list'));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 11, error: { code: -32602 } });
  });

  it('refuses a 2026-07-28 request without its Mcp-Method and MCP-Protocol-Version headers: HeaderMismatch -32020', async () => {
    const res = await post({ jsonrpc: '2.0', id: 12, method: 'tools/list', params: { _meta: envelope() } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 12, error: { code: -32020 } });
  });

  it('refuses an Mcp-Method header that disagrees with the body: HeaderMismatch -32020', async () => {
    const res = await post({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: envelope() } }, modernHeaders('resources/list'));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 6, error: { code: -32020 } });
    expect(res.body.error.message).toMatch(/Mcp-Method/i);
  });

  it('refuses an Mcp-Name header that disagrees with the body: HeaderMismatch -32020', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'dashboard_get_org', arguments: { targetOrgId: 'org_nope' }, _meta: envelope() } },
      modernHeaders('tools/call', 'dashboard_list_orgs'),
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ id: 7, error: { code: -32020 } });
  });

  it('refuses an unsupported version with UnsupportedProtocolVersion -32022, naming every version it serves', async () => {
    const res = await post({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: envelope('2099-01-01') } }, modernHeaders('tools/list', undefined, '2099-01-01'));
    expect(res.status).toBe(400);
    // Both eras, as server/discover names them: a client that speaks only 2025-11-25 learns from the refusal that it may (basic/versioning).
    const discovered = await post({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope() } }, modernHeaders('server/discover'));
    expect(res.body.error.data.supported).toEqual(discovered.body.result.supportedVersions);
    expect(res.body).toEqual({
      jsonrpc: '2.0', id: 8,
      error: { code: -32022, message: 'Unsupported protocol version: 2099-01-01', data: { supported: [MODERN, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'], requested: '2099-01-01' } },
    });
    expect(res.contentType).toMatch(/^application\/json/);
    // Each of them is served: the 2025-era ones through initialize.
    for (const version of res.body.error.data.supported.slice(1) as string[]) {
      const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'curl', version: '1' } } }, { 'mcp-protocol-version': version });
      expect(init.body.result.protocolVersion).toBe(version);
    }
    // A refusal of another kind is passed on untouched.
    const mismatch = await post({ jsonrpc: '2.0', id: 11, method: 'tools/list', params: { _meta: envelope() } }, modernHeaders('resources/list'));
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe(-32020);
    expect(mismatch.body.error).not.toHaveProperty('data.supported');
  });

  it('answers a resource that does not exist with -32602, under either revision', async () => {
    const modernRead = await post({ jsonrpc: '2.0', id: 13, method: 'resources/read', params: { uri: 'ui://pactum/nope', _meta: envelope() } }, modernHeaders('resources/read', 'ui://pactum/nope'));
    expect(modernRead.status).toBe(200);
    expect(modernRead.body).toMatchObject({ id: 13, error: { code: -32602 } });
    const legacyRead = await post({ jsonrpc: '2.0', id: 14, method: 'resources/read', params: { uri: 'ui://pactum/nope' } });
    expect(legacyRead.status).toBe(200);
    expect(legacyRead.body).toMatchObject({ id: 14, error: { code: -32602 } });
  });

  it('refuses malformed params with -32602 and a message that names the field', async () => {
    const read = await post({ jsonrpc: '2.0', id: 15, method: 'resources/read', params: { _meta: envelope() } }, modernHeaders('resources/read'));
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ jsonrpc: '2.0', id: 15, error: { code: -32602, message: expect.stringMatching(/^Invalid params for resources\/read: params\.uri: /) } });
    // A version the server does not serve is refused as such first, whatever the params.
    const unsupported = await post({ jsonrpc: '2.0', id: 16, method: 'resources/read', params: { _meta: envelope('2099-01-01') } }, modernHeaders('resources/read', undefined, '2099-01-01'));
    expect(unsupported.body).toMatchObject({ id: 16, error: { code: -32022 } });
  });

  it('answers an unknown method with 404 and -32601, and an unknown tool with -32602', async () => {
    const unknown = await post({ jsonrpc: '2.0', id: 9, method: 'nope/nothing', params: { _meta: envelope() } }, modernHeaders('nope/nothing'));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ id: 9, error: { code: -32601 } });
    const tool = await post({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'dashboard_nope', arguments: {}, _meta: envelope() } }, modernHeaders('tools/call', 'dashboard_nope'));
    expect(tool.body).toMatchObject({ id: 10, error: { code: -32602, message: 'Unknown tool: dashboard_nope' } });
  });
});

describe(`a 2026-07-28 client against every instance (topology: ${topology})`, () => {
  it('has its consecutive requests answered by the instances in turn, each one successfully', async () => {
    // Which instance the round-robin proxy sent each of the client's HTTP requests to (its
    // per-target counters); with a single instance, that one.
    const servedBy: number[] = [];
    const statuses: number[] = [];
    const counting: typeof fetch = async (input, init) => {
      const before = s.balancer ? [...s.balancer.counts] : [];
      const res = await fetch(input, init);
      servedBy.push(s.balancer ? s.balancer.counts.findIndex((n, i) => n !== (before[i] ?? 0)) : 0);
      statuses.push(res.status);
      return res;
    };
    const client = await modernClient(adminToken, counting);
    try {
      // The client keeps lists for their ttlMs: bypass its cache, so every call is a request.
      const fresh = { cacheMode: 'bypass' } as const;
      const names = (await client.listTools(undefined, fresh)).tools.map((t) => t.name);
      expect(names).toContain('dashboard_get_org');
      expect((await client.listTools(undefined, fresh)).tools.map((t) => t.name)).toEqual(names);
      expect((await client.listResources(undefined, fresh)).resources.map((r) => r.uri)).toContain(REPORT_VIEW);
      expect((await client.listResourceTemplates(undefined, fresh)).resourceTemplates).toHaveLength(3);
      expect((await client.readResource({ uri: REPORT_VIEW }, fresh)).contents[0]).toMatchObject({ uri: REPORT_VIEW, mimeType: 'text/html;profile=mcp-app' });
      // The org the client's token names, written through one instance and read through either.
      for (let i = 0; i < 2; i++) expect(ok(await client.callTool({ name: 'dashboard_get_org', arguments: { targetOrgId: orgId } }))).toMatchObject({ id: orgId, slug: 'acme' });
    } finally {
      await client.close();
    }
    expect(statuses).toEqual(servedBy.map(() => 200));
    expect(servedBy.length).toBeGreaterThanOrEqual(7);
    const first = servedBy[0]!;
    expect(servedBy).toEqual(servedBy.map((_, i) => (first + i) % s.instances.length));
    expect(new Set(servedBy).size).toBe(topology === 'pair' ? 2 : 1);
  });
});
