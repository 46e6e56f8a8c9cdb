/**
 * One MCP server per request (stateless Streamable HTTP): nothing mutable is shared between
 * requests, so any number of instances can serve the endpoint. The caller is fixed at creation.
 */
import { isInputRequiredResult, McpServer, type Server, type Tool } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { EXTENSION_ID as APPS_EXTENSION } from '@modelcontextprotocol/ext-apps/server';
import type { ToolSpec } from '../../generated/tools.js';
import type { Identity } from '../domain/access/identity.js';
import type { Logger } from '../telemetry/log.js';
import { VERSION } from '../ground/version.js';
import { visibleTools, type CallTool } from './dispatch.js';
import { declaresFormElicitation, type Confirmations } from './confirmation.js';
import { traceContextOf } from './tool-context.js';
import { TASK_TOOLS, type ScanTasks } from './tasks.js';
import { registerPrompts } from './prompts.js';
import { registerResources, toolReader } from './resources.js';

const INSTRUCTIONS = `pactum dashboard: manage orgs, users and service connections; run WCAG scans and read their progress and reports; read brand scores, regulations, proposals and coordinated PRs; draft fixes for WCAG issues.
Tool failures come back as results with isError true and a JSON text {error, message}: read the message and correct the call.
Scans run in the background: call dashboard_get_scan_progress (and dashboard_get_report) afresh each time you need their state.`;

// The SDK builds a new Ajv for every Server unless given one; per request, that was a tenth of
// the CPU.
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** Who the server is: in initialize, server/discover, and every 2026-07-28 result's `_meta`. */
export const SERVER_INFO = { name: 'pactum-dashboard', title: 'pactum dashboard', version: VERSION };

/** The per-request revisions served besides the 2025 era's (the SDK implements these). */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'];

/**
 * How long a 2026-07-28 client may keep each list (`ttlMs`) and who may share it (`cacheScope`).
 * tools/list depends on the caller's role, so it is private to the caller's credentials, and kept
 * 30 s: a role granted or withdrawn shows in the client's tool list within half a minute (the
 * server enforces the new role on the next call at once). The report view, the criteria, the
 * resource, template and prompt lists are the same for every caller and change only with a new
 * release: public, for five minutes (a caller's report and findings carry their own, private hint:
 * resources.ts).
 */
export const CACHE_HINTS = {
  'tools/list': { ttlMs: 30_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 300_000, cacheScope: 'public' },
  'resources/templates/list': { ttlMs: 300_000, cacheScope: 'public' },
  'prompts/list': { ttlMs: 300_000, cacheScope: 'public' },
  'resources/read': { ttlMs: 300_000, cacheScope: 'public' },
  'server/discover': { ttlMs: 300_000, cacheScope: 'public' },
} as const;

const toolListing = new WeakMap<ToolSpec, Tool>();
function listing(t: ToolSpec): Tool {
  let entry = toolListing.get(t);
  if (!entry) {
    entry = {
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: { title: t.title, ...t.annotations },
      ...(t._meta ? { _meta: t._meta } : {}),
    };
    toolListing.set(t, entry);
  }
  return entry;
}

/** The listing under 2025-11-25 when that revision's Tasks are served: a tool that may run as a task says so. */
const taskListing = new WeakMap<ToolSpec, Tool>();
function coreTaskListing(t: ToolSpec): Tool {
  if (!TASK_TOOLS.has(t.name)) return listing(t);
  let entry = taskListing.get(t);
  if (!entry) taskListing.set(t, (entry = { ...listing(t), execution: { taskSupport: 'optional' } }));
  return entry;
}

const byName = (a: Tool, b: Tool) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * `callTool`: the dispatch (dispatch.ts), which the composition builds once with every tool's
 * handler; `confirmations`: how a call is confirmed by the person behind a client that can ask
 * (confirmation.ts), and how the request state of such a retry is verified; `tasks`: given for a
 * 2026-07-28 server, which then serves scans as tasks of the Tasks extension (tasks.ts);
 * `coreTasks`: given for a 2025-era server, which then serves the Tasks of 2025-11-25 (its
 * task-augmented tools/call itself is answered by the endpoint).
 */
export function createMcpServer(
  callTool: CallTool,
  caller: Identity,
  request: { requestId: string; log: Logger; signal?: AbortSignal },
  { confirmations, tasks, coreTasks }: { confirmations: Confirmations; tasks?: ScanTasks; coreTasks?: ScanTasks },
): Server {
  const mcp = new McpServer(
    SERVER_INFO,
    {
      // The report App is an MCP Apps resource: the server says it speaks the Apps extension
      // (`io.modelcontextprotocol/ui`, no settings) in server/discover and initialize.
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false }, extensions: { [APPS_EXTENSION]: {} } },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator,
      cacheHints: CACHE_HINTS,
      // A retry's requestState is refused (-32602) unless its signature, expiry and method hold.
      requestState: { verify: (state, ctx) => confirmations.verify(state, ctx) },
    },
  );
  const server: Server = mcp.server;
  // By name, so that a list is the same from one release to the next (clients cache it, and
  // models cache prompts that contain it).
  const list = coreTasks ? coreTaskListing : listing;
  server.setRequestHandler('tools/list', () => ({ tools: visibleTools(caller.permissions).map(list).sort(byName) }));
  // Resources and prompts; a resource that is the caller's data is read through its tool, as the caller.
  registerResources(mcp, toolReader(callTool, { caller, log: request.log, requestId: request.requestId, ...(request.signal ? { signal: request.signal } : {}) }));
  registerPrompts(mcp);
  tasks?.register(server, caller);
  coreTasks?.serveCore(server, caller, request.signal);
  server.setRequestHandler('tools/call', async (req, ctx) => {
    const { name, arguments: args, _meta } = req.params;
    const token = _meta?.progressToken;
    await confirmations.checkState(ctx, caller, name, args);
    const result = await callTool(name, args, {
      caller,
      trace: traceContextOf(_meta),
      log: request.log,
      requestId: request.requestId,
      // The client cancelling the call (the SDK's signal), or going away.
      signal: request.signal ? AbortSignal.any([ctx.mcpReq.signal, request.signal]) : ctx.mcpReq.signal,
      progress: async (progress, total, message) => {
        if (token === undefined) return;
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } });
      },
      ...(declaresFormElicitation(ctx) ? { confirm: (tool, toolArgs, question) => confirmations.answer(ctx, caller, tool, toolArgs, question) } : {}),
    });
    // A question (input required) is no tool result yet: a task is made of a result only.
    return tasks && !isInputRequiredResult(result) ? tasks.answer(caller, name, ctx.mcpReq.envelope, result) : result;
  });
  return server;
}
