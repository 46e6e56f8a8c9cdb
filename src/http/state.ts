/**
 * What the middleware keep in Koa's ctx.state (typed `any` by Koa): requestContext (http/app.ts)
 * sets the request id and its logger for every request; the router, the origin guard and the
 * error boundary set the rest when they know it.
 */
import type { Context } from 'koa';
import type { ApiName, OperationSpec } from '../../generated/operations.js';
import type { Logger } from '../telemetry/log.js';
import type { Identity } from '../domain/access/identity.js';

export interface RequestState {
  requestId: string;
  log: Logger;
  /** The API the request was addressed to, once known (errors are written in its shape). */
  api?: ApiName;
  /** The operation the request matched. */
  operation?: OperationSpec;
  /** What the object APIs' error bodies give as documentation_url. */
  errorDocsUrl?: string;
  /** The authenticated caller, once known (its subject and org go in the access log). */
  identity?: Identity | null;
  /** The validated parameters (org, repo and oid of an object transfer go in the access log). */
  params?: Record<string, unknown>;
  /** Body bytes read and stored, where a handler counts them itself (object uploads). */
  bytesIn?: number;
  /** Body bytes sent, where a handler counts them itself (object downloads). */
  bytesOut?: number;
}

export const stateOf = (ctx: Context) => ctx.state as RequestState;

/**
 * The API a request counts under in the metrics and the access log: its operation's, or `objects`
 * for the transfers both object APIs share (their hrefs are the same, whichever API gave them).
 */
export function apiLabel(ctx: Context): string {
  const state = stateOf(ctx);
  const apis = state.operation?.apis;
  if (apis && apis.length > 1) return 'objects';
  return state.api ?? (/\.git\/info\/lfs(\/|$)/.test(ctx.path) ? 'batch' : 'dashboard');
}
