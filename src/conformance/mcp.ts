/**
 * The MCP-aware phase: the dashboard endpoint spoken as an MCP client would — initialize,
 * tools/list against the catalogue in the spec, tools/call of every listed tool with valid
 * arguments (its example, else generated) and with invalid ones, an unknown tool and method.
 * Every HTTP answer also goes through the ordinary checks.
 */
import { generateSync } from 'json-schema-faker';
import { operations } from '../../generated/operations.js';
import { tools, type ToolSpec } from '../../generated/tools.js';
import { describeErrors } from '../http/router.js';
import type { Case, Target } from './cases.js';
import type { ConformanceResponse } from './http.js';

const op = operations.find((o) => o.operationId === 'mcp.post')!;
const TOOL_ERRORS = new Set(['invalid_arguments', 'not_found', 'forbidden', 'conflict', 'unavailable', 'failed']);

export interface McpCase extends Case {
  /** Checks on the JSON-RPC message, beyond the HTTP-level ones. */
  checkMessage(message: JsonRpc): string[];
}

interface JsonRpc { jsonrpc?: string; id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } }

/** The JSON-RPC message of a response: the JSON body, or the last message of an SSE stream. */
export function messageOf(res: ConformanceResponse): JsonRpc | null {
  const text = res.body.toString('utf8');
  try {
    if (/event-stream/.test(res.headers['content-type'] ?? '')) {
      const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
      return data.length ? (JSON.parse(data[data.length - 1]!) as JsonRpc) : null;
    }
    return JSON.parse(text) as JsonRpc;
  } catch {
    return null;
  }
}

/** Generated strings stay short: what a run sends may be stored and shown by the target. */
const MAX_STRING = 200;

let nextId = 1;
function rpc(target: Target, method: string, params?: unknown) {
  return {
    method: 'POST',
    url: `${target.base}/api/v1/mcp`,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(target.credentials.token ? { authorization: `Bearer ${target.credentials.token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, ...(params === undefined ? {} : { params }) }),
  };
}

const mcpCase = (name: string, request: ReturnType<typeof rpc>, checkMessage: McpCase['checkMessage'], operationId = 'mcp.post'): McpCase => ({
  phase: 'mcp', api: 'dashboard', op, operationId, name, request, expect: 'any', checkMessage,
});

function resultOf(m: JsonRpc): { problems: string[]; result?: Record<string, unknown> } {
  if (!m) return { problems: ['mcp: the answer is not a JSON-RPC message'] };
  if (m.error) return { problems: [`mcp: JSON-RPC error ${m.error.code}: ${m.error.message}`] };
  if (!m.result) return { problems: ['mcp: no result'] };
  return { problems: [], result: m.result };
}

/** A tool result: structured output valid against the tool's output schema, or an error result the agent can read. */
function checkToolResult(tool: ToolSpec, m: JsonRpc, mustFail: boolean): string[] {
  const { problems, result } = resultOf(m);
  if (!result) {
    // Invalid arguments may also be refused at the protocol level.
    return mustFail && m?.error?.code === -32602 ? [] : problems;
  }
  const text = (result.content as { type: string; text?: string }[] | undefined)?.find((c) => c.type === 'text')?.text;
  if (result.isError) {
    let payload: { error?: string; message?: string } | null;
    try {
      payload = JSON.parse(text ?? '') as typeof payload;
    } catch {
      return ['mcp: an error result whose text is not JSON {error, message}'];
    }
    if (!payload || !TOOL_ERRORS.has(String(payload.error)) || typeof payload.message !== 'string') return [`mcp: an error result without a known error code and a message: ${text}`];
    if (mustFail && !['invalid_arguments', 'forbidden'].includes(String(payload.error))) return [`mcp: invalid arguments answered with ${payload.error}, not invalid_arguments`];
    return [];
  }
  if (mustFail) return [`mcp: ${tool.name} accepted invalid arguments`];
  const out: string[] = [];
  if (!tool.validateOutput(result.structuredContent)) out.push(`mcp: structuredContent breaks ${tool.name}'s output schema: ${describeErrors(tool.validateOutput.errors, 'structuredContent')}`);
  try {
    if (JSON.stringify(JSON.parse(text ?? 'null')) !== JSON.stringify(result.structuredContent)) out.push('mcp: the text block is not the same JSON as structuredContent');
  } catch {
    out.push('mcp: the text block is not JSON');
  }
  return out;
}

function validArguments(tool: ToolSpec, seed: number): Record<string, unknown> {
  const example = (tool.inputSchema.examples as unknown[] | undefined)?.[0];
  return (example as Record<string, unknown>) ?? (generateSync(tool.inputSchema, { seed, maxLength: MAX_STRING }) as Record<string, unknown>);
}

function invalidArguments(tool: ToolSpec): Record<string, unknown> | null {
  const required = (tool.inputSchema.required as string[] | undefined) ?? [];
  if (!required.length) return null;
  const args = { ...validArguments(tool, 1) };
  delete args[required[0]!];
  return args;
}

/** The cases that need no earlier answer; tools/call cases are made from the tools/list answer. */
export function mcpOpeningCases(target: Target): McpCase[] {
  return [
    mcpCase('initialize', rpc(target, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pactum-conformance', version: '1' } }), (m) => {
      const { problems, result } = resultOf(m);
      if (!result) return problems;
      const out: string[] = [];
      if (typeof result.protocolVersion !== 'string') out.push('mcp: initialize result has no protocolVersion');
      if (!(result.capabilities as Record<string, unknown> | undefined)?.tools) out.push('mcp: the server does not declare the tools capability');
      return out;
    }),
    mcpCase('ping', rpc(target, 'ping'), (m) => resultOf(m).problems),
    mcpCase('unknown method', rpc(target, 'no/such-method'), (m) => (m?.error?.code === -32601 ? [] : [`mcp: an unknown method must be JSON-RPC -32601, got ${JSON.stringify(m?.error ?? m?.result)}`])),
    mcpCase('unknown tool', rpc(target, 'tools/call', { name: 'no_such_tool', arguments: {} }), (m) => (m?.error?.code === -32602 ? [] : [`mcp: an unknown tool must be JSON-RPC -32602, got ${JSON.stringify(m?.error ?? m?.result)}`])),
  ];
}

/** tools/list, checked against the catalogue; returns the listed tool names through `listed`. */
export function toolsListCase(target: Target, listed: string[]): McpCase {
  return mcpCase('tools/list', rpc(target, 'tools/list'), (m) => {
    const { problems, result } = resultOf(m);
    if (!result) return problems;
    const out: string[] = [];
    for (const t of (result.tools as { name: string; inputSchema: unknown; outputSchema?: unknown }[]) ?? []) {
      const spec = (tools as Record<string, ToolSpec>)[t.name];
      if (!spec) {
        out.push(`mcp: tools/list names ${t.name}, which the catalogue in the spec does not have`);
        continue;
      }
      listed.push(t.name);
      if (JSON.stringify(t.inputSchema) !== JSON.stringify(spec.inputSchema)) out.push(`mcp: ${t.name}'s inputSchema differs from the spec's`);
      if (t.outputSchema !== undefined && JSON.stringify(t.outputSchema) !== JSON.stringify(spec.outputSchema)) out.push(`mcp: ${t.name}'s outputSchema differs from the spec's`);
    }
    return out;
  });
}

/**
 * readOnly: only the read-only tools. changeState false: a tool that changes state gets only its
 * invalid-arguments call (the target keeps what a valid call would change).
 */
export function toolCallCases(target: Target, names: string[], opts: { seed: number; readOnly: boolean; changeState?: boolean }): McpCase[] {
  const cases: McpCase[] = [];
  for (const name of names) {
    const tool = (tools as Record<string, ToolSpec>)[name]!;
    if (opts.readOnly && !tool.annotations.readOnlyHint) continue;
    if (tool.annotations.readOnlyHint || opts.changeState !== false) cases.push(mcpCase(`tools/call ${name}`, rpc(target, 'tools/call', { name, arguments: validArguments(tool, opts.seed) }), (m) => checkToolResult(tool, m, false), `tool ${name}`));
    const bad = invalidArguments(tool);
    if (bad) cases.push(mcpCase(`tools/call ${name} with invalid arguments`, rpc(target, 'tools/call', { name, arguments: bad }), (m) => checkToolResult(tool, m, true), `tool ${name}`));
  }
  return cases;
}
