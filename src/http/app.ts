/**
 * The Koa application: a request id and a log line for every request, one error boundary that
 * turns every failure into the API's own error shape, then the spec router.
 */
import type { OperationSpec } from '../../generated/operations.js';
import Koa, { type Context, type Middleware } from 'koa';
import { ulid } from '../ids.js';
import type { Logger } from '../log.js';
import { describeDatabaseError, isDatabaseError, summariseDatabaseError } from '../db/errors.js';
import { HasherFailed } from '../objects/store/hasher.js';
import { StoreUnavailable } from '../objects/store/backend.js';
import { HttpError, apiOfPath, errorBody } from './errors.js';
import { jsonTypeFor } from './media.js';
import { requestScope } from './request-scope.js';
import { writeStatus } from './router.js';
import { stateOf } from './state.js';

export function requestContext(log: Logger): Middleware {
  return async function requestLog(ctx, next) {
    const started = process.hrtime.bigint();
    const requestId = ulid().toUpperCase();
    ctx.state.requestId = requestId;
    ctx.state.log = log.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    try {
      await requestScope.run({ requestId, method: ctx.method, path: ctx.path }, next);
    } finally {
      const log = () =>
        (ctx.state.log as Logger).info(
          {
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            operationId: stateOf(ctx).operation?.operationId,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          },
          'request',
        );
      // Streamed and transport-written responses finish after next() resolves.
      if (ctx.res.writableFinished || !ctx.res.headersSent) log();
      else ctx.res.once('finish', log);
    }
  };
}

/** `docsUrl`: what the object APIs' error bodies give as documentation_url. */
export function errorBoundary(docsUrl?: string): Middleware {
  return async function errors(ctx, next) {
    ctx.state.errorDocsUrl = docsUrl;
    try {
      await next();
    } catch (err) {
      writeError(ctx, err);
    }
  };
}

/**
 * Failures of the server's own parts that a client can retry or must resolve, answered in the
 * spec's shape rather than as a bare 500: the database unreachable (503), a uniqueness or
 * reference race where the operation declares 409, a hashing thread that died or an object
 * storage that does not answer (503). The message
 * is written here, never taken from the error: a database error's message carries SQL and values.
 */
function retryable(err: unknown, operation: OperationSpec | undefined): HttpError | null {
  if (err instanceof HasherFailed) return new HttpError(503, `${err.message}; retry in 1 s`, { 'Retry-After': '1' });
  // Nothing of the request was kept (an object becomes visible only once stored whole).
  if (err instanceof StoreUnavailable) return new HttpError(503, 'The object storage is unavailable; retry in 5 s', { 'Retry-After': '5' });
  if (!isDatabaseError(err)) return null;
  const summary = summariseDatabaseError(err);
  if (summary.kind === 'unavailable') return new HttpError(503, 'The database is unavailable; retry in 5 s', { 'Retry-After': '5' });
  if (summary.kind !== 'other' && operation?.responses['409']) return new HttpError(409, `Conflict: ${describeDatabaseError(summary)}`);
  return null;
}

export function writeError(ctx: Context, thrown: unknown) {
  const state = stateOf(ctx);
  const api = state.api ?? apiOfPath(ctx.path);
  const mapped = thrown instanceof HttpError ? null : retryable(thrown, state.operation);
  const err = mapped ?? thrown;
  const known = err instanceof HttpError;
  if (mapped) (ctx.state.log as Logger | undefined)?.warn({ err: thrown, status: mapped.status }, 'request failed on a server part');
  if (!known) (ctx.state.log as Logger | undefined)?.error({ err }, 'unhandled error');
  if (ctx.headerSent || !ctx.writable) {
    ctx.res.destroy();
    return;
  }
  const status = known ? err.status : 500;
  const message = known ? err.message : 'Internal error; the request id identifies it in the server log';
  ctx.status = status;
  for (const name of Object.keys(ctx.response.headers)) if (name !== 'x-request-id') ctx.remove(name);
  if (known) ctx.set(err.headers);
  // Where the operation declares this status without a body (tus OPTIONS), none is sent.
  const declared = state.operation?.responses[String(status)];
  if (declared && declared.mediaTypes.length === 0) return writeStatus(ctx, status, true);
  ctx.type = jsonTypeFor(ctx, api);
  ctx.body = JSON.stringify(errorBody(api, status, message, state.requestId ?? '', state.errorDocsUrl));
}

export function createKoa(middleware: Middleware[]): Koa {
  const app = new Koa();
  // Koa's default handler would log (and could print) errors itself; the boundary owns them.
  app.silent = true;
  for (const m of middleware) app.use(m);
  return app;
}
