/**
 * tools/call in one place: the tool's permission (from the catalogue in the spec), its argument
 * schema, the handler, its output schema, and the audit row. Whatever goes wrong becomes a tool
 * error result ({error, message} as text, isError: true) that an agent can read and act on —
 * never a stack trace; only an unknown tool is a JSON-RPC error (-32602).
 */
import { describeDatabaseError, isDatabaseError, summariseDatabaseError } from '../ground/database-errors.js';
import { isInputRequiredResult, ProtocolError, ProtocolErrorCode, type CallToolResult, type InputRequiredResult } from '@modelcontextprotocol/server';
import { tools, type ToolName, type ToolSpec } from '../../generated/tools.js';
import { grants } from '../domain/access/permissions.js';
import { CursorError } from '../db/pagination.js';
import { describeErrors, unacceptableJson } from '../http/router.js';
import { ToolFailure, type ToolContext, type ToolHandlers } from './tool-context.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { AuditLog } from './audit.js';
import { inSpan } from '../telemetry/tracing.js';
import { confirmationQuestion } from './confirmation.js';

const isTool = (name: string): name is ToolName => Object.hasOwn(tools, name);

export const errorResult = (code: string, message: string, details?: unknown[], retryAfterSeconds?: number): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify({ error: code, message, ...(retryAfterSeconds ? { retryAfterSeconds } : {}), ...(details ? { details } : {}) }) }],
  isError: true,
});

/** A tool's answer: its result, or (under 2026-07-28) the question its call waits on. */
export type ToolAnswer = CallToolResult | InputRequiredResult;

async function run(handlers: ToolHandlers, tool: ToolSpec, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolAnswer> {
  if (!grants(ctx.caller.permissions, tool.permission)) {
    throw new ToolFailure('forbidden', `${tool.name} needs the permission ${tool.permission}`);
  }
  const unacceptable = unacceptableJson(args, 'The arguments');
  if (unacceptable) throw new ToolFailure('invalid_arguments', unacceptable);
  if (!tool.validateInput(args)) {
    const details = (tool.validateInput.errors ?? []).map((e) => ({ path: e.instancePath || '/', problem: e.message ?? e.keyword }));
    throw new ToolFailure('invalid_arguments', describeErrors(tool.validateInput.errors, 'arguments'), details);
  }
  // Asked once the call is known to be allowed and well formed, so the person confirms only what would run.
  const question = ctx.confirm && confirmationQuestion(tool.name, args);
  if (question) {
    const answer = await ctx.confirm!(tool.name, args, question);
    if (answer === 'declined') throw new ToolFailure('declined', `${tool.name} was not confirmed: the person declined or cancelled, and nothing was changed`);
    if (answer !== 'confirmed') return answer;
  }
  const output = await (handlers[tool.name] as (i: unknown, c: ToolContext) => Promise<unknown>)(args, ctx);
  if (!tool.validateOutput(output)) {
    ctx.log.error({ tool: tool.name, problems: describeErrors(tool.validateOutput.errors, 'output') }, 'a tool produced output its schema refuses');
    throw new ToolFailure('failed', `${tool.name} produced an invalid result; the request id identifies it in the server log`);
  }
  return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output as Record<string, unknown> };
}

/** Calls a tool: `callTool(name, arguments, ctx)`, the result or the tool error it becomes. */
export type CallTool = (name: string, rawArgs: unknown, ctx: ToolContext) => Promise<ToolAnswer>;

/** What the dispatch is given: every tool's handler, the metrics it counts calls in, the audit trail it writes. */
export interface DispatchDeps {
  handlers: ToolHandlers;
  metrics: Pick<Metrics, 'mcp'>;
  audit: Pick<AuditLog, 'write'>;
}

export function createDispatch({ handlers, metrics, audit }: DispatchDeps): CallTool {
  return async function callTool(name, rawArgs, ctx) {
    if (!isTool(name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const tool = tools[name] as ToolSpec;
    const args = (rawArgs ?? {}) as Record<string, unknown>;
    const started = performance.now();
    let result: ToolAnswer;
    let outcome = 'ok';
    let message: string | undefined;
    try {
      result = await inSpan(`tool ${name}`, { 'mcp.tool': name }, () => run(handlers, tool, args, ctx), ctx.trace ? { parent: ctx.trace } : undefined);
      if (isInputRequiredResult(result)) outcome = 'confirmation_asked';
    } catch (err) {
      if (err instanceof ToolFailure) {
        [outcome, message] = [err.code, err.message];
        result = errorResult(err.code, err.message, err.details, err.retryAfterSeconds);
      } else if (ctx.signal?.aborted && err === ctx.signal.reason) {
        // Nobody is left to read an answer; not a failure of the server's.
        [outcome, message] = ['cancelled', (err as Error).message];
        result = errorResult('failed', (err as Error).message);
      } else if (err instanceof CursorError) {
        [outcome, message] = ['invalid_arguments', err.message];
        result = errorResult('invalid_arguments', err.message);
      } else if (isDatabaseError(err)) {
        // Never the driver's message: it carries the SQL's bound values (a password hash, a secret).
        const db = summariseDatabaseError(err);
        ctx.log.error({ db, tool: name }, 'tool failed: database error');
        const code = db.kind === 'unique' ? 'conflict' : db.kind === 'unavailable' ? 'unavailable' : 'failed';
        [outcome, message] = [code, describeDatabaseError(db)];
        result = errorResult(code, `${name}: ${message}; the request id ${ctx.requestId} identifies it in the server log`);
      } else {
        ctx.log.error({ err, tool: name }, 'tool failed');
        // The audit trail keeps what kind of error it was, not its text: an unexpected error's
        // message may carry anything (an upstream's answer, a value being handled).
        [outcome, message] = ['failed', `unexpected ${(err as Error)?.name ?? 'error'}; the request id ${ctx.requestId} identifies it in the server log`];
        result = errorResult('failed', `${name} failed unexpectedly; the request id ${ctx.requestId} identifies it in the server log`);
      }
    }
    const { mcp } = metrics;
    mcp.calls.inc({ tool: name, outcome });
    mcp.duration.observe({ tool: name }, (performance.now() - started) / 1000);
    await audit.write({
      requestId: ctx.requestId,
      subject: ctx.caller.subject,
      orgId: ctx.caller.orgId,
      tool: name,
      args,
      outcome,
      message,
      durationMs: performance.now() - started,
    });
    return result;
  };
}

/** The tools a caller may call; tools/list shows only these. */
export const visibleTools = (permissions: ToolContext['caller']['permissions']) =>
  Object.values(tools).filter((t) => grants(permissions, (t as ToolSpec).permission)) as ToolSpec[];
