/**
 * The spec is the routing table. Every operation of generated/operations.ts is bound to exactly
 * one handler; this middleware matches the request, authenticates it with the operation's
 * security schemes, negotiates media types, reads and validates parameters and body with the
 * generated validators, calls the handler and writes its reply in the API's media type.
 *
 * Status codes for refusals come from the operation's own responses, so a client only ever sees
 * statuses the spec declares for that operation: a bad path parameter is 400, 422 or 404,
 * whichever the operation declares first; a body that is not JSON is 400; JSON that breaks the
 * schema is 422 where declared (Git LFS's "well-formed but invalid"), else 400.
 */
import type { Context, Middleware } from 'koa';
import type { ErrorObject } from 'ajv';
import type { ApiName, OperationId, OperationInputs, OperationSpec, RouteSpec, ValidateFunction } from '../../generated/operations.js';
import { routes } from '../../generated/operations.js';
import { matchRoute, operationById } from './routes.js';
import type { Identity } from '../domain/access/identity.js';
import { HttpError, StaleSessionCookie, apiOfPath } from './errors.js';
import { jsonTypeFor, negotiate } from './media.js';
import { JsonBodyError, MAX_JSON_DEPTH, readJsonText } from './json-body.js';
import { refuseUnreadBody } from './slow-clients.js';

export interface OperationContext<Id extends OperationId = OperationId> {
  ctx: Context;
  op: OperationSpec;
  /** Server variables (org, repo), path, query and header parameters (header names lower-case), validated. */
  params: OperationInputs[Id]['params'];
  /** The validated JSON body; undefined for operations without one or with a binary body. */
  body: OperationInputs[Id]['body'];
  identity: Identity | null;
}

/**
 * A reply body already written as JSON text, by a handler whose answer is large and regular enough
 * to earn its own serializer (objects/batch.ts). It must be exactly what JSON.stringify would write
 * for a value the operation's schema admits; the response checks in the tests parse and validate it.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

export interface Reply {
  status: number;
  /** A JSON value, or JsonText. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Returns a reply, or nothing when it wrote the response itself (streams, the MCP transport). */
export type Handler<Id extends OperationId = OperationId> = (c: OperationContext<Id>) => Promise<Reply | void> | Reply | void;
export type Handlers = { [Id in OperationId]: Handler<Id> };
/** What the router calls, whichever operation matched: its inputs were validated against that operation. */
type AnyHandler = Handler;

/**
 * Authenticates with one scheme: an identity, null when the request carries no credential of
 * that scheme, or a thrown HttpError(401) when it carries one that is invalid.
 */
export type SecurityHandler = (ctx: Context, op: OperationSpec) => Promise<Identity | null> | Identity | null;

export interface RouterOptions {
  handlers: Handlers;
  security: Record<string, SecurityHandler>;
  /** Headers of a 401 for an API: the challenge (WWW-Authenticate, LFS-Authenticate). */
  challenge: (api: ApiName) => Record<string, string>;
  maxJsonBytes: number;
  /**
   * Largest JSON body of a request without credentials (sign-in, public reads): far below
   * maxJsonBytes, since anyone may send one.
   */
  maxAnonymousJsonBytes: number;
  /**
   * Origins a browser may change state from with credentials it sends by itself (HTTP Basic, the
   * session cookie): ALLOWED_ORIGINS. A state change so authenticated that carries another Origin is 403.
   */
  allowedOrigins: readonly string[];
  /** Operations with a body cap of their own, and the setting that sets it (named in the 413). */
  bodyLimits?: Partial<Record<OperationId, { bytes: number; setting: string }>>;
  /**
   * Counts a request against its rate (throws 429). Anonymous requests, and requests whose
   * credentials fail, count against their address before any lookup; the others against their
   * identity once it is known.
   */
  rateLimit?: (ctx: Context, op: OperationSpec, identity: Identity | null) => Promise<void> | void;
}

interface Route {
  op: OperationSpec;
  api: ApiName;
  handler: AnyHandler;
  /** Security alternatives without the anonymous one; anonymousOk when [] is among them. */
  schemes: readonly (readonly string[])[];
  anonymousOk: boolean;
  /**
   * Anonymous callers are served, or a sign-in page is the 401: a stale session cookie is then no
   * cookie (ended in the answer), since refusing it would keep a browser from the sign-in form.
   */
  ignoresStaleSession: boolean;
  /** Media types of 2xx responses: Accept must admit one (else 406). Empty: nothing to check. */
  successTypes: string[];
  jsonRequest: boolean;
  paramRefusal: number;
  /** For a body that is not JSON, or cannot be read. */
  bodyRefusal: number;
  /** For JSON that breaks the schema: "well-formed but invalid" (422) where declared. */
  schemaRefusal: number;
  headerParams: Set<string>;
  preconditionRefusal: boolean;
  /** The body is declared as any media type (a raw upload): none at all is fine too. */
  anyBodyType: boolean;
  /** The request body's media types where a Content-Type sent must be one of them (not anyBodyType). */
  declaredTypes: string[] | null;
  /**
   * What ctx.is(declaredTypes) answered, by Content-Type, for requests with a body: with a body
   * the answer depends on that header alone, and clients send the same few again and again.
   */
  typeAnswers: Map<string, string | false>;
}

/** One path template of the route table: its routes by method. */
interface PathEntry {
  routes: Map<string, Route>;
  allow: string;
  /** A tool stub answers 405 to any method and any body: it only documents the tool. */
  stub: Route | null;
}

const JSON_TYPE = /json/;
/** Credentials a browser attaches by itself, so that another site's page could make it send them. */
const AMBIENT_SCHEMES = new Set<Identity['scheme']>(['basicAuth', 'sessionCookie']);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function refusalStatus(op: OperationSpec, preference: number[]): number {
  return preference.find((s) => String(s) in op.responses) ?? 400;
}

function compileRoute(op: OperationSpec, handler: AnyHandler): Route {
  const successTypes = Object.entries(op.responses)
    .filter(([s]) => s.startsWith('2'))
    .flatMap(([, r]) => r.mediaTypes);
  return {
    op,
    api: op.apis[0]!,
    handler,
    schemes: op.security.filter((alt) => alt.length > 0),
    anonymousOk: op.security.length === 0 || op.security.some((alt) => alt.length === 0),
    ignoresStaleSession: op.security.length === 0 || op.security.some((alt) => alt.length === 0) || Boolean(op.responses['401']?.mediaTypes.includes('text/html')),
    successTypes,
    jsonRequest: Boolean(op.requestBody?.mediaTypes.some((t) => JSON_TYPE.test(t))),
    paramRefusal: refusalStatus(op, [400, 422, 404]),
    bodyRefusal: refusalStatus(op, [400, 422]),
    schemaRefusal: refusalStatus(op, [422, 400]),
    headerParams: new Set(op.params.filter((p) => p.in === 'header').map((p) => p.name)),
    preconditionRefusal: '412' in op.responses,
    anyBodyType: Boolean(op.requestBody?.mediaTypes.includes('*/*')),
    declaredTypes: op.requestBody && !op.requestBody.mediaTypes.includes('*/*') ? [...op.requestBody.mediaTypes] : null,
    typeAnswers: new Map(),
  };
}

function compileEntry(spec: RouteSpec, handlers: Handlers): PathEntry {
  const routes = new Map<string, Route>();
  for (const [method, id] of Object.entries(spec.methods)) routes.set(method, compileRoute(operationById.get(id)!, handlers[id] as AnyHandler));
  const methods = [...routes.keys()];
  if (routes.has('GET') && !routes.has('HEAD')) methods.push('HEAD');
  return { routes, allow: methods.join(', '), stub: [...routes.values()].find((r) => r.op.tool) ?? null };
}

export function describeErrors(errors: ErrorObject[] | null | undefined, where: string): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((e) => {
      const at = `${where}${e.instancePath}`;
      if (e.keyword === 'required') return `${at} must have property '${(e.params as { missingProperty: string }).missingProperty}'`;
      if (e.keyword === 'additionalProperties') return `${at} has unknown property '${(e.params as { additionalProperty: string }).additionalProperty}'`;
      if (e.keyword === 'enum') return `${at} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
      return `${at} ${e.message}`;
    })
    .join('; ');
}

/** A header's name as a person writes it: tus-resumable → Tus-Resumable. */
const headerName = (name: string) => name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => `${dash}${c.toUpperCase()}`);

/** Parameter errors, naming a header as a header ("the header Tus-Resumable is required"). */
function describeParamErrors(errors: ErrorObject[] | null | undefined, headers: ReadonlySet<string>): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((e) => {
      const missing = e.keyword === 'required' ? (e.params as { missingProperty: string }).missingProperty : null;
      const name = missing ?? e.instancePath.slice(1).split('/')[0]!;
      if (!headers.has(name)) return describeErrors([e], 'parameter ');
      if (missing) return `the header ${headerName(name)} is required`;
      if (e.keyword === 'enum') return `the header ${headerName(name)} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
      return `the header ${headerName(name)} ${e.message}`;
    })
    .join('; ');
}

function convert(raw: string | string[] | undefined, type: string): unknown {
  if (raw === undefined) return undefined;
  // A repeated parameter is its last value, unless it is an array; an array sent once is an array of one.
  if (type === 'array') return Array.isArray(raw) ? raw : [raw];
  const value = Array.isArray(raw) ? raw[raw.length - 1]! : raw;
  if (typeof value !== 'string') return value;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

function hasBody(ctx: Context): boolean {
  const { 'content-length': len, 'transfer-encoding': te } = ctx.req.headers;
  return (len !== undefined && len !== '' && len !== '0') || (te !== undefined && te !== '');
}

/** ctx.is(route.declaredTypes), remembered by Content-Type (see Route.typeAnswers). */
function isDeclaredType(ctx: Context, route: Route): string | false | null {
  const header = ctx.req.headers['content-type'];
  const answer = header === undefined ? undefined : route.typeAnswers.get(header);
  if (answer !== undefined) return answer;
  const fresh = ctx.is(route.declaredTypes!);
  // null: no body, which depends on more than the header; a client may send any header, hence the bound.
  if (header !== undefined && fresh !== null) {
    if (route.typeAnswers.size >= 50) route.typeAnswers.clear();
    route.typeAnswers.set(header, fresh);
  }
  return fresh;
}

/**
 * What no field accepts: nesting deeper than MAX_JSON_DEPTH (recursive code downstream — the
 * validators, the MCP SDK, the audit copy — would meet it), and U+0000 in a string, which
 * PostgreSQL cannot store while SQLite can (one database would fail where the other answers).
 */
export function unacceptableJson(value: unknown, what = 'The body'): string | null {
  const found = scanJson(value, 1);
  if (found === 'nul') return `${what} contains a NUL character (\\u0000), which no field accepts`;
  if (found === 'deep') return `${what} nests deeper than ${MAX_JSON_DEPTH} levels`;
  return null;
}

/**
 * Recursive, yet never more than MAX_JSON_DEPTH + 1 frames deep, however hostile the nesting:
 * deeper is itself the finding. No allocation per value (it runs on every JSON body).
 */
function scanJson(v: unknown, depth: number): 'nul' | 'deep' | null {
  if (typeof v === 'string') return v.includes('\u0000') ? 'nul' : null;
  if (v === null || typeof v !== 'object') return null;
  if (depth > MAX_JSON_DEPTH) return 'deep';
  if (Array.isArray(v)) {
    for (const child of v) {
      const found = scanJson(child, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const key in v) {
    if (key.includes('\u0000')) return 'nul';
    const found = scanJson((v as Record<string, unknown>)[key], depth + 1);
    if (found) return found;
  }
  return null;
}

const hasNul = (s: unknown) => typeof s === 'string' && s.includes('\u0000');

export function createRouter(options: RouterOptions): Middleware {
  const entries = new Map(routes.map((spec) => [spec.template, compileEntry(spec, options.handlers)]));

  const origins = new Set(options.allowedOrigins.map((o) => o.replace(/\/$/, '').toLowerCase()));
  /** A state change made with credentials the browser sends by itself must come from an allowed origin (CSRF). */
  function refuseForeignOrigin(ctx: Context) {
    const origin = ctx.get('origin');
    if (origin && !origins.has(origin.toLowerCase())) {
      throw new HttpError(403, `Origin ${origin} may not make this request with the browser's stored credentials (ALLOWED_ORIGINS)`);
    }
  }

  async function authenticate(ctx: Context, route: Route): Promise<Identity | null> {
    for (const alternative of route.schemes) {
      // An alternative with several schemes would need all of them; the specs use one per alternative.
      const scheme = alternative[0]!;
      let identity: Identity | null;
      try {
        const answer = options.security[scheme]!(ctx, route.op);
        // A scheme finding no credential of its own answers at once: no wait for a turn then.
        identity = answer instanceof Promise ? await answer : answer;
      } catch (err) {
        if (!(err instanceof StaleSessionCookie && route.ignoresStaleSession)) throw err;
        ctx.append('Set-Cookie', [...err.clearCookies]);
        continue;
      }
      if (identity) return identity;
    }
    if (route.anonymousOk) return null;
    throw new HttpError(401, 'Credentials are required', options.challenge(route.api));
  }

  async function limitedAuthenticate(ctx: Context, route: Route): Promise<Identity | null> {
    const limit = options.rateLimit;
    if (!limit) return authenticate(ctx, route);
    if (!ctx.get('authorization')) {
      await limit(ctx, route.op, null);
      return authenticate(ctx, route);
    }
    let identity: Identity | null;
    try {
      identity = await authenticate(ctx, route);
    } catch (err) {
      // Failed credentials count against the address too (a 429 then replaces the 401).
      if (err instanceof HttpError && err.status === 401) await limit(ctx, route.op, null);
      throw err;
    }
    await limit(ctx, route.op, identity);
    return identity;
  }

  /** The body cap of a request: the operation's, or for a request without credentials the anonymous one if lower. */
  function bodyCap(route: Route, identity: Identity | null): { bytes: number; setting: string } {
    const cap = options.bodyLimits?.[route.op.operationId] ?? { bytes: options.maxJsonBytes, setting: 'MAX_JSON_BYTES' };
    if (identity || cap.bytes <= options.maxAnonymousJsonBytes) return cap;
    return { bytes: options.maxAnonymousJsonBytes, setting: 'MAX_ANONYMOUS_JSON_BYTES, for a request without credentials' };
  }

  /** `bodySent`: hasBody(ctx), which serve has asked already. */
  async function readJson(ctx: Context, route: Route, validate: ValidateFunction | null | undefined, identity: Identity | null, bodySent: boolean): Promise<unknown> {
    const spec = route.op.requestBody!;
    if (!bodySent) {
      if (spec.required) throw new HttpError(route.bodyRefusal, 'A JSON request body is required');
      return undefined;
    }
    // serve has checked the Content-Type of a body against the declared types, unless they are any.
    if (route.anyBodyType && !ctx.is(spec.mediaTypes as string[])) {
      const status = '415' in route.op.responses ? 415 : route.bodyRefusal;
      throw new HttpError(status, `Content-Type must be ${spec.mediaTypes.join(' or ')}`);
    }
    let text: string;
    // The cap and the depth apply while reading (or at once, from Content-Length), never after a parse.
    const cap = bodyCap(route, identity);
    try {
      text = await readJsonText(ctx.req, { limit: cap.bytes });
    } catch (err) {
      if (!(err instanceof JsonBodyError)) throw err;
      if (err.reason === 'too-large') {
        if (!identity) refuseUnreadBody(ctx.req, ctx.res);
        throw new HttpError('413' in route.op.responses ? 413 : route.bodyRefusal, `The body exceeds ${cap.bytes} bytes (the server's ${cap.setting} setting)`);
      }
      if (err.reason === 'too-deep') throw new HttpError(route.bodyRefusal, `The body nests deeper than ${MAX_JSON_DEPTH} levels`);
      throw new HttpError(route.bodyRefusal, `The body could not be read: ${err.message}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw new HttpError(route.bodyRefusal, `Body is not valid JSON: ${(err as Error).message}`);
    }
    // MCP tool arguments get this check per call (mcp/dispatch.ts), so the caller reads a tool error.
    // Deeper nesting was refused while reading, and a NUL can only be written \u0000 in JSON text:
    // the walk is for the bodies whose text has that.
    const unacceptable = route.op.operationId === 'mcp.post' || !text.includes('\\u0000') ? null : unacceptableJson(body);
    if (unacceptable) throw new HttpError(route.bodyRefusal, unacceptable);
    if (validate && !validate(body)) throw new HttpError(route.schemaRefusal, describeErrors(validate.errors, 'body'));
    return body;
  }

  /** Not a path of the specs: /docs/ for /docs (a redirect relative to the request, so a proxy's prefix is kept), else 404. */
  function notFound(ctx: Context) {
    ctx.state.api = apiOfPath(ctx.path);
    const bare = ctx.path.replace(/\/+$/, '');
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && bare && bare !== ctx.path && matchRoute('GET', bare)) {
      ctx.body = null; // first: no body (Koa would send the status text), then the status
      ctx.status = 308;
      ctx.set('Location', `../${bare.slice(bare.lastIndexOf('/') + 1)}${ctx.querystring ? `?${ctx.querystring}` : ''}`);
      return;
    }
    throw new HttpError(404, `Nothing is served at ${ctx.path}`);
  }

  async function serve(ctx: Context, entry: PathEntry, vars: Record<string, string>, captures: string[]) {
    const method = ctx.method === 'HEAD' && !entry.routes.has('HEAD') ? 'GET' : ctx.method;
    const stub = entry.stub;
    const route = stub ?? entry.routes.get(method);
    if (!route) {
      ctx.state.api = entry.routes.values().next().value!.api;
      throw new HttpError(405, `${ctx.method} is not served at ${ctx.path}; it serves ${entry.allow}`, { Allow: entry.allow });
    }
    ctx.state.api = route.api;
    ctx.state.operation = route.op;
    if (stub) return void (await writeReply(ctx, route, { ctx, op: route.op, params: {}, body: undefined, identity: null }));

    // The request line and headers are judged before credentials (a malformed request gets the
    // same answer with or without them); its body only after them.
    if (!decodable(captures)) throw new HttpError(route.paramRefusal, 'The path is not valid percent-encoded UTF-8');
    // An operation that declares no 406 serves its one representation whatever Accept says
    // (RFC 9110 lets a server disregard Accept), so clients only meet declared statuses.
    if (route.successTypes.length && '406' in route.op.responses && !negotiate(ctx.get('accept'), route.successTypes)) {
      throw new HttpError(406, `Accept must admit ${route.successTypes.join(' or ')}`);
    }

    const params: Record<string, unknown> = { ...vars };
    for (const p of route.op.params) {
      const raw = p.in === 'path' ? vars[p.name] : p.in === 'query' ? ctx.query[p.name] : p.in === 'header' ? ctx.get(p.name) || undefined : undefined;
      const value = convert(raw, p.type);
      if (value !== undefined) params[p.name] = value;
    }
    if (Object.values(params).some(hasNul)) throw new HttpError(route.paramRefusal, 'A parameter contains a NUL character, which none accepts');
    const validateParams = route.op.validateParams;
    if (validateParams && !validateParams(params)) {
      // A header precondition that fails (Tus-Resumable) is 412 where the operation declares it.
      const header = route.preconditionRefusal && validateParams.errors?.some((e) =>
          route.headerParams.has(e.instancePath.slice(1).split('/')[0] || String((e.params as { missingProperty?: string }).missingProperty)),
        );
      throw new HttpError(header ? 412 : route.paramRefusal, describeParamErrors(validateParams.errors, route.headerParams));
    }

    // A declared Content-Type is required whenever one is sent, body or not: a browser's form post
    // (x-www-form-urlencoded, multipart, text/plain, empty or not) reaches no operation.
    const bodySent = hasBody(ctx);
    const declaredType = route.declaredTypes;
    if (declaredType && (bodySent || ctx.get('content-type')) && !isDeclaredType(ctx, route)) {
      throw new HttpError('415' in route.op.responses ? 415 : route.bodyRefusal, `Content-Type must be ${declaredType.join(' or ')}`);
    }
    // Credentials before the body: a request that needs them and has none is refused before a
    // byte of its body is read, and one without any may send only a small body.
    let identity: Identity | null;
    try {
      identity = await limitedAuthenticate(ctx, route);
      if (identity && AMBIENT_SCHEMES.has(identity.scheme) && !SAFE_METHODS.has(ctx.method)) refuseForeignOrigin(ctx);
    } catch (err) {
      refuseUnreadBody(ctx.req, ctx.res);
      throw err;
    }
    ctx.state.identity = identity;
    ctx.state.params = params;
    const body = route.jsonRequest ? await readJson(ctx, route, route.op.requestBody!.validate, identity, bodySent) : undefined;

    // Validated against this operation's schemas above: what its handler's input types say.
    const validated: OperationContext = { ctx, op: route.op, params, body, identity };
    await writeReply(ctx, route, validated);
  }

  // @koa/router matches (routes.ts) and decodes the parameters; the first matching template
  // serves. Its routes() middleware would also compose a middleware chain per request, which this
  // binding has no use for (one handler per template).
  return async (ctx, next) => {
    const match = matchRoute(ctx.method, ctx.path);
    if (!match) {
      notFound(ctx);
      await next();
      return;
    }
    await serve(ctx, entries.get(match.spec.template)!, match.params, match.captures);
  };
}

/** @koa/router leaves a parameter that is not valid percent-encoded UTF-8 as it came; refuse it instead. */
function decodable(captures: readonly string[] | undefined): boolean {
  try {
    for (const c of captures ?? []) decodeURIComponent(c);
    return true;
  } catch {
    return false;
  }
}

async function writeReply(ctx: Context, route: Route, c: OperationContext) {
  const answer = route.handler(c);
  const reply = answer instanceof Promise ? await answer : answer;
  if (!reply) return;
  writeStatus(ctx, reply.status, reply.body === undefined);
  if (reply.headers) ctx.set(reply.headers);
  if (reply.body !== undefined) {
    setType(ctx, jsonTypeFor(ctx, route.api));
    // JsonText goes as bytes: encoded once, where a string body is measured (Content-Length) and
    // then encoded, two passes over a large answer.
    ctx.body = reply.body instanceof JsonText ? Buffer.from(reply.body.text) : JSON.stringify(reply.body);
  }
}

/**
 * The Content-Type header Koa writes for each media type the router answers in (a charset added
 * where the type has one), as Koa first wrote it: Koa looks the type up again at every response.
 */
const contentTypes = new Map<string, string>();

function setType(ctx: Context, type: string) {
  const header = contentTypes.get(type);
  if (header) return void ctx.set('Content-Type', header);
  ctx.type = type;
  contentTypes.set(type, ctx.response.get('Content-Type'));
}

/**
 * Sets the status; with `empty`, also an explicitly empty body. Koa would otherwise send the
 * status text as a body, or turn a bodiless 200 or 202 into 204.
 */
export function writeStatus(ctx: Context, status: number, empty: boolean) {
  if (empty) ctx.body = null;
  ctx.status = status;
}
