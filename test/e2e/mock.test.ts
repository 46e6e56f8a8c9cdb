/**
 * The Prism mock of `make mock` and `pactum mock` (src/mock/servers.ts, src/mock/spec.ts, docs/mock.md).
 *
 * The mock specs are derived here from generated/specs with deriveMockSpec (as the generator
 * does for generated/mock/), checked on their own (deterministic, valid OpenAPI 3.1, examples
 * that validate), and then served by three real Prism processes. Every operation of the three
 * specs gets a request (from its request examples where it has them) and must come back with
 * the example the mock spec names, in a response the contract declares: status, content type,
 * body schema, headers (src/http/response-check.ts, the server's own checker, plus header
 * values). Any answer Prism makes up (problem+json, an undeclared status) fails the test.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfig, lintDocument, BaseResolver, Source, type Document } from '@redocly/openapi-core';
import { operations, type OperationSpec } from '../../generated/operations.js';
import { toolNames, tools } from '../../generated/tools.js';
import { deref, loadBundledSpec, type JsonObject } from '../../src/spec/documents.js';
import { deriveMockSpec, EXAMPLE_CONTENT, MCP_LIFECYCLE_EXAMPLES, type MockApi } from '../../src/mock/spec.js';
import { describeMock, publicLine, startMock, type RunningMock } from '../../src/mock/servers.js';
import { runConformance } from '../../src/conformance/index.js';
import {
  basePathOf,
  bodyOf,
  buildRequest,
  contractProblems,
  CREDENTIALS,
  expectedResponse,
  freePorts,
  GIT_LFS_JSON,
  MCP_ACCEPT,
  OBJSTORE_JSON,
  schemaCompiler,
  send,
  specOperation,
  type MockRequest,
  type MockResponse,
} from './mock-helpers/requests.js';

const APIS = ['dashboard', 'legacy', 'batch'] as const satisfies readonly MockApi[];
const bundled = Object.fromEntries(APIS.map((api) => [api, loadBundledSpec(api)])) as Record<MockApi, JsonObject>;
const mockSpecs = Object.fromEntries(APIS.map((api) => [api, deriveMockSpec(api, bundled[api])])) as Record<MockApi, JsonObject>;
const compilers = Object.fromEntries(APIS.map((api) => [api, schemaCompiler(bundled[api])])) as Record<MockApi, ReturnType<typeof schemaCompiler>>;

/** Every operation as each API serves it (the transfer endpoints are in both object APIs). */
const cases = APIS.flatMap((api) => operations.filter((op) => op.apis.includes(api)).map((op) => ({ api, op })));
const byId = (api: MockApi, id: string) => cases.find((c) => c.api === api && c.op.operationId === id)!.op;
const mcpPost = byId('dashboard', 'mcp.post');
const toolStubs = cases.filter((c) => c.op.tool !== null);
/** The vendor JSON types a status of an operation answers in the served mock spec, objstore first. */
const vendorMedia = (api: MockApi, op: OperationSpec, status?: string) =>
  Object.keys((deref(mockSpecs[api], expectedStatusResponse(api, op, status)).content ?? {}) as JsonObject).filter((t) => /\+json$/.test(t));
function expectedStatusResponse(api: MockApi, op: OperationSpec, status?: string): JsonObject {
  const responses = specOperation(mockSpecs[api], op).operation.responses as JsonObject;
  const code = status ?? Object.keys(responses).filter((c) => /^2\d\d$/.test(c)).sort()[0]!;
  return responses[code] as JsonObject;
}
const label = (api: MockApi, op: OperationSpec) => `${api} ${op.method} ${op.path} (${op.operationId})`;

// ---------------------------------------------------------------------------------------------

describe('deriveMockSpec', () => {
  it('is pure and deterministic', () => {
    for (const api of APIS) {
      const before = JSON.stringify(bundled[api]);
      expect(JSON.stringify(deriveMockSpec(api, bundled[api]))).toBe(JSON.stringify(mockSpecs[api]));
      expect(JSON.stringify(bundled[api]), `${api}: the input is left alone`).toBe(before);
    }
  });

  it('gives the same dashboard spec from generated/tools.ts as from the stubs in the spec', () => {
    expect(JSON.stringify(deriveMockSpec('dashboard', bundled.dashboard, Object.values(tools)))).toBe(JSON.stringify(mockSpecs.dashboard));
  });

  it.each(APIS)('is what generated/mock/%s.json holds, once the generator writes it', (api) => {
    const file = new URL(`../../generated/mock/${api}.json`, import.meta.url);
    if (!existsSync(file)) return;
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(mockSpecs[api]);
  });

  it.each(APIS)('makes %s a valid OpenAPI 3.1 document (Redocly, recommended-strict)', async (api) => {
    const config = await createConfig({ extends: ['recommended-strict'], rules: { 'operation-2xx-response': 'off' } });
    const document: Document = { source: new Source(`${api}.mock.json`, JSON.stringify(mockSpecs[api])), parsed: mockSpecs[api] };
    const problems = await lintDocument({ document, config, externalRefResolver: new BaseResolver() });
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it('leaves the tool stubs their 405 only, and adds a 200 example per tool to POST /api/v1/mcp', () => {
    const paths = mockSpecs.dashboard.paths as JsonObject;
    for (const name of toolNames) {
      const post = (paths[`/api/v1/mcp/tools/${name}`] as JsonObject).post as JsonObject;
      expect(Object.keys(post.responses as JsonObject)).toEqual(['405']);
    }
    const ok = (((paths['/api/v1/mcp'] as JsonObject).post as JsonObject).responses as JsonObject)['200'] as JsonObject;
    const names = Object.keys((((ok.content as JsonObject)['application/json'] as JsonObject).examples ?? {}) as JsonObject);
    expect(names.slice(0, 6)).toEqual(['tools_call', 'tool_error', 'unknown_tool', 'invalid_arguments', 'unknown_method', 'ping']);
    expect(names).toEqual(expect.arrayContaining([...MCP_LIFECYCLE_EXAMPLES, ...toolNames]));
    expect(names).toHaveLength(6 + MCP_LIFECYCLE_EXAMPLES.length + toolNames.length);
  });

  it.each(APIS)('gives every JSON response of %s an example, and every example validates', (api) => {
    const doc = mockSpecs[api];
    const compile = compilers[api];
    let count = 0;
    for (const { op } of cases.filter((c) => c.api === api)) {
      const { operation } = specOperation(doc, op);
      for (const [status, raw] of Object.entries((operation.responses ?? {}) as JsonObject)) {
        const res = deref(doc, raw as JsonObject);
        for (const [type, m] of Object.entries((res.content ?? {}) as JsonObject)) {
          const media = m as JsonObject;
          const examples = [
            ...(media.example !== undefined ? [media.example] : []),
            ...Object.values((media.examples ?? {}) as JsonObject).map((e) => deref(doc, e as JsonObject).value!),
          ];
          if (!/json/.test(type)) continue;
          expect(examples.length, `${label(api, op)} ${status} ${type} has an example`).toBeGreaterThan(0);
          // Validated against the contract's schema for this response, not the mock spec's.
          const contract = deref(bundled[api], ((specOperation(bundled[api], op).operation.responses as JsonObject)[status]) as JsonObject);
          const validate = compile(((contract.content as JsonObject)[type] as JsonObject).schema!);
          for (const ex of examples) {
            expect(validate(ex), `${label(api, op)} ${status} ${type}: ${JSON.stringify(validate.errors)}`).toBe(true);
            count++;
          }
        }
        for (const [name, raw] of Object.entries((res.headers ?? {}) as JsonObject)) {
          const h = deref(doc, raw as JsonObject);
          if (h.example === undefined) continue;
          expect(compile(h.schema!)(h.example), `${label(api, op)} ${status} header ${name}`).toBe(true);
        }
      }
    }
    expect(count).toBeGreaterThan(0);
  });

  it('serves downloads the content whose SHA-256 and size are the specs’ example oid and size', () => {
    const oid = (bundled.batch.components as JsonObject).parameters as JsonObject;
    const example = (oid.Oid as JsonObject).example;
    expect(createHash('sha256').update(EXAMPLE_CONTENT).digest('hex')).toBe(example);
    expect(Buffer.byteLength(EXAMPLE_CONTENT)).toBe(6);
  });

  it('moves the object APIs’ base path into their paths, as the contract’s operation table has them', () => {
    for (const api of ['legacy', 'batch'] as const) {
      expect(basePathOf(bundled[api])).toBe('/{org}/{repo}.git/info/lfs');
      expect(basePathOf(mockSpecs[api])).toBe('');
      expect(Object.keys(mockSpecs[api].paths as JsonObject).sort()).toEqual(
        [...new Set(cases.filter((c) => c.api === api).map((c) => c.op.path))].sort(),
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('the mock servers', () => {
  let mock: RunningMock;
  const url = (api: MockApi) => mock.urls[api];

  beforeAll(async () => {
    const [dashboard, legacy, batch] = await freePorts(3);
    mock = await startMock({ ports: { dashboard, legacy, batch }, specs: mockSpecs });
  }, 90_000);

  afterAll(async () => {
    await mock?.stop();
    for (const api of APIS) if (mock) expect(() => process.kill(mock.pids[api], 0), `${api} Prism is gone`).toThrow();
  });

  /** Sends, then checks the response against the contract and against what the served spec promises. */
  async function exchange(
    api: MockApi,
    op: OperationSpec,
    req: MockRequest,
    expectOpts: { status?: string; mediaType?: string; example?: string } = {},
    extra: Record<string, string> = {},
  ): Promise<MockResponse> {
    const res = await send(url(api), req, extra);
    const where = `${label(api, op)} -> ${res.status} ${res.headers['content-type'] ?? ''} ${res.text.slice(0, 300)}`;
    const requestViolations = expectOpts.status === '401' && !extra.prefer ? 'ignore' : 'fail';
    expect(contractProblems(bundled[api], op, res, compilers[api], { requestViolations }), where).toEqual([]);
    const want = expectedResponse(mock.specs[api], op, expectOpts);
    expect(res.status, where).toBe(want.status);
    if (want.mediaType && want.body !== undefined) {
      expect(res.headers['content-type'], where).toBe(want.mediaType);
      expect(bodyOf(res), where).toEqual(want.body);
    } else if (want.mediaType?.startsWith('image/')) {
      // An image has no example a spec can hold as text: Prism answers placeholder bytes of the
      // declared type (docs/mock.md, what the mock cannot do).
      expect(res.headers['content-type'], where).toBe(want.mediaType);
      expect(res.body?.length, where).toBeGreaterThan(0);
    } else {
      expect(res.body, where).toBeNull();
    }
    for (const [name, value] of Object.entries(want.headers)) expect(res.headers[name], `${where}: header ${name}`).toBe(value);
    return res;
  }

  it('prints the URLs, one API per port, MOCK_PORT_BASE and the Prefer example names', () => {
    const text = describeMock(mock);
    for (const api of APIS) expect(text).toContain(mock.urls[api]);
    expect(text).toContain(`One API per port: ${APIS.map((a) => `${a} ${new URL(mock.urls[a]).port}`).join(', ')} (MOCK_PORT_BASE=N moves them to N, N+1, N+2).`);
    for (const name of [...MCP_LIFECYCLE_EXAMPLES, ...toolNames]) expect(text).toContain(name);
  });

  describe('every operation answers the example that follows its request', () => {
    const plain = cases.filter((c) => c.op.tool === null);
    /** What the front picks: the batch example named by the request's operation (and tus), 202 for a legacy announcement. */
    const followed = (op: OperationSpec, req: MockRequest): { example?: string; status?: string } => {
      if (op.operationId === 'legacy.createObject') return { status: '202' };
      if (op.operationId !== 'batch.batch') return {};
      const body = JSON.parse(req.body!) as { operation: string; transfers?: string[] };
      return { example: body.operation === 'download' ? 'download' : body.transfers?.includes('tus') ? 'upload_tus' : 'upload' };
    };
    it.each(plain.map((c) => [label(c.api, c.op), c] as const))('%s', async (_, { api, op }) => {
      const media = vendorMedia(api, op);
      if (api === 'dashboard' || media.length === 0) {
        const req = buildRequest(bundled[api], op);
        await exchange(api, op, req, followed(op, req));
        return;
      }
      // Git LFS's media type and the objstore one, for requests and responses alike.
      for (const type of media) {
        const req = buildRequest(bundled[api], op, { mediaType: type });
        await exchange(api, op, req, { mediaType: type, ...followed(op, req) });
      }
    });
  });

  describe('the conformance runner against the mock', () => {
    /** The flow checks that need a server with state: docs/mock.md lists them as the mock's limitations. */
    const LIMITATIONS: Record<'legacy' | 'batch', string[]> = {
      legacy: ['objects.download download', 'objects.download download a range'],
      batch: ['objects.download download', 'objects.download download a range', 'tus.head tus HEAD', 'objects.download download', 'objects.download download a range', 'locks.create lock it again'],
    };
    it.each(APIS)('passes on %s, but for the documented limitations of a stateless mock', async (api) => {
      const skipped: string[] = [];
      const results = await runConformance({
        target: url(api), apis: [api], token: 'any-token', basic: 'ada:any-password', repo: 'acme/site', seed: 1, maxExamples: 2, concurrency: 4,
        onSkip: (s) => skipped.push(s.phase),
      });
      const failed = results.filter((r) => r.problems.length).map((r) => `${r.operationId} ${r.name}: ${r.problems.join('; ')}`);
      expect(failed).toEqual([]);
      expect(skipped).toEqual([]);
      const limited = results.filter((r) => r.limitation).map((r) => `${r.operationId} ${r.name}`);
      expect(limited).toEqual(api === 'dashboard' ? [] : LIMITATIONS[api]);
      expect(results.filter((r) => r.phase === (api === 'dashboard' ? 'mcp' : 'flow')).length).toBeGreaterThan(5);
    });

    it('pointed at one port with API=all, says which API that port serves and checks that one only', async () => {
      const notices: string[] = [];
      const results = await runConformance({ target: url('legacy'), apis: ['dashboard', 'legacy', 'batch'], repo: 'acme/site', seed: 1, maxExamples: 1, phases: ['examples', 'generated'], onNotice: (n) => notices.push(n) });
      expect(notices).toEqual([expect.stringContaining(`${url('legacy')} is the pactum mock's legacy port: it serves only the legacy API`)]);
      expect(new Set(results.map((r) => r.api))).toEqual(new Set(['legacy']));
      expect(results.filter((r) => r.problems.length)).toEqual([]);
      await expect(runConformance({ target: url('legacy'), apis: ['dashboard'], repo: 'acme/site', seed: 1, maxExamples: 0 })).rejects.toThrow(/serves only the legacy API.*run with --api legacy/);
    });

    it('says which phases it skips without credentials', async () => {
      const skipped: { phase: string; reason: string }[] = [];
      await runConformance({ target: url('batch'), apis: ['batch'], repo: 'acme/site', seed: 1, maxExamples: 0, phases: ['mcp', 'flow'], onSkip: (s) => skipped.push(s) });
      expect(skipped).toEqual([{ phase: 'flow', reason: expect.stringMatching(/^no --basic/) }]);
      const dashboard: string[] = [];
      await runConformance({ target: url('dashboard'), apis: ['dashboard'], repo: 'acme/site', seed: 1, maxExamples: 0, phases: ['mcp'], onSkip: (s) => dashboard.push(s.phase) });
      expect(dashboard).toEqual(['mcp']);
    });
  });

  describe('the front follows the request where Prism alone would answer one example', () => {
    const OID = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    const batchRequest = (body: unknown) => ({
      method: 'POST',
      path: '/acme/site.git/info/lfs/objects/batch',
      headers: { accept: GIT_LFS_JSON, 'content-type': GIT_LFS_JSON, ...CREDENTIALS.basicAuth },
      body: JSON.stringify(body),
    });

    it('answers a batch upload with upload actions for each requested object, pointing at the mock, and a whole upload and download works', async () => {
      const op = byId('batch', 'batch.batch');
      const bytes = Buffer.from('client bytes\n');
      const oid = createHash('sha256').update(bytes).digest('hex');
      const req = batchRequest({ operation: 'upload', transfers: ['basic'], objects: [{ oid, size: bytes.length }, { oid: OID, size: 0 }] });
      const res = await send(url('batch'), req);
      expect(contractProblems(bundled.batch, op, res, compilers.batch)).toEqual([]);
      const answer = bodyOf(res) as { transfer: string; objects: { oid: string; size: number; actions: Record<string, { href: string; header: Record<string, string> }> }[] };
      expect(answer.transfer).toBe('basic');
      expect(answer.objects.map((o) => [o.oid, o.size])).toEqual([[oid, bytes.length], [OID, 0]]);
      const { upload, verify } = answer.objects[0]!.actions;
      expect(upload!.href).toBe(`${url('batch')}/acme/site.git/info/lfs/content/${oid}`);
      const put = await fetch(upload!.href, { method: 'PUT', headers: { ...upload!.header, 'content-type': 'application/octet-stream' }, body: bytes });
      expect(put.status).toBe(200);
      await put.body?.cancel();
      const verified = await fetch(verify!.href, { method: 'POST', headers: { ...verify!.header, 'content-type': GIT_LFS_JSON, accept: GIT_LFS_JSON }, body: JSON.stringify({ oid, size: bytes.length }) });
      expect(verified.status).toBe(200);
      await verified.body?.cancel();
      // Bytes that do not hash to the oid are refused, as by the server.
      const wrong = await fetch(upload!.href, { method: 'PUT', headers: { ...upload!.header, 'content-type': 'application/octet-stream' }, body: 'other bytes' });
      expect(wrong.status).toBe(422);
      expect(((await wrong.json()) as { message: string }).message).toMatch(/SHA-256/);

      const tus = bodyOf(await send(url('batch'), batchRequest({ operation: 'upload', transfers: ['tus', 'basic'], objects: [{ oid, size: bytes.length }] }))) as typeof answer;
      expect(tus.transfer).toBe('tus');
      expect(tus.objects[0]!.actions.upload!.href).toBe(`${url('batch')}/acme/site.git/info/lfs/tus/${oid}`);

      const down = bodyOf(await send(url('batch'), batchRequest({ operation: 'download', objects: [{ oid, size: bytes.length }] }))) as typeof answer;
      expect(Object.keys(down.objects[0]!.actions)).toEqual(['download']);
      const got = await fetch(down.objects[0]!.actions.download!.href, { headers: down.objects[0]!.actions.download!.header });
      expect(got.status).toBe(200);
      expect(got.headers.get('x-pactum-mock')).toBe('prism; stateless; api=batch');
      await got.body?.cancel(); // the example's bytes: the mock keeps nothing
    });

    it('answers tools/call with the result of the tool that was called, with the request\'s id, and refuses invalid arguments as the server does', async () => {
      const call = (id: number, name: string, args: unknown) =>
        send(url('dashboard'), { method: 'POST', path: '/api/v1/mcp', headers: { accept: MCP_ACCEPT, 'content-type': 'application/json', ...CREDENTIALS.bearerAuth }, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }) });
      for (const [i, name] of ['dashboard_list_orgs', 'dashboard_get_report', 'dashboard_list_wcag_criteria'].entries()) {
        const res = await call(100 + i, name, (tools[name as keyof typeof tools].inputSchema.examples as unknown[])[0]);
        expect(contractProblems(bundled.dashboard, mcpPost, res, compilers.dashboard)).toEqual([]);
        const message = bodyOf(res) as { id: number; result: { structuredContent: unknown } };
        expect(message.id).toBe(100 + i);
        expect(message.result.structuredContent).toEqual((tools[name as keyof typeof tools].outputSchema.examples as unknown[])[0]);
      }
      const report = (bodyOf(await call(7, 'dashboard_get_report', { scanId: 'scn_01jdq3v8k2m5n7p9r1s3t5v7x9' })) as { result: { structuredContent: { status: string; report: { pages: { issues: unknown[] }[] } } } }).result.structuredContent;
      expect(report.status).toBe('completed');
      expect(report.report.pages.length).toBeGreaterThan(1);
      expect(report.report.pages.flatMap((p) => p.issues).length).toBeGreaterThan(1);
      const invalid = bodyOf(await call(8, 'dashboard_get_org', { targetOrgId: 42 })) as { id: number; result: { isError: boolean; content: { text: string }[] } };
      expect(invalid.id).toBe(8);
      expect(invalid.result.isError).toBe(true);
      expect(JSON.parse(invalid.result.content[0]!.text)).toMatchObject({ error: 'invalid_arguments', message: expect.stringMatching(/targetOrgId/) });
      const unknown = bodyOf(await call(9, 'dashboard_nope', {})) as { id: number; error: { code: number; message: string } };
      expect(unknown).toMatchObject({ id: 9, error: { code: -32602, message: 'Unknown tool: dashboard_nope' } });
      const method = bodyOf(await send(url('dashboard'), { method: 'POST', path: '/api/v1/mcp', headers: { accept: MCP_ACCEPT, 'content-type': 'application/json', ...CREDENTIALS.bearerAuth }, body: '{"jsonrpc":"2.0","id":10,"method":"no/such"}' })) as { id: number; error: { code: number } };
      expect(method).toMatchObject({ id: 10, error: { code: -32601 } });
    });

    it('answers what a server\'s router answers before any operation, in the API\'s own error shape: 405 with Allow, 400 for JSON that does not parse, 415', async () => {
      const mcp = await send(url('dashboard'), { method: 'GET', path: '/api/v1/mcp', headers: { accept: MCP_ACCEPT, ...CREDENTIALS.bearerAuth } });
      expect(mcp.status).toBe(405);
      expect(mcp.headers.allow).toBe('POST');
      expect(bodyOf(mcp)).toMatchObject({ error: 'Method Not Allowed', statusCode: 405 });
      const locks = await send(url('batch'), { method: 'DELETE', path: '/acme/site.git/info/lfs/locks', headers: { accept: GIT_LFS_JSON } });
      expect(locks.status).toBe(405);
      expect(locks.headers.allow).toBe('GET, POST');
      expect(locks.headers['content-type']).toBe(GIT_LFS_JSON);
      expect(bodyOf(locks)).toMatchObject({ message: expect.stringMatching(/DELETE is not served/) });
      const broken = await send(url('batch'), { ...batchRequest({}), body: '{"not": json' });
      expect(broken.status).toBe(400);
      expect(contractProblems(bundled.batch, byId('batch', 'batch.batch'), broken, compilers.batch)).toEqual([]);
      const upload = byId('batch', 'objects.upload');
      expect(upload).toBeDefined();
    });
  });

  describe('every tool stub answers 405 with Allow', () => {
    it.each(toolStubs.map((c) => [c.op.tool!, c] as const))('%s', async (name, { api, op }) => {
      const res = await exchange(api, op, buildRequest(bundled[api], op, {}), { status: '405' });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('');
      expect(bodyOf(res)).toEqual({
        error: 'Method Not Allowed',
        statusCode: 405,
        message: `${name} is a discovery stub; call it with a JSON-RPC tools/call request to POST /api/v1/mcp`,
      });
      // Whatever is sent, as the real stub: no body, or one the tool's input schema refuses.
      for (const body of [undefined, '{"nonsense":true}']) {
        const other = await send(url(api), { method: 'POST', path: op.path, headers: body ? { 'content-type': 'application/json' } : {}, body });
        expect(other.status, `${name} with body ${body}`).toBe(405);
        expect(contractProblems(bundled[api], op, other, compilers[api])).toEqual([]);
      }
    });
  });

  describe('POST /api/v1/mcp with Prefer: example=<tool> answers that tool’s result', () => {
    it.each(toolNames.map((n) => [n] as const))('%s', async (name) => {
      const req = buildRequest(bundled.dashboard, mcpPost, { requestExample: 'tools_call' });
      const call = JSON.parse(req.body!) as { params: { name: string; arguments: unknown } };
      call.params = { name, arguments: (tools[name].inputSchema.examples as unknown[])[0] };
      req.body = JSON.stringify(call);
      const res = await exchange('dashboard', mcpPost, req, { example: name }, { prefer: `example=${name}` });
      const message = bodyOf(res) as { id: number; result: { structuredContent: unknown; content: { type: string; text: string }[] } };
      expect(message.id).toBe(1);
      const out = message.result.structuredContent;
      expect(tools[name].validateOutput(out), JSON.stringify(tools[name].validateOutput.errors)).toBe(true);
      expect(out).toEqual((tools[name].outputSchema.examples as unknown[])[0]);
      expect(message.result.content).toEqual([{ type: 'text', text: JSON.stringify(out) }]);
    });
  });

  describe('POST /api/v1/mcp answers each request example with the response example of the same name', () => {
    const requests = Object.keys(((((specOperation(bundled.dashboard, mcpPost).operation.requestBody as JsonObject).content as JsonObject)['application/json'] as JsonObject).examples ?? {}) as JsonObject);
    it.each(requests.map((n) => [n] as const))('%s', async (name) => {
      const req = buildRequest(bundled.dashboard, mcpPost, { requestExample: name });
      const res = await exchange('dashboard', mcpPost, req, { example: name }, { prefer: `example=${name}` });
      const message = bodyOf(res) as { id: unknown; result: JsonObject };
      expect(message.id).toEqual((JSON.parse(req.body!) as { id: unknown }).id);
      if (name === 'initialize') {
        expect(message.result).toEqual({
          protocolVersion: '2025-11-25',
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: 'pactum-dashboard', version: '3.4.0' },
        });
      }
      if (name === 'tools_list') {
        const listed = message.result.tools as JsonObject[];
        expect(listed.map((t) => t.name)).toEqual([...toolNames]);
        for (const t of listed) {
          const spec = tools[t.name as keyof typeof tools];
          expect(t).toEqual({
            name: spec.name,
            title: spec.title,
            description: spec.description,
            inputSchema: spec.inputSchema,
            outputSchema: spec.outputSchema,
            annotations: { title: spec.title, ...spec.annotations },
          });
        }
      }
    });

    it('answers the same examples as an SSE stream when the client prefers text/event-stream', async () => {
      const req = buildRequest(bundled.dashboard, mcpPost, { requestExample: 'initialize' });
      req.headers.accept = 'text/event-stream, application/json';
      const res = await exchange('dashboard', mcpPost, req, { example: 'initialize', mediaType: 'text/event-stream' }, { prefer: 'example=initialize' });
      expect(res.text).toMatch(/^event: message\ndata: \{"jsonrpc":"2.0","id":0,"result":\{"protocolVersion"/);
    });
  });

  describe('every declared status, chosen with Prefer: code=<status>', () => {
    const withStatuses = cases
      .filter((c) => c.op.tool === null)
      .map((c) => [label(c.api, c.op), c, Object.keys((specOperation(mockSpecs[c.api], c.op).operation.responses ?? {}) as JsonObject)] as const);
    it.each(withStatuses)('%s', async (_, { api, op }, statuses) => {
      // The mock declares a subset of the contract's statuses (the stubs drop their 200).
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(statuses));
      for (const status of statuses) {
        // Each vendor type the status answers in, or no Accept at all (downloads, empty bodies).
        // The dashboard's one type per status (HTML for the docs page, JSON for its errors).
        const media = api === 'dashboard' ? [op.operationId === 'mcp.post' ? undefined : op.responses[status]?.mediaTypes[0]] : [...vendorMedia(api, op, status), undefined];
        for (const mediaType of media) {
          await exchange(api, op, buildRequest(bundled[api], op, { mediaType }), { status, mediaType }, { prefer: `code=${status}` });
        }
      }
    });
  });

  describe('an MCP SDK client', () => {
    it('connects, lists the tools and calls each one, with nothing but its own transport', async () => {
      const client = new Client({ name: 'mock-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${url('dashboard')}/api/v1/mcp`), {
        requestInit: { headers: CREDENTIALS.bearerAuth },
      });
      await client.connect(transport);
      try {
        expect(client.getServerVersion()).toEqual({ name: 'pactum-dashboard', version: '3.4.0' });
        const { tools: listed } = await client.listTools();
        expect(listed.map((t) => t.name)).toEqual([...toolNames]);
        await client.ping();
        for (const name of toolNames) {
          // The SDK validates structuredContent against the listed output schema itself.
          const result = await client.callTool({ name, arguments: (tools[name].inputSchema.examples as Record<string, unknown>[])[0] });
          expect(result.structuredContent, name).toEqual((tools[name].outputSchema.examples as unknown[])[0]);
        }
      } finally {
        await client.close();
      }
    });
  });

  // What docs/mock.md says about Prism; these keep it true.
  describe('Prism behaviour documented in docs/mock.md', () => {
    const batchOp = () => byId('batch', 'batch.batch');

    it('serves the object APIs under /{org}/{repo}.git/info/lfs for any org and repo, and not at the bare paths', async () => {
      const op = batchOp();
      const req = buildRequest(bundled.batch, op, { mediaType: GIT_LFS_JSON });
      await exchange('batch', op, { ...req, path: req.path.replace('/acme/site.git/', '/globex/web-app.git/') }, { mediaType: GIT_LFS_JSON });
      const bare = await send(url('batch'), { ...req, path: '/objects/batch' });
      expect(bare.status).toBe(404);
      expect(bare.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(bare.text).type).toMatch(/NO_PATH_MATCHED_ERROR/);
    });

    it('answers POST /api/v1/mcp without credentials with the spec’s 401, and accepts a bearer token or a session cookie', async () => {
      const req = buildRequest(bundled.dashboard, mcpPost);
      const { authorization: _, ...anonymous } = req.headers;
      const res = await exchange('dashboard', mcpPost, { ...req, headers: anonymous }, { status: '401' });
      expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${url('dashboard')}/.well-known/oauth-protected-resource"`);
      await exchange('dashboard', mcpPost, { ...req, headers: { ...anonymous, ...CREDENTIALS.sessionCookie } });
    });

    it('lets anonymous clients use the object APIs where the spec allows it, and answers 401 where it does not', async () => {
      const op = batchOp();
      const req = buildRequest(bundled.batch, op, { mediaType: GIT_LFS_JSON });
      const { authorization: _, ...anonymous } = req.headers;
      await exchange('batch', op, { ...req, headers: anonymous }, { mediaType: GIT_LFS_JSON });
      const upload = byId('legacy', 'objects.upload');
      const put = buildRequest(bundled.legacy, upload);
      const { authorization: __, ...noAuth } = put.headers;
      const res = await exchange('legacy', upload, { ...put, headers: noAuth }, { status: '401' });
      expect(res.headers['lfs-authenticate']).toBe('Basic realm="pactum"');
      // Transfer tokens must be sent as Bearer: the scheme the spec declares (and the server reads).
      const tus = byId('batch', 'tus.head');
      const head = buildRequest(bundled.batch, tus);
      expect((await send(url('batch'), { ...head, headers: { ...head.headers, authorization: 'Transfer eyJyIjoiYWNtZS9zaXRlIn0.c2ln' } })).status).toBe(401);
    });

    it('negotiates the vendor media types: objstore by default, charset parameters accepted, plain JSON refused with its own 406', async () => {
      const op = batchOp();
      const req = buildRequest(bundled.batch, op, { mediaType: GIT_LFS_JSON });
      const { accept: _, ...noAccept } = req.headers;
      await exchange('batch', op, { ...req, headers: noAccept }, { mediaType: OBJSTORE_JSON });
      await exchange('batch', op, { ...req, headers: { ...noAccept, accept: '*/*' } }, { mediaType: OBJSTORE_JSON });
      const charset = { accept: `${GIT_LFS_JSON}; charset=utf-8`, 'content-type': `${GIT_LFS_JSON}; charset=utf-8` };
      await exchange('batch', op, { ...req, headers: { ...req.headers, ...charset } }, { mediaType: GIT_LFS_JSON });
      const json = await send(url('batch'), { ...req, headers: { ...req.headers, accept: 'application/json' } });
      expect(json.status).toBe(406);
      // Prism's own problem+json for a status the operation declares, rewritten by the front into the spec's shape.
      expect(json.headers['content-type']).toBe(OBJSTORE_JSON);
      expect(contractProblems(bundled.batch, op, json)).toEqual([]);
      const text = await send(url('batch'), { ...req, headers: { ...req.headers, 'content-type': 'text/plain' } });
      expect(text.status).toBe(415);
    });

    it('answers Prism’s own 404 for an example or a status the spec does not have, which the contract check refuses', async () => {
      const req = buildRequest(bundled.dashboard, mcpPost);
      const unknownExample = await send(url('dashboard'), req, { prefer: 'example=nope' });
      expect(unknownExample.status).toBe(404);
      expect(contractProblems(bundled.dashboard, mcpPost, unknownExample)).not.toEqual([]);
      const unknownCode = await send(url('dashboard'), req, { prefer: 'code=418' });
      expect(unknownCode.status).toBe(404);
      expect(contractProblems(bundled.dashboard, mcpPost, unknownCode)).not.toEqual([]);
    });

    it('logs no Prism violation for the tool stubs, and no address but the mock\'s own', async () => {
      for (const { op } of toolStubs.slice(0, 5)) expect((await fetch(`${url('dashboard')}${op.path}`, { method: 'POST' })).status).toBe(405);
      await new Promise((r) => setTimeout(r, 200)); // Prism's log lines follow its answer
      const lines = APIS.flatMap((api) => mock.output(api).map((line) => ({ api, line })));
      // (Other tests send invalid requests on purpose: Prism reports those, rightly.)
      expect(lines.filter(({ line }) => /Violation: response\.header/.test(line)).map(({ line }) => line)).toEqual([]);
      const foreign = lines.filter(({ api, line }) => [...line.matchAll(/https?:\/\/[\w.[\]:-]+:\d+/g)].some((m) => m[0] !== url(api)));
      expect(foreign.map(({ line }) => line)).toEqual([]);
      // Prism's own listening line (printed at start, maybe out of the kept lines by now) names the mock's port.
      expect(publicLine('[CLI] ▶  start     Prism is listening on http://127.0.0.1:45678', 'http://127.0.0.1:45678', url('batch'))).toBe(`[CLI] ▶  start     Prism is up behind the mock's front at ${url('batch')}, which opens once all three are up`);
    });

    it('points the example links at the mock itself', async () => {
      const op = batchOp();
      const res = await exchange('batch', op, buildRequest(bundled.batch, op, { mediaType: GIT_LFS_JSON }), { mediaType: GIT_LFS_JSON });
      const href = ((bodyOf(res) as { objects: { actions: { download: { href: string } } }[] }).objects[0]!.actions.download.href);
      expect(href).toBe(`${url('batch')}/acme/site.git/info/lfs/content/5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03`);
      const download = await fetch(href);
      expect(download.status).toBe(200);
      expect(await download.text()).toBe(EXAMPLE_CONTENT);
    });
  });
});
