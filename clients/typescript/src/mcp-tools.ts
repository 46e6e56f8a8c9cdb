/**
 * The dashboard's tools, called over MCP with the generated types.
 *
 * Added to the generated TypeScript client by `make clients` (from clients/typescript/src/ in the
 * pactum repository). The spec gives every tool a stub operation, `POST /api/v1/mcp/tools/{tool}`,
 * whose request body is the tool's arguments and whose 200 body is the result envelope of
 * `tools/call`; the server answers the stubs themselves with 405, since tools are called through the
 * MCP endpoint. `McpTools` keeps the stubs' generated functions and types (inputs, outputs, their
 * JSON conversions) and sends each call where it belongs: as a JSON-RPC `tools/call` to
 * `POST /api/v1/mcp`, answered with the same envelope.
 *
 *   const tools = new McpTools({ basePath: 'http://127.0.0.1:8080', accessToken: token });
 *   const org = await tools.call('dashboard_get_org', { targetOrgId });   // Organization
 *   const page = await tools.orgs.mcpToolDashboardListOrgs({ dashboardListOrgsInput: { limit: 10 } });
 *
 * A JSON-RPC error (unknown tool, invalid arguments, a missing permission) throws `McpError`; a
 * result the tool marked `isError` throws `McpToolError`; an HTTP error (401, 403, 429 …) throws the
 * generated `ResponseError`, as every other operation does.
 */
import { Configuration, RequiredError, type ConfigurationParameters, type FetchParams, type Middleware, type RequestContext, type ResponseContext } from './runtime.js';
import { ToolsBrandApi, ToolsConnectionsApi, ToolsFindingsApi, ToolsFixesApi, ToolsFleetApi, ToolsMonitoringApi, ToolsOrgsApi, ToolsRegulationsApi, ToolsScansApi, ToolsUsersApi } from './apis/index.js';

/** The MCP protocol version this wrapper speaks (sent as MCP-Protocol-Version). */
export const MCP_PROTOCOL_VERSION = '2025-11-25';

/** A JSON-RPC error answer: the server refused the call itself (code -32602: invalid arguments). */
export class McpError extends Error {
  override name = 'McpError';
  constructor(
    readonly tool: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${tool}: ${message} (JSON-RPC ${code})`);
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

/** A tool result with `isError: true`: the tool ran and reports why it could not do the job. */
export class McpToolError extends Error {
  override name = 'McpToolError';
  constructor(
    readonly tool: string,
    /** The result's content blocks; the first text block is the message. */
    readonly content: Array<{ type: string; text?: string }>,
    /** The tool's structured error, when it gives one. */
    readonly structuredContent?: unknown,
  ) {
    super(`${tool}: ${content.filter((c) => c.type === 'text' && c.text !== undefined).map((c) => c.text).join(' ') || 'the tool reported an error'}`);
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

type StubApis = ToolsBrandApi & ToolsConnectionsApi & ToolsFindingsApi & ToolsFixesApi & ToolsFleetApi & ToolsMonitoringApi & ToolsOrgsApi & ToolsRegulationsApi & ToolsScansApi & ToolsUsersApi;
/** `mcpToolDashboardGetOrg` and its kind: the generated stub functions that send a call. */
type StubMethod = { [K in keyof StubApis]: K extends `mcpTool${string}` ? (K extends `${string}Raw` | `${string}RequestOpts` ? never : K) : never }[keyof StubApis];
type SnakeCase<S extends string> = S extends `${infer C}${infer Rest}` ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<Rest>}` : '';
type ToolOf<M extends string> = M extends `mcpTool${infer P}` ? (SnakeCase<P> extends `_${infer S}` ? S : never) : never;
type PascalCase<S extends string> = S extends `${infer H}_${infer T}` ? `${Capitalize<H>}${PascalCase<T>}` : Capitalize<S>;
type MethodOf<N extends ToolName> = Extract<StubMethod, `mcpTool${PascalCase<N>}`>;
type StubParams<N extends ToolName> = Parameters<StubApis[MethodOf<N>]>[0];

/** Every tool of the catalogue, by its MCP name (`dashboard_get_org`, …). */
export type ToolName = ToolOf<StubMethod>;
/** A tool's arguments: the generated model of its input schema. */
export type ToolInput<N extends ToolName> = StubParams<N>[keyof StubParams<N>];
/** A tool's output (`structuredContent`): the generated model of its output schema. */
export type ToolOutput<N extends ToolName> = NonNullable<Awaited<ReturnType<StubApis[MethodOf<N>]>>['structuredContent']>;

const STUB_PATH = /\/api\/v1\/mcp\/tools\/([A-Za-z0-9_]+)$/;

interface JsonRpcAnswer {
  id?: unknown;
  result?: { isError?: boolean; content?: Array<{ type: string; text?: string }>; structuredContent?: unknown };
  error?: { code: number; message: string; data?: unknown };
}

/** The last JSON-RPC message of an SSE stream (the answer follows any progress notifications). */
function lastSseMessage(text: string): JsonRpcAnswer | undefined {
  let last: JsonRpcAnswer | undefined;
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.indexOf('data:') === 0)
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data !== '') {
      const message = JSON.parse(data) as JsonRpcAnswer;
      if (message.result !== undefined || message.error !== undefined) last = message;
    }
  }
  return last;
}

/**
 * Middleware for a Configuration: sends every tool stub request as `tools/call` to the MCP
 * endpoint, and turns the answer back into the stub's 200 body (or throws McpError, McpToolError).
 */
export function mcpToolsMiddleware(accessToken?: ConfigurationParameters['accessToken']): Middleware {
  let nextId = 1;
  const calls = new WeakMap<RequestInit, string>();
  return {
    async pre(context: RequestContext): Promise<FetchParams | void> {
      const url = new URL(context.url);
      const match = STUB_PATH.exec(url.pathname);
      if (match === null) return;
      const tool = match[1]!;
      url.pathname = url.pathname.slice(0, url.pathname.length - `/tools/${tool}`.length);
      const headers = new Headers(context.init.headers as HeadersInit | undefined);
      headers.set('content-type', 'application/json');
      headers.set('accept', 'application/json, text/event-stream');
      headers.set('mcp-protocol-version', MCP_PROTOCOL_VERSION);
      const token = typeof accessToken === 'function' ? await accessToken('bearerAuth', []) : await accessToken;
      if (token !== undefined && token !== '') headers.set('authorization', `Bearer ${token}`);
      const args: unknown = typeof context.init.body === 'string' && context.init.body !== '' ? JSON.parse(context.init.body) : {};
      const init: RequestInit = {
        ...context.init,
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: tool, arguments: args } }),
      };
      calls.set(init, tool);
      return { url: url.toString(), init };
    },
    async post(context: ResponseContext): Promise<Response | void> {
      const tool = calls.get(context.init);
      if (tool === undefined || !context.response.ok) return;
      const text = await context.response.text();
      const type = context.response.headers.get('content-type') ?? '';
      const answer = type.indexOf('text/event-stream') === 0 ? lastSseMessage(text) : (JSON.parse(text) as JsonRpcAnswer);
      if (answer === undefined) throw new McpError(tool, -32603, 'the server closed the stream without an answer');
      if (answer.error !== undefined) throw new McpError(tool, answer.error.code, answer.error.message, answer.error.data);
      const result = answer.result ?? {};
      if (result.isError === true) throw new McpToolError(tool, result.content ?? [], result.structuredContent);
      return new Response(JSON.stringify(result), { status: 200, headers: { 'content-type': 'application/json' } });
    },
  };
}

/** What McpTools needs: the server's base URL and a bearer token (`pactum token` prints one). */
export type McpToolsParameters = ConfigurationParameters;

/**
 * Every tool, typed by the generated models: by name through `call`, or through the generated
 * stub functions grouped as the spec's tags group them (`orgs`, `users`, `connections`, `scans`,
 * `findings`, `monitoring`, `brand`, `regulations`, `fixes`, `fleet`), whose results are the whole envelope.
 */
export class McpTools {
  readonly brand: ToolsBrandApi;
  readonly connections: ToolsConnectionsApi;
  readonly findings: ToolsFindingsApi;
  readonly fixes: ToolsFixesApi;
  readonly fleet: ToolsFleetApi;
  readonly monitoring: ToolsMonitoringApi;
  readonly orgs: ToolsOrgsApi;
  readonly regulations: ToolsRegulationsApi;
  readonly scans: ToolsScansApi;
  readonly users: ToolsUsersApi;
  private readonly parameterNames: { [method: string]: string } = {};

  constructor(parameters: McpToolsParameters) {
    const configuration = new Configuration({ ...parameters, middleware: [...(parameters.middleware ?? []), mcpToolsMiddleware(parameters.accessToken)] });
    this.brand = new ToolsBrandApi(configuration);
    this.connections = new ToolsConnectionsApi(configuration);
    this.findings = new ToolsFindingsApi(configuration);
    this.fixes = new ToolsFixesApi(configuration);
    this.fleet = new ToolsFleetApi(configuration);
    this.monitoring = new ToolsMonitoringApi(configuration);
    this.orgs = new ToolsOrgsApi(configuration);
    this.regulations = new ToolsRegulationsApi(configuration);
    this.scans = new ToolsScansApi(configuration);
    this.users = new ToolsUsersApi(configuration);
  }

  /** Calls one tool and resolves to its output (`structuredContent`). */
  async call<N extends ToolName>(name: N, input: ToolInput<N>, init?: RequestInit): Promise<ToolOutput<N>> {
    const method = `mcpTool${name.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}`;
    const api = [this.brand, this.connections, this.findings, this.fixes, this.fleet, this.monitoring, this.orgs, this.regulations, this.scans, this.users].find(
      (a) => typeof (a as unknown as { [m: string]: unknown })[method] === 'function',
    );
    if (api === undefined) throw new McpError(name, -32602, `no generated function ${method}: this client does not know the tool`);
    const stub = api as unknown as { [m: string]: (params: object, init?: RequestInit) => Promise<{ structuredContent?: ToolOutput<N> }> };
    const result = await stub[method]!.call(api, { [await this.parameterName(api, method)]: input }, init);
    if (result.structuredContent === undefined) throw new McpToolError(name, [{ type: 'text', text: 'the result has no structuredContent' }]);
    return result.structuredContent;
  }

  /**
   * The name of a stub function's one parameter: the camel-cased input model (`dashboardGetOrgInput`),
   * or `requestBody` for a tool whose arguments are a free-form object. The generated
   * `…RequestOpts` function names it when it is missing.
   */
  private async parameterName(api: object, method: string): Promise<string> {
    const known = this.parameterNames[method];
    if (known !== undefined) return known;
    try {
      await (api as unknown as { [m: string]: (params: object) => Promise<unknown> })[`${method}RequestOpts`]!.call(api, {});
    } catch (e) {
      if (e instanceof RequiredError) return (this.parameterNames[method] = e.field);
      throw e;
    }
    throw new Error(`${method}RequestOpts accepted no arguments: cannot tell its parameter's name`);
  }
}
