/**
 * One MCP server per request (stateless Streamable HTTP): nothing mutable is shared between
 * requests, so any number of instances can serve the endpoint. The caller is fixed at creation.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListResourcesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { viewAssets, viewDocument } from '../report-view/document.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import type { ToolSpec } from '../../generated/tools.js';
import type { Identity } from '../domain/access/identity.js';
import type { Logger } from '../telemetry/log.js';
import { VERSION } from '../ground/version.js';
import { visibleTools, type CallTool } from './dispatch.js';

// The SDK parses tools/call params with its own schema before our handler, and reports a
// failure there as -32603 (SDK issue #2284). A loose schema lets the SDK's tools/call wrapper
// answer malformed params with -32602 instead.
const LooseCallToolRequest = z.object({ method: z.literal('tools/call'), params: z.any() });

const INSTRUCTIONS = `pactum dashboard: manage orgs, users and service connections; run WCAG scans and read their progress and reports; read brand scores, regulations, proposals and coordinated PRs; draft fixes for WCAG issues.
Tool failures come back as results with isError true and a JSON text {error, message}: read the message and correct the call.
Scans run in the background: call dashboard_get_scan_progress (and dashboard_get_report) afresh each time you need their state.`;

// The SDK builds a new Ajv for every Server unless given one; per request, that was a tenth of
// the CPU. It is only used for elicitation, which this server never sends.
const jsonSchemaValidator = new AjvJsonSchemaValidator();

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

/** The MCP Apps resource the report tools point at (their _meta.ui.resourceUri). */
export const REPORT_VIEW_URI = 'ui://pactum/report';

const REPORT_VIEW_RESOURCE = {
  uri: REPORT_VIEW_URI,
  name: 'pactum report view',
  title: 'Accessibility report',
  description: 'The report of a scan, its progress while it runs, and the sites of the fleet, drawn for a person: summary by WCAG principle and level, the worst pages first, issues by rule with the element, its screenshot and how to fix it.',
  mimeType: RESOURCE_MIME_TYPE,
};

async function readResource(uri: string) {
  if (uri !== REPORT_VIEW_URI) throw new McpError(-32002, `Resource not found: ${uri}`);
  const html = viewDocument(await viewAssets());
  // The view fetches nothing and is allowed no domain: an empty csp says so to the host.
  return { contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: html, _meta: { ui: { csp: {}, prefersBorder: true } } }] };
}

/** `callTool`: the dispatch (dispatch.ts), which the composition builds once with every tool's handler. */
export function createMcpServer(callTool: CallTool, caller: Identity, request: { requestId: string; log: Logger; signal?: AbortSignal }): Server {
  const server = new Server(
    { name: 'pactum-dashboard', title: 'pactum dashboard', version: VERSION },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: visibleTools(caller.permissions).map(listing) }));
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [REPORT_VIEW_RESOURCE] }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(req.params.uri));
  server.setRequestHandler(LooseCallToolRequest, (req, extra) => {
    const { name, arguments: args, _meta } = req.params as { name: string; arguments?: unknown; _meta?: { progressToken?: string | number } };
    const token = _meta?.progressToken;
    return callTool(name, args, {
      caller,
      log: request.log,
      requestId: request.requestId,
      // The client cancelling the call (the SDK's signal), or going away.
      signal: request.signal ? AbortSignal.any([extra.signal, request.signal]) : extra.signal,
      progress: async (progress, total, message) => {
        if (token === undefined) return;
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } });
      },
    });
  });
  return server;
}
