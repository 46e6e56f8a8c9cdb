/**
 * What the middleware keep in Koa's ctx.state (typed `any` by Koa): requestContext (http/app.ts)
 * sets the request id and its logger for every request; the router, the origin guard and the
 * error boundary set the rest when they know it.
 */
import type { Context } from 'koa';
import type { ApiName, OperationSpec } from '../../generated/operations.js';
import type { Logger } from '../log.js';

export interface RequestState {
  requestId: string;
  log: Logger;
  /** The API the request was addressed to, once known (errors are written in its shape). */
  api?: ApiName;
  /** The operation the request matched. */
  operation?: OperationSpec;
  /** What the object APIs' error bodies give as documentation_url. */
  errorDocsUrl?: string;
}

export const stateOf = (ctx: Context) => ctx.state as RequestState;
