/**
 * The HTTP front of each Prism mock (`make mock`): it reads the request, picks the example that
 * answers it, and lets Prism validate the request and answer. Prism alone answers every request
 * of an operation with the same example; client teams need the mock to follow what they ask:
 *
 * - POST /api/v1/mcp: the example named by the JSON-RPC method (initialize, tools_list, ping) or,
 *   for tools/call, by the tool (unknown_tool for a name the catalogue lacks); a notification gets
 *   202. The answer carries the request's JSON-RPC id, as the MCP SDK requires.
 * - POST …/objects/batch: upload, upload_tus (when the client lists tus) or download, with one
 *   object per requested object (its oid and size, in the hrefs too), so a client can follow them.
 * - A client that sends `Prefer` chooses itself; the front then changes nothing.
 *
 * What a real server's router answers before any operation runs is answered here in the API's
 * own error shape, as pactum does: a method the path does not serve (405 with Allow) and a JSON
 * body that does not parse (400). Prism's own problem+json for a status the operation declares
 * (its 401, 406, 415, 422) is rewritten into that shape too; one for a status the operation does
 * not declare (an unknown `Prefer` example, say) is passed on untouched, so mistakes in using the
 * mock stay visible.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Http from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer, STATUS_CODES } from '../http/node-http.js';
import type { JsonObject } from '../spec/documents.js';
import { tools } from '../../generated/tools.js';
import { errorBody } from '../http/errors.js';
import { MCP_PATH, TOOL_STUB_PATH, type MockApi } from './spec.js';

// Through require, as src/http/node-http.ts says why: the mock lives in the same bundle as the server.
const httpRequest = (createRequire(import.meta.url)('node:http') as typeof Http).request;

const GIT_LFS = 'application/vnd.git-lfs+json';
const OBJSTORE = 'application/vnd.objstore+json';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;
/**
 * On every answer: the conformance runner reports the flow checks that need a stateful server
 * (the bytes downloaded are the bytes uploaded, a second lock conflicts) as expected limitations
 * of this mock instead of failures.
 */
export const MOCK_HEADER = 'x-pactum-mock';
/** Also names the one API this port serves: the runner pointed at the wrong port says so. */
export const mockHeaderValue = (api: MockApi) => `prism; stateless; api=${api}`;
/** A mock takes small bodies; a larger one is refused rather than buffered. */
const MAX_BODY = 64 * 1024 * 1024;

interface PathEntry {
  pattern: RegExp;
  methods: Map<string, JsonObject>;
}

interface Choice {
  prefer?: string;
  /** Rewrites Prism's JSON answer to follow the request. */
  adapt?: (body: JsonObject) => JsonObject;
  /** The JSON-RPC id to put on the answer (also inside an SSE stream). */
  rpcId?: unknown;
  /** Response headers that follow the request (a tus PATCH's new offset). */
  headers?: Record<string, string>;
}

/**
 * `value` with `from` replaced by `to` inside every string, keys left alone: the client's oid goes
 * into the example as a value, never into JSON text, so any string a client sends stays a string.
 */
export function substitute<T>(value: T, from: string, to: string): T {
  if (typeof value === 'string') return value.split(from).join(to) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => substitute(v, from, to)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, from, to)])) as T;
  return value;
}

const OID = /^[0-9a-f]{64}$/;

/** The example object's oid and size in the answer become the requested ones (legacy API). */
function sameObject(oid: string, size?: unknown): Choice['adapt'] {
  return (body) => {
    const exampleOid = typeof body.oid === 'string' ? body.oid : null;
    if (!exampleOid) return body;
    const copy = substitute(body, exampleOid, oid);
    return typeof size === 'number' ? { ...copy, size } : copy;
  };
}

function pathTable(spec: JsonObject): PathEntry[] {
  const entries: PathEntry[] = [];
  for (const [path, item] of Object.entries((spec.paths ?? {}) as JsonObject)) {
    const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/{[^}]+}/g, '[^/]+');
    const methods = new Map<string, JsonObject>();
    for (const m of METHODS) if ((item as JsonObject)[m]) methods.set(m.toUpperCase(), (item as JsonObject)[m] as JsonObject);
    entries.push({ pattern: new RegExp(`^${source}$`), methods });
  }
  // Fewer parameters first: …/locks/verify before …/locks/{id}.
  const params = (e: PathEntry) => e.pattern.source.split('[^/]+').length;
  return entries.sort((a, b) => params(a) - params(b));
}

const isJson = (type: string | undefined) => !!type && /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(type);

function errorType(api: MockApi, accept: string | undefined): string {
  if (api === 'dashboard') return 'application/json';
  return accept && accept.includes(GIT_LFS) && !accept.includes(OBJSTORE) ? GIT_LFS : OBJSTORE;
}

/** The API's own error body, as the server writes it (src/http/errors.ts), with the examples' request id. */
const apiError = (api: MockApi, status: number, message: string) => errorBody(api, status, message, '01JDQ3V8K2M5N7P9R1S3T5V7X9');

function sendError(res: ServerResponse, api: MockApi, accept: string | undefined, status: number, message: string, headers: Record<string, string> = {}) {
  const body = JSON.stringify(apiError(api, status, message));
  res.writeHead(status, { ...headers, [MOCK_HEADER]: mockHeaderValue(api), 'content-type': errorType(api, accept), 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The example that answers a JSON-RPC message, by its method (and tool name). */
function mcpChoice(message: JsonObject, exampleNames: Set<string>): Choice {
  const id = message.id;
  if (id === undefined) return { prefer: 'code=202' };
  const method = message.method;
  const tool = (message.params as JsonObject | undefined)?.name;
  if (method === 'tools/call') {
    if (typeof tool !== 'string' || !exampleNames.has(tool) || !Object.hasOwn(tools, tool)) return { prefer: 'example=unknown_tool', rpcId: id, adapt: unknownTool(tool) };
    // Arguments the tool's input schema refuses get the tool error the server gives, naming why.
    const validate = tools[tool as keyof typeof tools].validateInput;
    const args = (message.params as JsonObject).arguments ?? {};
    if (!validate(args)) return { prefer: 'example=invalid_arguments', rpcId: id, adapt: invalidArguments(validate.errors ?? []) };
    return { prefer: `example=${tool}`, rpcId: id };
  }
  const example = method === 'initialize' ? 'initialize' : method === 'tools/list' ? 'tools_list' : method === 'ping' ? 'ping' : 'unknown_method';
  return { prefer: `example=${example}`, rpcId: id };
}

const unknownTool = (name: unknown) => (body: JsonObject): JsonObject => ({ ...body, error: { code: -32602, message: `Unknown tool: ${String(name)}` } });

function invalidArguments(errors: { instancePath?: string; message?: string }[]) {
  const message = errors.map((e) => `arguments${e.instancePath ?? ''} ${e.message ?? 'is invalid'}`).join('; ');
  return (body: JsonObject): JsonObject => ({ ...body, result: { content: [{ type: 'text', text: JSON.stringify({ error: 'invalid_arguments', message }) }], isError: true } });
}

/** The declared request media types of an operation, or null when it takes any (or no body). */
function requestTypes(op: JsonObject): string[] | null {
  const content = (op.requestBody as JsonObject | undefined)?.content as JsonObject | undefined;
  if (!content) return null;
  const types = Object.keys(content);
  return types.includes('*/*') ? null : types;
}

/** Each requested object answered from the example's first object, with its oid and size. */
function batchChoice(request: JsonObject): Choice {
  const operation = request.operation;
  const transfers = Array.isArray(request.transfers) ? request.transfers : [];
  const example = operation === 'upload' ? (transfers.includes('tus') ? 'upload_tus' : 'upload') : operation === 'download' ? 'download' : undefined;
  if (!example) return {};
  const wanted = (Array.isArray(request.objects) ? request.objects : []) as JsonObject[];
  return {
    prefer: `example=${example}`,
    adapt: (body) => {
      const template = ((body.objects ?? []) as JsonObject[])[0];
      if (!template || !wanted.length) return body;
      // Prism answers 2xx only to a request valid against the spec: each oid is a string.
      const exampleOid = template.oid as string;
      const objects = wanted.map((w): JsonObject => {
        const oid = w.oid as string;
        // What the server answers for an object it cannot take: its own 422 inside the 200.
        if (!OID.test(oid)) return { oid, size: w.size ?? 0, error: { code: 422, message: 'Invalid oid: expected 64 lower-case hex digits (SHA-256)' } };
        if (!(Number.isSafeInteger(w.size) && (w.size as number) >= 0)) return { oid, size: w.size ?? 0, error: { code: 422, message: 'Invalid size: expected a non-negative integer' } };
        return { ...substitute(template, exampleOid, oid), oid, size: w.size as number };
      });
      return { ...body, objects };
    },
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Re-ids an SSE stream's JSON-RPC messages. */
function reIdStream(text: string, id: unknown): string {
  return text.replace(/^data: (.*)$/gm, (line, data: string) => {
    try {
      return `data: ${JSON.stringify({ ...(JSON.parse(data) as JsonObject), id })}`;
    } catch {
      return line;
    }
  });
}

export interface FrontOptions {
  api: MockApi;
  /** The spec Prism serves. */
  spec: JsonObject;
  /** Where Prism listens. */
  prism: { host: string; port: number };
}

export function createMockFront(o: FrontOptions): Server {
  const table = pathTable(o.spec);
  const mcpOp = ((o.spec.paths as JsonObject)[MCP_PATH] as JsonObject | undefined)?.post as JsonObject | undefined;
  const mcpExamples = new Set(Object.keys(((((mcpOp?.responses as JsonObject | undefined)?.['200'] as JsonObject | undefined)?.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined)?.examples ?? {}));

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://mock');
    const accept = req.headers.accept;
    const entry = table.find((e) => e.pattern.test(url.pathname));
    const stub = o.api === 'dashboard' && TOOL_STUB_PATH.test(url.pathname);
    let method = req.method ?? 'GET';
    let body = await readBody(req);
    if (!body) return sendError(res, o.api, accept, 413, 'The body is larger than the mock takes (64 MiB)');
    const headers = { ...req.headers };

    if (stub) {
      // The real stub answers 405 whatever is sent: Prism gets a bare POST, which its spec answers so.
      method = 'POST';
      body = Buffer.alloc(0);
      delete headers['content-type'];
    } else if (entry) {
      const op = entry.methods.get(method) ?? (method === 'HEAD' ? entry.methods.get('GET') : undefined);
      if (!op) {
        const allow = [...entry.methods.keys()].join(', ');
        return sendError(res, o.api, accept, 405, `${method} is not served at ${url.pathname}; it serves ${allow}`, { allow });
      }
      // A body of a type the operation does not take is refused, as by the server (Prism lets binary bodies through).
      const types = requestTypes(op);
      const sent = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (types && body.length && sent && !types.includes(sent) && (op.responses as JsonObject)['415']) {
        return sendError(res, o.api, accept, 415, `Content-Type ${sent} is not accepted here; send ${types.join(' or ')}`);
      }
      // An upload whose bytes do not hash to its oid is refused, as by the server (stateless, so the mock can).
      if (op.operationId === 'objects.upload') {
        const oid = /\/content\/([0-9a-f]{64})$/.exec(url.pathname)?.[1];
        if (oid && createHash('sha256').update(body).digest('hex') !== oid && (op.responses as JsonObject)['422']) {
          return sendError(res, o.api, accept, 422, `The content's SHA-256 is not ${oid}: the upload is refused`);
        }
      }
      if (!req.headers.prefer) {
        // A range asks for part of the object (206); a legacy announcement of a new object is 202.
        if (req.headers.range && (op.responses as JsonObject)['206']) headers.prefer = 'code=206';
        if (op.operationId === 'legacy.createObject') headers.prefer = 'code=202';
      }
      // Prism decodes form fields twice (its body validator) and dies on a '%' the first decoding
      // left: it gets each field escaped once more, so its second decoding gives the field sent.
      if (body.length && sent === 'application/x-www-form-urlencoded') {
        const twice = (t: string) => encodeURIComponent(encodeURIComponent(t));
        body = Buffer.from([...new URLSearchParams(body.toString('utf8'))].map(([k, v]) => `${twice(k)}=${twice(v)}`).join('&'));
        headers['content-length'] = String(body.length);
      }
      let parsed: JsonObject | undefined;
      if (body.length && isJson(req.headers['content-type'])) {
        try {
          parsed = JSON.parse(body.toString('utf8')) as JsonObject;
        } catch (err) {
          return sendError(res, o.api, accept, 400, `Body is not valid JSON: ${(err as Error).message}`);
        }
      }
      if (parsed && typeof parsed === 'object' && !req.headers.prefer) {
        const choice =
          op === mcpOp ? mcpChoice(parsed, mcpExamples)
          : op.operationId === 'batch.batch' ? batchChoice(parsed)
          : op.operationId === 'legacy.createObject' && typeof parsed.oid === 'string' ? { adapt: sameObject(parsed.oid, parsed.size) }
          : {};
        if (choice.prefer) headers.prefer = choice.prefer;
        return forward(req, res, method, headers, body, op, choice);
      }
      const pathOid = /\/objects\/([0-9a-f]{64})$/.exec(url.pathname)?.[1];
      if (op.operationId === 'legacy.getObject' && pathOid && !req.headers.prefer) return forward(req, res, method, headers, body, op, { adapt: sameObject(pathOid) });
      // A PATCH moves the offset by what it carried.
      const offset = Number(req.headers['upload-offset']);
      if (op.operationId === 'tus.patch' && Number.isInteger(offset)) return forward(req, res, method, headers, body, op, { headers: { 'upload-offset': String(offset + body.length) } });
      return forward(req, res, method, headers, body, op, {});
    }
    return forward(req, res, method, headers, body, undefined, {});
  }

  function forward(req: IncomingMessage, res: ServerResponse, method: string, headers: IncomingMessage['headers'], body: Buffer, op: JsonObject | undefined, choice: Choice) {
    headers['content-length'] = String(body.length);
    delete headers['transfer-encoding'];
    const upstream = httpRequest({ host: o.prism.host, port: o.prism.port, method, path: req.url, headers }, (answer) => {
      const type = answer.headers['content-type'];
      const status = answer.statusCode ?? 502;
      const declared = op && Object.keys((op.responses ?? {}) as JsonObject).includes(String(status));
      const problem = type === 'application/problem+json' && declared;
      const rewrite = problem || ((choice.adapt || choice.rpcId !== undefined) && (isJson(type) || type?.startsWith('text/event-stream')));
      answer.headers[MOCK_HEADER] = mockHeaderValue(o.api);
      if (choice.headers && status < 300) Object.assign(answer.headers, choice.headers);
      if (!rewrite || method === 'HEAD') {
        res.writeHead(status, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        try {
          rewritten(Buffer.concat(chunks).toString('utf8'));
        } catch (err) {
          // Whatever goes wrong here stays with this request: the mock keeps serving everyone else.
          if (!res.headersSent) sendError(res, o.api, req.headers.accept, 502, `The mock could not adapt Prism's answer to this request: ${(err as Error).message}`);
          else res.destroy();
        }
      });
      answer.on('error', () => res.destroy());
      function rewritten(text: string) {
        const out = { ...answer.headers };
        delete out['content-length'];
        let reply: string;
        if (problem) {
          const p = JSON.parse(text) as { title?: string; detail?: string };
          reply = JSON.stringify(apiError(o.api, status, p.detail || p.title || STATUS_CODES[status] || 'Error'));
          out['content-type'] = errorType(o.api, req.headers.accept);
        } else if (type?.startsWith('text/event-stream')) {
          reply = reIdStream(text, choice.rpcId);
        } else {
          let value = JSON.parse(text) as JsonObject;
          if (choice.adapt && status >= 200 && status < 300) value = choice.adapt(value);
          if (choice.rpcId !== undefined && value && typeof value === 'object' && 'jsonrpc' in value) value = { ...value, id: choice.rpcId as JsonObject[string] };
          reply = JSON.stringify(value);
        }
        out['content-length'] = String(Buffer.byteLength(reply));
        res.writeHead(status, out);
        res.end(reply);
      }
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) sendError(res, o.api, req.headers.accept, 502, `The Prism mock behind this port did not answer: ${err.message}`);
      else res.destroy();
    });
    upstream.end(body);
  }

  return createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, o.api, req.headers.accept, 500, `mock front: ${(err as Error).message}`);
      else res.destroy();
    });
  });
}
