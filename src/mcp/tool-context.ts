/**
 * What a tool handler receives besides its validated arguments, and how it fails. A handler is a
 * small function from typed input to typed output; it throws ToolFailure for anything the caller
 * can act on (not found, forbidden, a conflict), which the dispatcher turns into an error result.
 */
import type { components } from '../../generated/types/dashboard.js';
import type { ToolInputs, ToolName, ToolOutputs } from '../../generated/tools.js';
import type { Identity } from '../domain/access/identity.js';
import { isSystemAdmin } from '../domain/access/identity.js';
import type { Logger } from '../telemetry/log.js';
import type { TraceCarrier } from '../telemetry/tracing.js';
import type { ConfirmationAnswer } from './confirmation.js';

export type ToolErrorCode = components['schemas']['tool-error']['error'];

export class ToolFailure extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    readonly details?: Record<string, unknown>[],
    /** With rate_limited: when a retry may succeed. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface ToolContext {
  caller: Identity;
  log: Logger;
  requestId: string;
  /** Reports progress when the client asked for it (params._meta.progressToken); otherwise does nothing. */
  progress: (progress: number, total?: number, message?: string) => Promise<void>;
  /** Aborts when the client went away (or cancelled the call): work queued for it is withdrawn. */
  signal?: AbortSignal;
  /**
   * Present when the person behind the client can be asked (a 2026-07-28 request whose client
   * declares elicitation): where the confirmation of this call stands.
   */
  confirm?: (tool: ToolName, args: Record<string, unknown>, question: string) => Promise<ConfirmationAnswer>;
  /** The W3C trace context of the request's `params._meta` (`traceparent`, `tracestate`), which the tool's span joins. */
  trace?: TraceCarrier;
}

/** The trace context an MCP request carries in its `params._meta`, if any. */
export function traceContextOf(meta: Record<string, unknown> | undefined): TraceCarrier | undefined {
  const traceparent = meta?.traceparent;
  if (typeof traceparent !== 'string') return undefined;
  const tracestate = meta?.tracestate;
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}

export type ToolHandler<N extends ToolName> = (input: ToolInputs[N], ctx: ToolContext) => Promise<ToolOutputs[N]>;
export type ToolHandlers = { [N in ToolName]: ToolHandler<N> };

/**
 * The org a call acts on: the caller's own, or — for admin.system only — the one it names.
 * Never taken from an argument for anyone else.
 */
export function targetOrg(caller: Identity, targetOrgId?: string): string {
  if (!targetOrgId || targetOrgId === caller.orgId) return caller.orgId;
  if (isSystemAdmin(caller)) return targetOrgId;
  throw new ToolFailure('forbidden', 'Only admin.system may act on an organization other than your own');
}

/** Whether the caller may see a record of org `orgId`. */
export const inScope = (caller: Identity, orgId: string) => orgId === caller.orgId || isSystemAdmin(caller);
