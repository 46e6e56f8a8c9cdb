/**
 * The Koa application: a request id and a log line for every request, one error boundary that
 * turns every failure into the API's own error shape, then the spec router.
 */
import type { OperationSpec } from '../../generated/operations.js';
import Koa, { type Context, type Middleware } from 'koa';
import { ulid } from '../ids.js';
import type { Logger } from '../log.js';
import { HttpError, apiOfPath, errorBody } from './errors.js';
import { jsonTypeFor } from './media.js';
import { requestScope } from './request-scope.js';
import { writeStatus } from './router.js';

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
            operationId: ctx.state.operation?.operationId,
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

export function errorBoundary(): Middleware {
  return async function errors(ctx, next) {
    try {
      await next();
    } catch (err) {
      writeError(ctx, err);
    }
  };
}

export function writeError(ctx: Context, err: unknown) {
  const api = ctx.state.api ?? apiOfPath(ctx.path);
  const known = err instanceof HttpError;
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
  const declared = (ctx.state.operation as OperationSpec | undefined)?.responses[String(status)];
  if (declared && declared.mediaTypes.length === 0) return writeStatus(ctx, status, true);
  ctx.type = jsonTypeFor(ctx, api);
  ctx.body = JSON.stringify(errorBody(api, status, message, ctx.state.requestId ?? ''));
}

export function createKoa(middleware: Middleware[]): Koa {
  const app = new Koa();
  // Koa's default handler would log (and could print) errors itself; the boundary owns them.
  app.silent = true;
  for (const m of middleware) app.use(m);
  return app;
}
