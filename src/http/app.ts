/**
 * The Koa application: a request id and a log line for every request, one error boundary that
 * turns every failure into the API's own error shape, then the spec router.
 */
import type { OperationSpec } from '../../generated/operations.js';
import Koa, { type Context, type Middleware } from 'koa';
import { ulid } from '../ground/ids.js';
import type { Logger } from '../telemetry/log.js';
import { describeDatabaseError, isDatabaseError, summariseDatabaseError } from '../ground/database-errors.js';
import { HttpError, RevokedCredential, StaleSessionCookie, apiOfPath, errorBody } from './errors.js';
import { jsonTypeFor } from './media.js';
import { errorIsPage, escapeHtml, writeNoticePage } from './notice-page.js';
import { STATUS_CODES } from './node-http.js';
import { requestScope } from './request-scope.js';
import { writeStatus } from './router.js';
import { apiLabel, stateOf } from './state.js';
import { statusClass, type Metrics } from '../telemetry/metrics.js';
import { serverSpan } from '../telemetry/tracing.js';

/** The transfer an object operation moves bytes with; undefined for the others. */
export const transferOf = (operationId: string | undefined) =>
  operationId === 'objects.upload' || operationId === 'objects.download' ? 'basic' : operationId?.startsWith('tus.') ? 'tus' : undefined;

/**
 * The request id, the access log line and the HTTP metrics. One line per request once its answer
 * is out or its connection is gone (then `aborted: true`): who asked (subject, org; never a
 * credential), what (api, operationId; for object transfers the repository, oid and transfer),
 * the status, the duration and the bytes in and out.
 */
export function requestContext(log: Logger, metrics?: Metrics): Middleware {
  // The request line's fields are fixed, flat and never a secret, so it skips pino's redaction:
  // the wildcard paths walk every line's members, about 10 µs a line, a few percent of a read
  // tool's call. Every other line keeps it.
  const accessLog = log.child({}, { redact: { paths: [] } });
  return async function requestLog(ctx, next) {
    const arrived = performance.now();
    const requestId = ulid().toUpperCase();
    ctx.state.requestId = requestId;
    // Made for every request, though most log nothing but their request line: made lazily, the
    // server's resident memory under a flood of refused anonymous bodies rose by 71-82 MB instead
    // of 11-14 (scripts/bench/fairness.ts --only deep-json), with the JS heap and V8's external
    // memory flat, i.e. in native memory freed later. Kept until that is understood.
    ctx.state.log = log.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const socket = ctx.req.socket;
    const written = socket.bytesWritten;
    metrics?.http.inFlight.inc();
    const span = serverSpan(ctx.req.headers, `${ctx.method} unmatched`, { 'http.request.method': ctx.method });
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const state = stateOf(ctx);
      const seconds = (performance.now() - arrived) / 1000;
      const operationId = state.operation?.operationId;
      const api = apiLabel(ctx);
      const aborted = !ctx.res.writableFinished;
      const declaredIn = Number(ctx.get('content-length') || 0);
      const bytesIn = state.bytesIn ?? (ctx.req.complete ? declaredIn : undefined);
      // What the socket took (headers included) when the answer was cut off, else its declared length.
      const bytesOut = state.bytesOut ?? ((!aborted && Number(ctx.res.getHeader('content-length') ?? NaN)) || socket.bytesWritten - written);
      const transfer = transferOf(operationId);
      const params = state.params;
      const identity = state.identity;
      if (span) {
        if (operationId) span.setName(operationId);
        span.setAttributes({ 'http.response.status_code': ctx.status, 'pactum.api': api, 'pactum.operation': operationId, 'pactum.transfer': transfer, 'pactum.aborted': aborted || undefined });
        if (ctx.status >= 500) span.fail(new Error('server error'));
        span.end();
      }
      if (metrics) {
        metrics.http.inFlight.dec();
        const operation = operationId ?? 'none';
        metrics.http.requests.inc({ api, operation, method: ctx.method, status_class: statusClass(ctx.status) });
        metrics.http.duration.observe({ api, operation }, seconds);
        if (ctx.status === 429 || ctx.status === 509) metrics.http.throttled.inc({ api, operation });
        if (operationId === 'auth.login') metrics.auth.signIns.inc({ outcome: ctx.status === 200 ? 'ok' : ctx.status === 429 ? 'throttled' : 'refused' });
      }
      accessLog.info(
        {
          requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          api,
          operationId,
          subject: identity?.subject,
          org: identity?.orgId,
          ms: seconds * 1000,
          bytesIn,
          bytesOut,
          ...(transfer && params ? { repo: `${String(params.org)}/${String(params.repo)}`, oid: params.oid, transfer } : {}),
          ...(aborted ? { aborted: true } : {}),
        },
        aborted ? 'request aborted' : 'request',
      );
    };
    try {
      const handle = () => requestScope.run({ requestId, method: ctx.method, path: ctx.path, arrived }, next);
      await (span ? span.run(handle) : handle());
    } finally {
      // Koa writes the body after this returns, streamed and transport-written responses later
      // still; a response closes once finished, or when its client left before that.
      // A client that left before the handler ended has closed the response already.
      if (ctx.res.writableFinished || ctx.res.destroyed) end();
      else ctx.res.once('close', end);
    }
  };
}

/**
 * A part of the server whose failures a client can retry or must resolve (the object storage):
 * it answers them in the spec's shape, and counts them, instead of a bare 500. The message is
 * written by the part, never taken from the error.
 */
export interface FailureTranslator {
  /** The answer to `err`, or null when it is not this part's failure. */
  answer(err: unknown, operation: OperationSpec | undefined): HttpError | null;
  /** Counts a failure of this part (called for every error; ignores others). */
  count?(err: unknown, operation: OperationSpec | undefined): void;
}

/**
 * `docsUrl`: what the object APIs' error bodies give as documentation_url; `parts`: the failure
 * translators of the server's parts, asked in order before the database's own.
 */
export function errorBoundary(docsUrl?: string, metrics?: Metrics, parts: readonly FailureTranslator[] = []): Middleware {
  return async function errors(ctx, next) {
    ctx.state.errorDocsUrl = docsUrl;
    try {
      await next();
    } catch (err) {
      for (const part of parts) part.count?.(err, stateOf(ctx).operation);
      if (metrics && (err instanceof RevokedCredential || (err instanceof StaleSessionCookie && err.revoked))) metrics.auth.revoked.inc({ api: apiLabel(ctx) });
      writeError(ctx, err, parts);
    }
  };
}

/**
 * Failures of the server's own parts that a client can retry or must resolve, answered in the
 * spec's shape rather than as a bare 500: each part's (the object storage's), then the database
 * unreachable (503) or a uniqueness or reference race where the operation declares 409. The
 * message is written here, never taken from the error: a database error's message carries SQL
 * and values.
 */
function retryable(err: unknown, operation: OperationSpec | undefined, parts: readonly FailureTranslator[]): HttpError | null {
  for (const part of parts) {
    const answer = part.answer(err, operation);
    if (answer) return answer;
  }
  if (!isDatabaseError(err)) return null;
  const summary = summariseDatabaseError(err);
  if (summary.kind === 'unavailable') return new HttpError(503, 'The database is unavailable; retry in 5 s', { 'Retry-After': '5' });
  if (summary.kind !== 'other' && operation?.responses['409']) return new HttpError(409, `Conflict: ${describeDatabaseError(summary)}`);
  return null;
}

export function writeError(ctx: Context, thrown: unknown, parts: readonly FailureTranslator[] = []) {
  const state = stateOf(ctx);
  const api = state.api ?? apiOfPath(ctx.path);
  const mapped = thrown instanceof HttpError ? null : retryable(thrown, state.operation, parts);
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
  // A stale session cookie's end (router.ts) stays: the browser must drop it whatever the answer.
  const ended = ([] as string[]).concat(ctx.response.get('set-cookie') || []).filter((c) => /;\s*Max-Age=0(;|$)/i.test(c));
  for (const name of Object.keys(ctx.response.headers)) if (name !== 'x-request-id') ctx.remove(name);
  if (ended.length) ctx.set('Set-Cookie', ended);
  if (known) ctx.set(err.headers);
  // Where the operation declares this status without a body (tus OPTIONS), none is sent.
  const declared = state.operation?.responses[String(status)];
  if (declared && declared.mediaTypes.length === 0) return writeStatus(ctx, status, true);
  if (state.operation && errorIsPage(state.operation, status, ctx.get('accept'))) {
    return writeNoticePage(ctx, status, STATUS_CODES[status] ?? 'Error', `<p>${escapeHtml(message)}</p>\n<p>Request id: ${escapeHtml(state.requestId ?? '')}</p>`);
  }
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
