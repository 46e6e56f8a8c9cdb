/**
 * Requests for the mock's e2e test, built from the contract (generated/operations.ts and the
 * bundled specs), and the checks of what comes back: the status, content type, body and required
 * headers the contract declares (the server's own checkResponse), header values against their
 * schemas, and the example the served mock spec says Prism answers with.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ApiName, OperationSpec } from '../../../generated/operations.js';
import { checkResponse } from '../../../src/http/response-check.js';
import { deref, toDefs, type Json, type JsonObject, type ParameterObject } from '../../../src/spec/documents.js';
import { EXAMPLE_CONTENT } from '../../../src/mock/spec.js';

export const GIT_LFS_JSON = 'application/vnd.git-lfs+json';
export const OBJSTORE_JSON = 'application/vnd.objstore+json';
export const MCP_ACCEPT = 'application/json, text/event-stream';

/** Credentials of each security scheme; Prism only checks their shape. */
export const CREDENTIALS: Record<string, Record<string, string>> = {
  bearerAuth: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfdGVzdCJ9.c2ln' },
  sessionCookie: { cookie: 'session=q3Vt9kR2mX7pL4sN8wZ1cF6hJ0bD5gY2aE9uT3iO7rM' },
  basicAuth: { authorization: `Basic ${Buffer.from('ada:correct horse battery').toString('base64')}` },
  transferToken: { authorization: 'Bearer eyJyIjoiYWNtZS9zaXRlIn0.c2ln' },
};

export { freePorts } from '../../helpers/ports.js';

/** The base path of a spec's server URL: '' for the dashboard, /{org}/{repo}.git/info/lfs for the object APIs. */
export function basePathOf(doc: JsonObject): string {
  const url = ((doc.servers ?? []) as { url: string }[])[0]?.url ?? '';
  return (/^(?:[a-z][a-z0-9+.-]*:\/\/[^/]+)?(\/.*)?$/i.exec(url)?.[1] ?? '').replace(/\/$/, '');
}

/** The operation object and path item of `op` in a spec whose paths may or may not carry the base path. */
export function specOperation(doc: JsonObject, op: OperationSpec): { item: JsonObject; operation: JsonObject } {
  const paths = doc.paths as JsonObject;
  const base = basePathOf(doc);
  const key = op.path in paths ? op.path : op.path.startsWith(base) ? op.path.slice(base.length) : op.path;
  const item = deref(doc, paths[key]!) as JsonObject | undefined;
  const operation = item?.[op.method.toLowerCase()] as JsonObject | undefined;
  if (!item || !operation) throw new Error(`${op.method} ${op.path} is not in the spec`);
  return { item, operation };
}

function firstExample(doc: JsonObject, media: JsonObject | undefined): Json | undefined {
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  const first = Object.values((media.examples ?? {}) as JsonObject)[0];
  if (first !== undefined) return (deref(doc, first) as JsonObject).value;
  const schema = media.schema ? (deref(doc, media.schema) as JsonObject) : undefined;
  return Array.isArray(schema?.examples) ? schema.examples[0] : undefined;
}

/** A value as a URL or a header carries it: the specs give parameters and headers scalar examples, defaults and bounds. */
function scalar(v: Json | undefined): string {
  if (typeof v === 'object' && v !== null) throw new Error(`a parameter or header value that is not a scalar: ${JSON.stringify(v)}`);
  return String(v);
}

function paramValue(doc: JsonObject, param: ParameterObject): string {
  if (param.example !== undefined) return scalar(param.example);
  const schema = deref(doc, (param.schema ?? {}) as JsonObject);
  if (Array.isArray(schema.examples) && schema.examples.length) return scalar(schema.examples[0]);
  if (schema.const !== undefined) return scalar(schema.const);
  if (schema.default !== undefined) return scalar(schema.default);
  if (schema.type === 'integer' || schema.type === 'number') return scalar(schema.minimum ?? 0);
  return 'x';
}

export interface MockRequest {
  method: string;
  /** The path as a client sends it (object APIs: under /acme/site.git/info/lfs). */
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * The request a client sends for `op`, from the bundled spec: path parameters from their examples
 * (org and repo from the server variables' defaults), required headers, credentials of the first
 * non-anonymous security alternative, and the body of the first request example of `mediaType`.
 */
export function buildRequest(doc: JsonObject, op: OperationSpec, opts: { mediaType?: string; requestExample?: string } = {}): MockRequest {
  const { item, operation } = specOperation(doc, op);
  const params = [...((item.parameters ?? []) as Json[]), ...((operation.parameters ?? []) as Json[])].map((p) => deref(doc, p as JsonObject) as ParameterObject);
  const variables = (((doc.servers ?? []) as JsonObject[])[0]?.variables ?? {}) as JsonObject;
  const path = op.path.replace(/{([^}]+)}/g, (_, name: string) => {
    const p = params.find((x) => x.in === 'path' && x.name === name);
    if (p) return encodeURIComponent(paramValue(doc, p));
    const v = variables[name] as JsonObject | undefined;
    if (v?.default !== undefined) return scalar(v.default);
    throw new Error(`${op.operationId}: no value for {${name}}`);
  });
  const headers: Record<string, string> = {};
  for (const p of params) if (p.in === 'header' && p.required === true) headers[p.name.toLowerCase()] = paramValue(doc, p);
  const scheme = op.security.find((alt) => alt.length > 0)?.[0];
  if (scheme) Object.assign(headers, CREDENTIALS[scheme]);

  const mediaType = opts.mediaType;
  const req: MockRequest = { method: op.method, path, headers };
  if (op.apis.includes('dashboard')) headers.accept = op.operationId === 'mcp.post' ? MCP_ACCEPT : mediaType ?? successMediaType(op) ?? 'application/json';
  else if (mediaType) headers.accept = mediaType;

  const body = operation.requestBody ? deref(doc, operation.requestBody as JsonObject) : undefined;
  const content = (body?.content ?? {}) as JsonObject;
  const types = Object.keys(content);
  if (types.length) {
    const type = mediaType && types.includes(mediaType) ? mediaType : types[0]!;
    const media = content[type] as JsonObject;
    if (/json/.test(type)) {
      const named = opts.requestExample ? ((media.examples ?? {}) as JsonObject)[opts.requestExample] : undefined;
      const example = named ? (deref(doc, named) as JsonObject).value : firstExample(doc, media);
      if (example === undefined) throw new Error(`${op.operationId}: no request example for ${type}`);
      headers['content-type'] = type;
      req.body = JSON.stringify(example);
    } else {
      headers['content-type'] = type.includes('*') ? 'application/octet-stream' : type;
      req.body = op.method === 'PATCH' ? EXAMPLE_CONTENT.slice(Number(headers['upload-offset'] ?? 0)) : EXAMPLE_CONTENT;
    }
  }
  return req;
}

export interface MockResponse {
  status: number;
  headers: Record<string, string>;
  /** null when there is no body (HEAD, 204, or empty). */
  body: Buffer | null;
  text: string;
}

export async function send(baseUrl: string, req: MockRequest, extraHeaders: Record<string, string> = {}): Promise<MockResponse> {
  const res = await fetch(baseUrl + req.path, {
    method: req.method,
    headers: { ...req.headers, ...extraHeaders },
    body: req.body,
    redirect: 'manual',
  });
  const buf = Buffer.from(await res.arrayBuffer());
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k] = v));
  return { status: res.status, headers, body: buf.length ? buf : null, text: buf.toString('utf8') };
}

/** Ajv over a bundled spec's component schemas. */
export function schemaCompiler(doc: JsonObject) {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const defs = toDefs(((doc.components as JsonObject)?.schemas ?? {})) as JsonObject;
  const cache = new Map<string, ReturnType<typeof ajv.compile>>();
  return (schema: Json) => {
    const key = JSON.stringify(schema);
    let v = cache.get(key);
    if (!v) cache.set(key, (v = ajv.compile({ $defs: defs, ...(toDefs(schema) as JsonObject) })));
    return v;
  };
}

/**
 * Everything in a response that the contract (the bundled spec `doc`) does not declare for `op`:
 * an undeclared status, content type or header, a body that fails its schema, a missing required
 * header, a header value that fails its schema, and any violation Prism itself reported.
 */
export function contractProblems(
  doc: JsonObject,
  op: OperationSpec,
  res: MockResponse,
  compile = schemaCompiler(doc),
  opts: { requestViolations?: 'fail' | 'ignore' } = {},
): string[] {
  const problems = checkResponse(op, op.path, res.status, res.headers, op.method === 'HEAD' ? null : res.body);
  for (const v of prismViolations(res)) {
    if (v.location[0] === 'request' && opts.requestViolations === 'ignore') continue;
    // Prism's own response check takes a header whose value is falsy ('' or 0) for a missing one:
    // Allow: '' of the tool stubs is what the server sends. Presence is checked above anyway.
    const missing = /must have required property '([^']+)'/.exec(v.message)?.[1];
    if (v.location.join('.') === 'response.header' && missing && res.headers[missing] !== undefined) continue;
    problems.push(`Prism reports a violation: ${JSON.stringify(v)}`);
  }
  const { operation } = specOperation(doc, op);
  const declared = ((operation.responses ?? {}) as JsonObject)[String(res.status)];
  if (!declared) return problems;
  const headers = (deref(doc, declared as JsonObject).headers ?? {}) as JsonObject;
  for (const [name, raw] of Object.entries(headers)) {
    const value = res.headers[name.toLowerCase()];
    const h = deref(doc, raw as JsonObject);
    if (value === undefined || !h.schema) continue;
    const schema = deref(doc, h.schema as JsonObject);
    const typed = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) : value;
    const validate = compile(schema);
    if (!validate(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${ajvText(validate.errors)}`);
  }
  return problems;
}

interface PrismViolation {
  location: string[];
  severity: string;
  code: string | number;
  message: string;
}

/** The violations Prism lists in its sl-violations header. */
export function prismViolations(res: MockResponse): PrismViolation[] {
  const raw = res.headers['sl-violations'];
  return raw ? (JSON.parse(raw) as PrismViolation[]) : [];
}

const ajvText = (errors: unknown) => (Array.isArray(errors) ? errors.map((e: { message?: string }) => e.message).join('; ') : '');

export interface Expected {
  status: number;
  mediaType: string | null;
  body: Json | string | undefined;
  headers: Record<string, string>;
}

/**
 * What the served mock spec says Prism answers to `op`: its `status` (default: the lowest 2xx),
 * in `mediaType` (default: the response's first), with the named example (default: the first).
 */
export function expectedResponse(served: JsonObject, op: OperationSpec, opts: { status?: string; mediaType?: string; example?: string } = {}): Expected {
  const { operation } = specOperation(served, op);
  const responses = (operation.responses ?? {}) as JsonObject;
  const status = opts.status ?? Object.keys(responses).filter((c) => /^2\d\d$/.test(c)).sort()[0] ?? Object.keys(responses)[0]!;
  const res = deref(served, responses[status] as JsonObject);
  const content = (res.content ?? {}) as JsonObject;
  const mediaType = op.method === 'HEAD' ? null : opts.mediaType && content[opts.mediaType] ? opts.mediaType : (Object.keys(content)[0] ?? null);
  const media = mediaType ? (content[mediaType] as JsonObject) : undefined;
  let body: Json | undefined;
  if (media && opts.example) body = (deref(served, ((media.examples ?? {}) as JsonObject)[opts.example] as JsonObject) as JsonObject | undefined)?.value;
  else if (media) body = firstExample(served, media);
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries((res.headers ?? {}) as JsonObject)) {
    const h = deref(served, raw as JsonObject);
    if (h.example !== undefined) headers[name.toLowerCase()] = scalar(h.example);
  }
  return { status: Number(status), mediaType, body, headers };
}

/** The body as JSON when its type says so, else as text. */
export function bodyOf(res: MockResponse): Json | string | undefined {
  if (!res.body) return undefined;
  return /json/.test(res.headers['content-type'] ?? '') ? (JSON.parse(res.text) as Json) : res.text;
}

export const isObjectApi = (api: ApiName) => api !== 'dashboard';

/** The media type of the operation's first success response (text/html for the documentation page). */
function successMediaType(op: OperationSpec): string | undefined {
  return Object.entries(op.responses).filter(([status]) => status.startsWith('2')).flatMap(([, r]) => r.mediaTypes)[0];
}
