/**
 * POST /api/v1/mcp (operation mcp.post). The router has already matched, read and validated the
 * JSON-RPC message and authenticated the caller; this binds one request to a fresh MCP server
 * and the SDK's web-standard Streamable HTTP transport, and writes the transport's Response back
 * through Koa. The reply is one JSON body, or an SSE stream when the request asks for progress.
 */
import { Readable } from 'node:stream';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  McpError,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { clientGone } from '../http/client-gone.js';
import { HttpError } from '../http/errors.js';
import { negotiate } from '../http/media.js';
import { stateOf } from '../http/state.js';
import { writeStatus, type Handler } from '../http/router.js';
import type { Config } from '../ground/config.js';
import type { Identity } from '../domain/access/identity.js';
import type { Logger } from '../telemetry/log.js';
import { lookupTable } from '../ground/lookup-table.js';
import type { CallTool } from './dispatch.js';
import { createMcpServer } from './server.js';

/**
 * The SDK answers a known method whose params do not parse with -32603 and a dump of its schema
 * errors; JSON-RPC says -32602, with a message a person can act on.
 */
const REQUEST_SCHEMAS = lookupTable<{ safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: { path: PropertyKey[]; message: string }[] } } }>({
  initialize: InitializeRequestSchema,
  'tools/call': CallToolRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  ping: PingRequestSchema,
});

/** The request parsed by the SDK's schema of its method, or the JSON-RPC refusal of its params. */
function parseParams(body: { method?: string; id?: unknown }): { refusal: object } | { parsed: unknown } {
  const schema = body.id === undefined ? undefined : REQUEST_SCHEMAS[body.method ?? ''];
  if (!schema) return { parsed: body };
  const parsed = schema.safeParse(body);
  if (parsed.success) return { parsed: parsed.data };
  const issues = (parsed.error?.issues ?? []).slice(0, 3).map((i) => `${i.path.join('.') || 'params'}: ${i.message}`);
  return { refusal: { jsonrpc: '2.0', id: body.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${body.method}: ${issues.join('; ')}` } } };
}

const wantsProgress = (body: { params?: { _meta?: { progressToken?: unknown } } }) => body.params?._meta?.progressToken !== undefined;

/**
 * A tools/call answered in JSON (no progress to stream), called straight: a per-request SDK
 * Server and transport cost more than most tools do (scripts/bench/mcp.ts). The request was
 * parsed by the SDK's own CallToolRequestSchema (invalidParams), and the answer is the JSON-RPC
 * response the SDK writes for the same call, errors included (its McpError message and code).
 * Every other message, and every call that reports progress, goes through the SDK.
 */
async function directToolCall(callTool: CallTool, caller: Identity, request: { requestId: string; log: Logger; signal: AbortSignal }, id: string | number, call: CallToolRequest) {
  try {
    const result = await callTool(call.params.name, call.params.arguments, { caller, log: request.log, requestId: request.requestId, progress: () => Promise.resolve(), signal: request.signal });
    return { jsonrpc: '2.0', id, result };
  } catch (err) {
    if (err instanceof McpError) return { jsonrpc: '2.0', id, error: { code: err.code, message: err.message, ...(err.data !== undefined ? { data: err.data } : {}) } };
    // The SDK would put the error's own text here; a failure's detail belongs in the log only.
    request.log.error({ err, tool: call.params.name }, 'tools/call failed');
    return { jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: `Internal error; the request id ${request.requestId} identifies it in the server log` } };
  }
}

/** `callTool`: the dispatch with every tool's handler, built once by the composition (app/handlers.ts). */
export function mcpEndpoint({ config, callTool }: { config: Pick<Config, 'publicUrl'>; callTool: CallTool }): Handler<'mcp.post'> {
  const url = `${config.publicUrl}/api/v1/mcp`;
  return async ({ ctx, body, identity }) => {
    // The transport would answer these itself, in a JSON-RPC body; the spec's shape is ours.
    const version = ctx.get('mcp-protocol-version');
    if (version && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      throw new HttpError(400, `Unsupported MCP-Protocol-Version ${version}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`);
    }
    const accept = ctx.get('accept');
    if (!negotiate(accept, ['application/json']) || !negotiate(accept, ['text/event-stream'])) {
      throw new HttpError(406, 'Accept must list application/json and text/event-stream');
    }

    const checked = parseParams(body);
    if ('refusal' in checked) return { status: 200, body: checked.refusal };

    const stream = wantsProgress(body);
    const request = { requestId: stateOf(ctx).requestId, log: stateOf(ctx).log, signal: clientGone(ctx) };
    if (body.method === 'tools/call' && body.id !== undefined && !stream) {
      // A client that goes away before the answer: the call's waiting and work for it stop (request.signal).
      return { status: 200, body: await directToolCall(callTool, identity!, request, body.id, checked.parsed as CallToolRequest) };
    }
    const server = createMcpServer(callTool, identity!, request);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !stream });
    await server.connect(transport);
    const response = await transport.handleRequest(
      new Request(url, {
        method: 'POST',
        // A missing Accept or */* admits both types, which the transport wants spelled out.
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...(version ? { 'mcp-protocol-version': version } : {}) },
      }),
      { parsedBody: body },
    );

    // Whatever the transport still refuses gets the spec's HTTP error shape, not a JSON-RPC body.
    if (response.status >= 400) {
      const text = await response.text();
      let message = text;
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
      } catch {
        /* not JSON: keep the text */
      }
      throw new HttpError(response.status, message || `The MCP transport refused the request (${response.status})`);
    }
    writeStatus(ctx, response.status, !response.body);
    response.headers.forEach((value, name) => {
      if (name !== 'connection') ctx.set(name, value);
    });
    // In JSON mode the exchange is over once the Response exists: server and transport hold no
    // timers or streams and are simply dropped (closing them only builds a "connection closed"
    // error for requests that cannot be pending). A stream closes its server when it ends.
    if (!response.body) return;
    if (stream) {
      const sse = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
      sse.once('close', () => void server.close());
      ctx.body = sse;
    } else {
      ctx.body = await response.text();
    }
  };
}
