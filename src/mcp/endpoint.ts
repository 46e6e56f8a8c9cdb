/**
 * POST /api/v1/mcp (operation mcp.post). The router has already matched, read and validated the
 * JSON-RPC message and authenticated the caller. Two protocol eras share the endpoint:
 *
 * - 2026-07-28 (a request carrying `io.modelcontextprotocol/protocolVersion` in `params._meta`):
 *   served by the SDK's handler for that revision (createMcpHandler), which checks the version,
 *   the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers against the body, answers
 *   `server/discover`, and adds `resultType`, the server's identity and the cache hints.
 * - 2025-11-25 and earlier (no such `_meta`; `initialize` optional): one fresh MCP server per
 *   request on the SDK's stateless Streamable HTTP transport, as the SDK's classification
 *   (isLegacyRequest) routes it. A `tools/call` with `params.task` (the Tasks of 2025-11-25) is
 *   answered here with a task: the SDK keeps that revision's task vocabulary but no runtime for
 *   it, and its tools/call refuses a CreateTaskResult; tasks/* are served by the server (tasks.ts).
 *
 * The transport's Response is written back through Koa: one JSON body, or an SSE stream when the
 * request asks for progress.
 */
import { Readable } from 'node:stream';
import {
  classifyInboundRequest,
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type CallToolRequest,
  type CallToolResult,
  type CreateTaskResult,
} from '@modelcontextprotocol/server';
import { CallToolRequestSchema, InitializeRequestSchema, ListResourcesRequestSchema, ListToolsRequestSchema, PingRequestSchema, ReadResourceRequestSchema } from '@modelcontextprotocol/core';
import { clientGone } from '../http/client-gone.js';
import { HttpError } from '../http/errors.js';
import { negotiate } from '../http/media.js';
import { stateOf } from '../http/state.js';
import { writeStatus, type Handler } from '../http/router.js';
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import type { Identity } from '../domain/access/identity.js';
import type { Logger } from '../telemetry/log.js';
import { lookupTable } from '../ground/lookup-table.js';
import type { CallTool } from './dispatch.js';
import { tools } from '../../generated/tools.js';
import { createMcpServer, MODERN_PROTOCOL_VERSIONS, SERVER_INFO } from './server.js';
import { toolsReadFor } from './resources.js';
import { createConfirmations, envelopeDeclaresFormElicitation, mayAskConfirmation } from './confirmation.js';
import { traceContextOf } from './tool-context.js';
import { loadOrCreateKey, parseKey } from '../ground/keys.js';
import { grants } from '../domain/access/permissions.js';
import type { ScanTasks } from './tasks.js';

/**
 * The SDK answers a known method whose params do not parse with -32603 (resources/read) or a dump
 * of its schema errors; JSON-RPC says -32602, with a message a person can act on.
 */
const REQUEST_SCHEMAS = lookupTable<{ safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: { path: PropertyKey[]; message: string }[] } } }>({
  initialize: InitializeRequestSchema,
  'tools/call': CallToolRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  ping: PingRequestSchema,
});

/** The methods both revisions serve: under 2026-07-28 their params are checked here too. */
const SHARED_METHODS = new Set(['tools/call', 'tools/list', 'resources/list', 'resources/read']);

/** The request parsed by the SDK's schema of its method, or the JSON-RPC refusal of its params. */
function parseParams(body: { method?: string; id?: unknown }): { refusal: object } | { parsed: unknown } {
  const schema = body.id === undefined ? undefined : REQUEST_SCHEMAS[body.method ?? ''];
  if (!schema) return { parsed: body };
  const parsed = schema.safeParse(body);
  if (parsed.success) return { parsed: parsed.data };
  const issues = (parsed.error?.issues ?? []).slice(0, 3).map((i) => `${i.path.join('.') || 'params'}: ${i.message}`);
  return { refusal: { jsonrpc: '2.0', id: body.id, error: { code: ProtocolErrorCode.InvalidParams, message: `Invalid params for ${body.method}: ${issues.join('; ')}` } } };
}

const wantsProgress = (body: { params?: { _meta?: { progressToken?: unknown } } }) => body.params?._meta?.progressToken !== undefined;

/** Tools whose input schema declares `x-mcp-header` parameters (the SDK checks those headers against the arguments). */
const HEADER_TOOLS = new Set<string>(Object.values(tools).filter((t) => JSON.stringify(t.inputSchema).includes('"x-mcp-header"')).map((t) => t.name));

/** An HTTP header's value without the optional whitespace around it, or undefined when absent. */
const headerValue = (value: string) => (value === '' ? undefined : value.replace(/^[ \t]+|[ \t]+$/g, ''));

/**
 * Whether a 2026-07-28 tools/call (params already checked by the SDK's CallToolRequestSchema) may
 * be called straight, as a 2025-era one is: a known tool answered in JSON (no progress token), no
 * multi round-trip (no requestState or inputResponses, and no confirmation a client that declares
 * form elicitation could be asked), no task parameter, and a request the SDK's own classification
 * (classifyInboundRequest: the envelope, the version and method headers against the body) routes
 * to the modern era, its standard headers present and agreeing with the body as they are (an
 * encoded or missing `Mcp-Name` is the SDK's to judge). Everything else goes through the SDK's
 * handler, which answers each refusal in that revision's words.
 */
function modernCallStraight(body: { id?: unknown; params?: unknown }, call: CallToolRequest, headers: { version: string; method: string; name: string }): boolean {
  const params = call.params as CallToolRequest['params'] & { requestState?: unknown; inputResponses?: unknown };
  const meta = (body.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const claimed = meta?.['io.modelcontextprotocol/protocolVersion'];
  if (body.id === undefined || meta?.progressToken !== undefined || params.task !== undefined) return false;
  if (params.requestState !== undefined || params.inputResponses !== undefined) return false;
  if (!Object.hasOwn(tools, params.name) || HEADER_TOOLS.has(params.name)) return false;
  if (mayAskConfirmation(params.name) && envelopeDeclaresFormElicitation(meta)) return false;
  const version = headerValue(headers.version);
  const method = headerValue(headers.method);
  const name = headerValue(headers.name);
  if (version !== claimed || method !== 'tools/call' || name !== params.name) return false;
  return classifyInboundRequest({ httpMethod: 'POST', body, protocolVersionHeader: version, mcpMethodHeader: method, mcpNameHeader: name }).kind === 'modern';
}

/**
 * A 2026-07-28 result as the SDK's server and encoder send it: a result without `content` (a
 * task's) gets an empty one unless it is of another family (`task`, `inputRequests`,
 * `requestState`); `resultType` is complete unless the answer names another (a task's); and the
 * server's identity goes into `_meta` unless already there.
 */
function encodeModern(result: object): object {
  const given = result as { content?: unknown };
  const r = (given.content === undefined && !('task' in given) && !('inputRequests' in given) && !('requestState' in given) ? { ...given, content: [] } : given) as { resultType?: unknown; _meta?: unknown };
  const stamped = r.resultType === undefined ? { ...r, resultType: 'complete' } : r;
  const meta = stamped._meta;
  if (meta === undefined) return { ...stamped, _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } };
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta) || (meta as Record<string, unknown>)[SERVER_INFO_META_KEY] !== undefined) return stamped;
  return { ...stamped, _meta: { ...meta, [SERVER_INFO_META_KEY]: SERVER_INFO } };
}

/**
 * A 2025-era tools/call answered in JSON (no progress to stream), called straight: a per-request SDK
 * Server and transport cost more than most tools do (scripts/bench/mcp.ts). The request was
 * parsed by the SDK's own CallToolRequestSchema (invalidParams), and the answer is the JSON-RPC
 * response the SDK writes for the same call, errors included (its McpError message and code).
 * Every other message, and every call that reports progress, goes through the SDK. `asTask`:
 * for a call with `params.task`, what its result becomes (the CreateTaskResult, tasks.ts).
 */
async function directToolCall(
  callTool: CallTool,
  caller: Identity,
  request: { requestId: string; log: Logger; signal: AbortSignal },
  id: string | number,
  call: CallToolRequest,
  asTask?: (result: CallToolResult) => Promise<CreateTaskResult | CallToolResult>,
  encode: (result: object) => object = (result) => result,
) {
  try {
    const result = await callTool(call.params.name, call.params.arguments, {
      caller,
      log: request.log,
      requestId: request.requestId,
      progress: () => Promise.resolve(),
      signal: request.signal,
      trace: traceContextOf(call.params._meta),
    });
    // A 2025-era call is never asked a question (no confirm given): its answer is a tool result.
    return { jsonrpc: '2.0', id, result: encode(asTask ? await asTask(result as CallToolResult) : result) };
  } catch (err) {
    if (err instanceof ProtocolError) return { jsonrpc: '2.0', id, error: { code: err.code, message: err.message, ...(err.data !== undefined ? { data: err.data } : {}) } };
    // The SDK would put the error's own text here; a failure's detail belongs in the log only.
    request.log.error({ err, tool: call.params.name }, 'tools/call failed');
    return { jsonrpc: '2.0', id, error: { code: ProtocolErrorCode.InternalError, message: `Internal error; the request id ${request.requestId} identifies it in the server log` } };
  }
}

/**
 * Every version the endpoint serves, newest first. A -32022 names them all (2026-07-28
 * basic/versioning: the server "MUST respond with an UnsupportedProtocolVersionError listing the
 * versions it does support"), and so does server/discover's `supportedVersions`, which that
 * error's list must agree with. The SDK's handler names only the 2026-07-28-era ones in both,
 * and has no option for more.
 */
export const SERVED_PROTOCOL_VERSIONS = [...new Set([...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS])];

/**
 * The SDK's answer with every served version named: in a -32022's `data.supported` and in
 * server/discover's `supportedVersions` (JSON answers; the rest as they are).
 */
async function namingEveryVersion(response: Response, method: string): Promise<Response> {
  const refusal = response.status === 400;
  if (!(refusal || (response.status === 200 && method === 'server/discover')) || !(response.headers.get('content-type') ?? '').startsWith('application/json')) return response;
  const text = await response.text();
  const headers = new Headers(response.headers);
  let body: { error?: { code?: unknown; data?: Record<string, unknown> }; result?: { supportedVersions?: unknown } } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    /* not JSON: passed on as it is */
  }
  if (refusal && body?.error?.code === ProtocolErrorCode.UnsupportedProtocolVersion) body.error.data = { ...body.error.data, supported: SERVED_PROTOCOL_VERSIONS };
  else if (!refusal && Array.isArray(body?.result?.supportedVersions)) body.result.supportedVersions = SERVED_PROTOCOL_VERSIONS;
  else return new Response(text, { status: response.status, headers });
  headers.delete('content-length');
  return new Response(JSON.stringify(body), { status: response.status, headers });
}

/** Whether a request's _meta names a 2026-07-28-era version this server serves. */
function isServedModern(body: { params?: unknown }): boolean {
  const meta = (body.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const version = meta?.['io.modelcontextprotocol/protocolVersion'];
  return typeof version === 'string' && MODERN_PROTOCOL_VERSIONS.includes(version);
}

/**
 * A request that names no 2026-07-28 version anywhere (no `_meta` protocol version, and no
 * `MCP-Protocol-Version` header or a 2025-era one) is 2025-era without asking the SDK, whose
 * classification wants a web Request built for it (a tenth of a plain tools/call's time). Every
 * other request is classified by the SDK.
 */
function plainly2025(body: { params?: unknown }, versionHeader: string): boolean {
  const meta = (body.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  if (meta !== undefined && meta !== null && typeof meta === 'object' && 'io.modelcontextprotocol/protocolVersion' in meta) return false;
  return !versionHeader || SUPPORTED_PROTOCOL_VERSIONS.includes(versionHeader);
}

/**
 * A request (it has an id) whose `_meta` carries the 2026-07-28 envelope claim is served by the
 * modern handler whatever the claim names: the SDK's isLegacyRequest documents `false` for every
 * such request (an unsupported version and a malformed envelope are the modern path's own
 * refusals). Asking it anyway classified the request twice, the handler classifying it again.
 */
function claimsEnvelope(body: { id?: unknown; method?: unknown; params?: unknown }): boolean {
  if (body.id === undefined || typeof body.method !== 'string') return false;
  const meta = (body.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  return meta !== undefined && meta !== null && typeof meta === 'object' && 'io.modelcontextprotocol/protocolVersion' in meta;
}

/**
 * A tools/call (or a resources/read of a resource read through tools) that needs a permission the
 * caller's token leaves out while its user's role holds it: a step-up (MCP authorization, Scope
 * Challenge Handling), answered with HTTP 403 and the scope to ask for, so that the client can get
 * a token with it and ask again. A permission the role does not hold is not a step-up (no token
 * would carry it): that stays the dispatch's `forbidden` tool error (a resource not found for a
 * read), like every other refusal.
 */
export function insufficientScope(publicUrl: string, body: { method?: unknown; params?: unknown }, caller: Identity | null | undefined): HttpError | null {
  if (!caller?.heldByRole) return null;
  const params = body.params as { name?: unknown; uri?: unknown } | undefined;
  let names: string[];
  if (body.method === 'tools/call' && typeof params?.name === 'string') names = [params.name];
  else if (body.method === 'resources/read' && typeof params?.uri === 'string') names = toolsReadFor(params.uri);
  else return null;
  const needed = names.filter((n) => Object.hasOwn(tools, n)).map((n) => tools[n as keyof typeof tools].permission);
  if (!needed.length || needed.some((p) => !grants(caller.heldByRole!, p))) return null;
  const missing = [...new Set(needed.filter((p) => !grants(caller.permissions, p)))];
  if (!missing.length) return null;
  // A tool name here is a known one; a URI is the client's own text and stays out of the header.
  const what = body.method === 'tools/call' ? names[0]! : `reading this resource (${names.join(', ')})`;
  const description = `${what} needs the scope ${missing.join(' ')}, which this access token was not granted`;
  return new HttpError(403, description, {
    'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${missing.join(' ')}", resource_metadata="${publicUrl}/.well-known/oauth-protected-resource", error_description="${description}"`,
  });
}

/** What a request hands the server it is served by: the caller, and the request's log, id and signal. */
interface PerRequest {
  caller: Identity;
  request: { requestId: string; log: Logger; signal: AbortSignal };
}

/** The headers the SDK reads from a request; the rest stay with Koa. */
const FORWARDED_HEADERS = ['mcp-protocol-version', 'mcp-method', 'mcp-name'];

/** A response the SDK refused with: an HTTP error in the spec's shape, from the message of its JSON-RPC body. */
async function refusal(response: Response): Promise<HttpError> {
  const text = await response.text();
  let message = text;
  try {
    message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
  } catch {
    /* not JSON: keep the text */
  }
  return new HttpError(response.status, message || `The MCP transport refused the request (${response.status})`);
}

/**
 * `callTool`: the dispatch with every tool's handler, built once by the composition
 * (app/handlers.ts); `tasks`: scans as tasks, served to 2026-07-28 requests (the Tasks extension)
 * and to 2025-era ones (the Tasks of 2025-11-25).
 */
export function mcpEndpoint({ config, db, callTool, tasks }: { config: Pick<Config, 'publicUrl' | 'dataDir' | 'lfs'>; db: Db; callTool: CallTool; tasks?: ScanTasks }): Handler<'mcp.post'> {
  const url = `${config.publicUrl}/api/v1/mcp`;
  // The request state of a confirmation comes back to any instance: it is signed under a key
  // derived from one they all share (TRANSFER_TOKEN_SECRET, or the key file in DATA_DIR/keys).
  const confirmations = createConfirmations(
    config.lfs.transferTokenSecret ? parseKey(config.lfs.transferTokenSecret, 'TRANSFER_TOKEN_SECRET') : loadOrCreateKey(config.dataDir, 'transfer-hmac', 32),
    db,
  );
  // One handler for every 2026-07-28 request; each request gets a fresh server for its caller,
  // who rides in the request's AuthInfo (the SDK passes it through untouched).
  const modern = createMcpHandler(
    ({ authInfo }) => {
      const { caller, request } = authInfo?.extra as unknown as PerRequest;
      return createMcpServer(callTool, caller, request, { confirmations, tasks });
    },
    { legacy: 'reject', responseMode: 'auto' },
  );

  return async ({ ctx, body, identity }) => {
    const accept = ctx.get('accept');
    if (!negotiate(accept, ['application/json']) || !negotiate(accept, ['text/event-stream'])) {
      throw new HttpError(406, 'Accept must list application/json and text/event-stream');
    }
    const stepUp = insufficientScope(config.publicUrl, body, identity);
    if (stepUp) throw stepUp;
    const version = ctx.get('mcp-protocol-version');
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    for (const name of FORWARDED_HEADERS) if (ctx.get(name)) headers[name] = ctx.get(name);
    const request = { requestId: stateOf(ctx).requestId, log: stateOf(ctx).log, signal: clientGone(ctx) };
    // The web Request the SDK reads, built only when the SDK serves the request (a tools/call
    // called straight needs none). A missing Accept or */* admits both types, which the
    // transports want spelled out. Its signal (the client going away) is read by the SDK only to
    // end a subscriptions/listen stream: a tool call gets the client's signal from pactum
    // (createMcpServer), and a streamed answer closes its exchange when Koa drops the stream.
    // A Request that follows a signal costs a third of its construction and a finalizer.
    let built: Request | undefined;
    const webRequest = () => (built ??= new Request(url, { method: 'POST', headers, ...(body.method === 'subscriptions/listen' ? { signal: request.signal } : {}) }));

    if (!plainly2025(body, version) && (claimsEnvelope(body) || !(await isLegacyRequest(webRequest(), body)))) {
      // Params are checked once the request names a served version, so that an unsupported one
      // is still refused as such (-32022) whatever its params.
      if (SHARED_METHODS.has(body.method) && isServedModern(body)) {
        const checked = parseParams(body);
        if ('refusal' in checked) return { status: 200, body: checked.refusal };
        // A plain call, in JSON, straight: the SDK's per-request server, transport and encoder
        // cost more than the tool (scripts/bench/mcp.ts); the same answer (mcp-direct-call.test.ts).
        if (body.method === 'tools/call') {
          const call = checked.parsed as CallToolRequest;
          if (modernCallStraight(body, call, { version, method: ctx.get('mcp-method'), name: ctx.get('mcp-name') })) {
            const meta = call.params._meta;
            const asTask = tasks ? (result: CallToolResult) => tasks.answer(identity!, call.params.name, meta, result) : undefined;
            return { status: 200, body: await directToolCall(callTool, identity!, request, body.id as string | number, call, asTask, encodeModern) };
          }
        }
      }
      const authInfo: AuthInfo = { token: '', clientId: identity!.subject, scopes: [], extra: { caller: identity!, request } satisfies PerRequest };
      const response = await namingEveryVersion(await modern.fetch(webRequest(), { parsedBody: body, authInfo }), body.method);
      // A refusal of the 2026-07-28 ladder (unsupported version -32022, header mismatch -32020,
      // missing _meta -32602, unknown method -32601) is a JSON-RPC error body with its HTTP
      // status, as that revision prescribes: a client recognises the server's era by it.
      if (response.status >= 500) throw await refusal(response);
      return write(ctx, response);
    }

    // The transport would answer these itself, in a JSON-RPC body; the spec's shape is ours.
    if (version && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      throw new HttpError(400, `Unsupported MCP-Protocol-Version ${version}; supported: ${SERVED_PROTOCOL_VERSIONS.join(', ')}`);
    }
    const checked = parseParams(body);
    if ('refusal' in checked) return { status: 200, body: checked.refusal };

    const stream = wantsProgress(body);
    if (body.method === 'tools/call' && body.id !== undefined) {
      const call = checked.parsed as CallToolRequest;
      if (tasks && call.params.task !== undefined) {
        // Answered at once with the task, in JSON: the scan's progress is the task's to tell (tasks/get).
        const refused = tasks.refuseAsTask(call.params.name);
        if (refused) return { status: 200, body: { jsonrpc: '2.0', id: body.id, error: { code: refused.code, message: refused.message } } };
        return { status: 200, body: await directToolCall(callTool, identity!, request, body.id, call, (result) => tasks.create(identity!, call.params.name, result)) };
      }
      // A client that goes away before the answer: the call's waiting and work for it stop (request.signal).
      if (!stream) return { status: 200, body: await directToolCall(callTool, identity!, request, body.id, call) };
    }
    const server = createMcpServer(callTool, identity!, request, { confirmations, coreTasks: tasks });
    // tasks/result waits for the task's end: on a stream, which carries the task's status on the way.
    const waits = tasks !== undefined && body.method === 'tasks/result';
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !stream && !waits });
    await server.connect(transport);
    const response = await transport.handleRequest(webRequest(), { parsedBody: body });
    // Whatever the transport still refuses gets the spec's HTTP error shape, not a JSON-RPC body.
    if (response.status >= 400) throw await refusal(response);
    return write(ctx, response, () => void server.close());
  };
}

/**
 * Writes the SDK's Response through Koa. A JSON answer is over once the Response exists: server
 * and transport hold no timers or streams and are simply dropped (closing them only builds a
 * "connection closed" error for requests that cannot be pending). A stream calls `ended` when
 * it closes.
 */
async function write(ctx: Parameters<Handler<'mcp.post'>>[0]['ctx'], response: Response, ended?: () => void): Promise<void> {
  writeStatus(ctx, response.status, !response.body);
  response.headers.forEach((value, name) => {
    if (name !== 'connection') ctx.set(name, value);
  });
  if (!response.body) return;
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const sse = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
    if (ended) sse.once('close', ended);
    ctx.body = sse;
  } else {
    ctx.body = await response.text();
  }
}
