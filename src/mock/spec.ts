/**
 * Derives, from a bundled spec (generated/specs/<api>.json), the spec the Prism mock serves
 * (`make mock`, docs/mock.md), adjusted so that Prism answers what the real server does:
 *
 * - dashboard: each tool discovery stub keeps only its 405 (Prism would otherwise answer the
 *   lowest 2xx), with a body naming the tool and an empty `Allow`, and takes any request body (the
 *   real stub answers 405 whatever is sent; Prism would validate a declared body first).
 *   POST /api/v1/mcp gains a 200 example per tool, named as the tool, plus `initialize` and
 *   `tools_list`, which clients select with `Prefer: example=<name>` (also on its SSE variant).
 * - legacy, batch: the server's base path `/{org}/{repo}.git/info/lfs` moves into the paths (as
 *   path parameters org and repo), because Prism matches request paths against the paths only:
 *   clients call the mock at the URLs they call the real server at. application/vnd.objstore+json
 *   comes first in each response, as it is what the server answers an Accept that allows any.
 *   Downloads answer the example object's bytes, tus HEAD/PATCH consistent offsets.
 * - all: every JSON response without an example gets one (from a sibling media type of the same
 *   response, else from its schema's `examples`, with the error message taken from the response's
 *   description), response headers get realistic examples, and an optional header nothing gives a
 *   value for is left out rather than sent as Prism's placeholder ("string", 0). Components no
 *   longer referenced (ToolStub, the tools' schemas) are dropped.
 *
 * Pure and deterministic: the same inputs give the same document, keys in the same order. The
 * result stays valid OpenAPI 3.1 (Redocly's recommended-strict passes but for
 * operation-2xx-response, as a stub answers only 405) and every example validates against the
 * contract's schema: test/e2e/mock.test.ts checks both, and what Prism serves.
 */
import { STATUS_CODES } from '../http/node-http.js';
import { deref, escapePointer, inline, type Json, type JsonObject } from '../spec/documents.js';

export type MockApi = 'dashboard' | 'legacy' | 'batch';

/** A tool of the catalogue: generated/tools.ts entries and the generator's collectTools() both fit. */
export interface MockTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly annotations?: unknown;
  readonly inputSchema: unknown;
  readonly outputSchema: unknown;
}

export const MCP_PATH = '/api/v1/mcp';
export const TOOL_STUB_PATH = /^\/api\/v1\/mcp\/tools\/([a-z0-9_]+)$/;
/** The example names the mock adds to the 200 of POST /api/v1/mcp besides one per tool. */
export const MCP_LIFECYCLE_EXAMPLES = ['initialize', 'tools_list'] as const;
/** The server name the real MCP endpoint reports in its initialize result (src/mcp/server.ts). */
export const MCP_SERVER_NAME = 'pactum-dashboard';
const DEFAULT_PROTOCOL_VERSION = '2025-11-25';

/**
 * The content of the specs' example object: its SHA-256 is their example oid
 * 5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03 and its size their example
 * size 6. Served as the body of downloads.
 */
export const EXAMPLE_CONTENT = 'hello\n';
/**
 * The mock's story of a resumed transfer: a download resumed at byte 2 (206 `bytes 2-5/6`), a tus
 * upload interrupted after 2 bytes (HEAD: Upload-Offset 2) and completed by PATCH (Upload-Offset 6).
 */
const PARTIAL_FROM = 2;
/** The object APIs answer this type when the client's Accept allows any (their info.description). */
const OBJECTS_DEFAULT_MEDIA = 'application/vnd.objstore+json';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);
const isJsonMedia = (type: string) => /^application\/(?:[\w.-]+\+)?json(?:;|$)/i.test(type.trim());
const clone = <T extends Json>(v: T): T => structuredClone(v);

/**
 * The spec Prism should serve for `api`. `tools` is the MCP tool catalogue (only read for the
 * dashboard); without it, the catalogue is read from the stubs' x-mcp-tool extensions and schemas,
 * exactly as scripts/generate.ts builds generated/tools.ts.
 */
export function deriveMockSpec(api: MockApi, bundled: JsonObject, tools?: readonly MockTool[]): JsonObject {
  const doc = clone(bundled);
  if (api === 'dashboard') {
    const catalogue = [...(tools ?? catalogueFromSpec(bundled))].sort((a, b) => a.name.localeCompare(b.name));
    adjustToolStubs(doc);
    addMcpExamples(doc, catalogue);
  } else {
    moveBasePathIntoPaths(doc);
    preferMediaType(doc, OBJECTS_DEFAULT_MEDIA);
    addTransferExamples(doc);
  }
  fillResponseExamples(doc);
  fillHeaderExamples(doc);
  pruneComponents(doc);
  doc['x-mock'] = {
    derivedBy: 'src/mock/spec.ts (deriveMockSpec)',
    description: 'The spec the Prism mock serves (make mock); see docs/mock.md. The contract itself is generated/specs.',
  };
  return doc;
}

// ---------------------------------------------------------------------------------------------
// walking

interface OperationRef {
  path: string;
  method: string;
  op: JsonObject;
}

function operationsOf(doc: JsonObject): OperationRef[] {
  const out: OperationRef[] = [];
  for (const [path, rawItem] of Object.entries((doc.paths ?? {}) as JsonObject)) {
    const item = deref(doc, rawItem) as JsonObject;
    for (const method of METHODS) if (isObject(item[method])) out.push({ path, method, op: item[method] });
  }
  return out;
}

/** The response object a status of an operation resolves to (a component when it is a $ref). */
function responseAt(doc: JsonObject, op: JsonObject, status: string): JsonObject {
  return deref(doc, (op.responses as JsonObject)[status]!) as JsonObject;
}

/** The first example a media type object carries: `example`, else the first of `examples`. */
function firstExample(doc: JsonObject, media: JsonObject): Json | undefined {
  if (media.example !== undefined) return media.example;
  const first = Object.values((media.examples ?? {}) as JsonObject)[0];
  return first === undefined ? undefined : (deref(doc, first) as JsonObject).value;
}

function schemaExample(doc: JsonObject, schema: Json | undefined): Json | undefined {
  if (!isObject(schema)) return undefined;
  const s = deref<JsonObject>(doc, schema);
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (s.example !== undefined) return s.example;
  if (s.const !== undefined) return s.const;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// dashboard

function catalogueFromSpec(doc: JsonObject): MockTool[] {
  const tools: MockTool[] = [];
  for (const { path, method, op } of operationsOf(doc)) {
    const m = TOOL_STUB_PATH.exec(path);
    if (!m || method !== 'post') continue;
    const ext = (op['x-mcp-tool'] ?? {}) as JsonObject;
    const inputRef = ((((op.requestBody as JsonObject).content as JsonObject)['application/json'] as JsonObject).schema as JsonObject).$ref;
    const ok = (((responseAt(doc, op, '200').content as JsonObject)['application/json'] as JsonObject).schema ?? {}) as JsonObject;
    const outputRef = (((ok.allOf as JsonObject[])[1]!.properties as JsonObject).structuredContent as JsonObject).$ref;
    tools.push({
      name: m[1]!,
      title: op.summary as string,
      description: op.description as string,
      annotations: ext.annotations ?? {},
      inputSchema: inline(doc, { $ref: inputRef! }),
      outputSchema: inline(doc, { $ref: outputRef! }),
    });
  }
  return tools;
}

/** Each stub answers only its 405, with an example naming the tool and an empty Allow (sent, not required). */
function adjustToolStubs(doc: JsonObject) {
  for (const { path, op } of operationsOf(doc)) {
    const m = TOOL_STUB_PATH.exec(path);
    if (!m) continue;
    const responses = op.responses as JsonObject;
    if (!responses['405']) throw new Error(`${path}: a tool stub must declare its 405`);
    const stub = clone(responseAt(doc, op, '405'));
    const headers = (stub.headers ?? {}) as JsonObject;
    for (const [name, h] of Object.entries(headers)) {
      // The stub serves no method, so its Allow is empty: Prism sends the empty example, but its own
      // response check reads an empty header as a missing one and would log a violation per call.
      // Not required here (only in the mock's spec): the header is still sent, as by the server.
      if (name.toLowerCase() === 'allow') headers[name] = { ...(deref(doc, h) as JsonObject), required: false, example: '' };
    }
    for (const media of Object.values((stub.content ?? {}) as JsonObject) as JsonObject[]) {
      delete media.examples;
      media.example = {
        error: 'Method Not Allowed',
        statusCode: 405,
        message: `${m[1]} is a discovery stub; call it with a JSON-RPC tools/call request to POST ${MCP_PATH}`,
      };
    }
    op.responses = { '405': stub };
    // The real stub answers 405 whatever is sent; Prism would first validate a declared body (422)
    // or refuse an undeclared one (415), so the mock's stub takes any body.
    op.requestBody = {
      description: `Ignored: the stub answers 405 whatever is sent. The tool's arguments are described by #/components/schemas/${m[1]}.input.`,
      required: false,
      content: { '*/*': { schema: {} } },
    };
  }
}

const text = (v: Json): Json => [{ type: 'text', text: JSON.stringify(v) }];

function addMcpExamples(doc: JsonObject, tools: readonly MockTool[]) {
  const post = ((doc.paths as JsonObject)[MCP_PATH] as JsonObject | undefined)?.post as JsonObject | undefined;
  if (!post) throw new Error(`the dashboard spec has no POST ${MCP_PATH}`);
  const ok = (post.responses as JsonObject)['200'] as JsonObject;
  const content = ok.content as JsonObject;
  const json = content['application/json'] as JsonObject;
  const examples = (json.examples ?? {}) as JsonObject;
  if (json.example !== undefined) {
    examples.default = { value: json.example };
    delete json.example;
  }

  const requests = ((((post.requestBody as JsonObject).content as JsonObject)['application/json'] as JsonObject).examples ?? {}) as JsonObject;
  const requestId = (name: string, fallback: number): Json => {
    const r = requests[name] ? ((deref(doc, requests[name]) as JsonObject).value as JsonObject) : undefined;
    return r?.id ?? fallback;
  };
  const initParams = (requests.initialize ? ((deref(doc, requests.initialize) as JsonObject).value as JsonObject).params : undefined) as
    | JsonObject
    | undefined;
  const version = (doc.info as { version: string }).version;

  examples.initialize = {
    summary: 'Result of initialize',
    value: {
      jsonrpc: '2.0',
      id: requestId('initialize', 0),
      result: {
        protocolVersion: (initParams?.protocolVersion as string | undefined) ?? DEFAULT_PROTOCOL_VERSION,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: MCP_SERVER_NAME, version },
      },
    },
  };
  examples.tools_list = {
    summary: `Result of tools/list: the ${tools.length} tools (as a caller with admin.system sees them)`,
    value: {
      jsonrpc: '2.0',
      id: requestId('tools_list', 2),
      result: {
        tools: tools.map((t) => {
          const entry: JsonObject = { name: t.name };
          if (t.title !== undefined) entry.title = t.title;
          if (t.description !== undefined) entry.description = t.description;
          entry.inputSchema = clone(t.inputSchema as Json);
          entry.outputSchema = clone(t.outputSchema as Json);
          // As the server lists them: the title also as an annotation (MCP ToolAnnotations.title).
          if (t.annotations !== undefined) entry.annotations = { ...(t.title !== undefined ? { title: t.title } : {}), ...(clone(t.annotations as Json) as JsonObject) };
          return entry;
        }),
      },
    },
  };
  for (const t of tools) {
    const outputs = (t.outputSchema as JsonObject).examples;
    if (!Array.isArray(outputs) || outputs.length === 0) throw new Error(`${t.name}: its output schema has no examples`);
    const out = clone(outputs[0]!);
    if (examples[t.name] !== undefined) throw new Error(`${MCP_PATH}: an example is already named ${t.name}`);
    examples[t.name] = {
      summary: `Result of tools/call of ${t.name}`,
      value: { jsonrpc: '2.0', id: 1, result: { content: text(out), structuredContent: out } },
    };
  }
  json.examples = examples;

  // The same names on the SSE variant, so that Prefer: example=<name> works whichever is chosen.
  const sse = content['text/event-stream'] as JsonObject | undefined;
  if (sse) {
    const streams: JsonObject = {};
    const own = firstExample(doc, sse);
    if (own !== undefined) streams.stream = { summary: 'A stream ending with a response', value: own };
    for (const [name, ex] of Object.entries(examples)) {
      if (streams[name] !== undefined) continue;
      const value = (deref(doc, ex) as JsonObject).value!;
      streams[name] = { summary: `${name}, as an SSE stream`, value: `event: message\ndata: ${JSON.stringify(value)}\n\n` };
    }
    delete sse.example;
    sse.examples = streams;
  }
}

// ---------------------------------------------------------------------------------------------
// object APIs

/** `/{org}/{repo}.git/info/lfs` moves from the server URL into every path. */
function moveBasePathIntoPaths(doc: JsonObject) {
  const servers = (doc.servers ?? []) as JsonObject[];
  const server = servers[0];
  if (!server) return;
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/]+)?(\/.*)?$/i.exec(server.url as string);
  const base = (m?.[2] ?? '').replace(/\/$/, '');
  if (!base) return;
  const variables = (server.variables ?? {}) as JsonObject;
  const params: JsonObject[] = [];
  for (const [, name] of base.matchAll(/{([^}]+)}/g)) {
    const v = (variables[name!] ?? {}) as JsonObject;
    const schema: JsonObject = { type: 'string', minLength: 1 };
    if (Array.isArray(v.enum)) schema.enum = clone(v.enum);
    const param: JsonObject = { name: name!, in: 'path', required: true };
    if (v.description !== undefined) param.description = v.description;
    param.schema = schema;
    if (v.default !== undefined) param.example = v.default;
    params.push(param);
  }
  const paths: JsonObject = {};
  for (const [path, rawItem] of Object.entries((doc.paths ?? {}) as JsonObject)) {
    const item = clone(deref(doc, rawItem) as JsonObject);
    const own = (item.parameters ?? []) as Json[];
    const rest: JsonObject = {};
    for (const [k, v] of Object.entries(item)) if (k !== 'parameters') rest[k] = v;
    paths[`${base}${path}`] = { parameters: [...clone(params), ...own], ...rest };
  }
  doc.paths = paths;
  doc.servers = [
    {
      url: m?.[1] ?? '/',
      description: `${server.description ? `${server.description as string} ` : ''}The base path ${base} is part of every path here, so that a mock answers at the URLs the server does.`,
    },
  ];
}

/**
 * Prism answers a request without Accept (or with a wildcard) with a response's first media type:
 * `type` moves first in every response that declares it.
 */
function preferMediaType(doc: JsonObject, type: string) {
  const responses: JsonObject[] = Object.values(((doc.components as JsonObject | undefined)?.responses ?? {}) as JsonObject) as JsonObject[];
  for (const { op } of operationsOf(doc)) {
    for (const raw of Object.values((op.responses ?? {}) as JsonObject)) if (isObject(raw) && raw.$ref === undefined) responses.push(raw);
  }
  for (const res of responses) {
    const content = res.content as JsonObject | undefined;
    if (!content || !(type in content)) continue;
    const { [type]: first, ...rest } = content;
    res.content = { [type]: first!, ...rest };
  }
}

/**
 * Downloads answer the example object's bytes: all of them (200), or from byte 2 on (206); tus
 * HEAD reports 2 bytes stored and PATCH the whole object.
 */
function addTransferExamples(doc: JsonObject) {
  const full = Buffer.from(EXAMPLE_CONTENT);
  for (const { method, op } of operationsOf(doc)) {
    for (const [status, raw] of Object.entries((op.responses ?? {}) as JsonObject)) {
      if (isObject(raw) && raw.$ref !== undefined) continue;
      const res = raw as JsonObject;
      const offset = ((res.headers ?? {}) as JsonObject)['Upload-Offset'] as JsonObject | undefined;
      if (offset && offset.$ref === undefined && offset.example === undefined && status.startsWith('2')) {
        if (method === 'head') offset.example = PARTIAL_FROM;
        if (method === 'patch') offset.example = full.length;
      }
      const media = ((res.content ?? {}) as JsonObject)['application/octet-stream'] as JsonObject | undefined;
      if (!media || media.example !== undefined || media.examples !== undefined) continue;
      if (status === '200') media.example = EXAMPLE_CONTENT;
      else if (status === '206') media.example = full.subarray(PARTIAL_FROM).toString();
      else continue;
      for (const [name, h] of Object.entries((res.headers ?? {}) as JsonObject)) {
        const header = h as JsonObject;
        if (header.$ref !== undefined || header.example !== undefined) continue;
        const lower = name.toLowerCase();
        if (lower === 'content-length') header.example = status === '200' ? full.length : full.length - PARTIAL_FROM;
        if (lower === 'content-range' && status === '206') header.example = `bytes ${PARTIAL_FROM}-${full.length - 1}/${full.length}`;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// all APIs

/** "The body is larger than the configured limit." → "The body is larger than the configured limit" */
function messageOf(description: Json | undefined): string | undefined {
  if (typeof description !== 'string' || !description.trim()) return undefined;
  return description.replace(/`/g, '').replace(/\s+/g, ' ').trim().replace(/\.$/, '');
}

/** An example for every JSON response that has none; a component response is filled at its first use. */
function fillResponseExamples(doc: JsonObject) {
  for (const { op } of operationsOf(doc)) {
    for (const status of Object.keys((op.responses ?? {}) as JsonObject)) {
      const res = responseAt(doc, op, status);
      const content = (res.content ?? {}) as JsonObject;
      for (const [type, m] of Object.entries(content)) {
        const media = m as JsonObject;
        if (!isJsonMedia(type) || media.example !== undefined || media.examples !== undefined) continue;
        // 1. A sibling media type of the same response with the same schema and an example.
        const sibling = Object.entries(content).find(
          ([t, o]) =>
            t !== type &&
            isJsonMedia(t) &&
            ((o as JsonObject).example !== undefined || (o as JsonObject).examples !== undefined) &&
            JSON.stringify((o as JsonObject).schema) === JSON.stringify(media.schema),
        )?.[1] as JsonObject | undefined;
        if (sibling) {
          if (sibling.examples !== undefined) media.examples = clone(sibling.examples);
          else media.example = clone(sibling.example!);
          continue;
        }
        // 2. The schema's own example; for an error, with the response's description as message.
        const example = schemaExample(doc, media.schema);
        if (example === undefined) continue;
        const value = clone(example);
        const code = Number(status);
        if (code >= 400 && isObject(value)) {
          const message = messageOf(res.description);
          if (typeof value.message === 'string' && message) value.message = message;
          if (typeof value.statusCode === 'number') {
            value.statusCode = code;
            if (typeof value.error === 'string' && STATUS_CODES[code]) value.error = STATUS_CODES[code]!;
          }
        }
        media.example = value;
      }
    }
  }
}

/** A value for a header Prism would otherwise invent; undefined when there is none. */
function knownHeaderValue(doc: JsonObject, name: string, op: JsonObject, res: JsonObject): Json | undefined {
  const origin = /^([a-z][a-z0-9+.-]*:\/\/[^/]+)/i.exec(((doc.servers ?? []) as { url: string }[])[0]?.url ?? '')?.[1] ?? 'http://127.0.0.1:8080';
  switch (name.toLowerCase()) {
    case 'x-request-id':
      return '01JDQ3V8K2M5N7P9R1S3T5V7X9';
    case 'www-authenticate':
      return `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource"`;
    case 'retry-after': {
      const media = Object.values((res.content ?? {}) as JsonObject)[0] as JsonObject | undefined;
      const example = media ? firstExample(doc, media) : undefined;
      const seconds = isObject(example) && typeof example.message === 'string' ? /retry in (\d+) ?s\b/.exec(example.message)?.[1] : undefined;
      return seconds ? Number(seconds) : 60;
    }
    case 'set-cookie':
      return op.operationId === 'auth.logout'
        ? 'session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0'
        : 'session=q3Vt9kR2mX7pL4sN8wZ1cF6hJ0bD5gY2aE9uT3iO7rM; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200';
    default:
      return undefined;
  }
}

/**
 * Every response header gets an example: its own, its schema's (examples, const), or a known
 * realistic value. An optional header with none of these is dropped, so Prism does not send a
 * placeholder the real server never would; a required one is left to Prism.
 */
function fillHeaderExamples(doc: JsonObject) {
  for (const { op } of operationsOf(doc)) {
    for (const status of Object.keys((op.responses ?? {}) as JsonObject)) {
      const res = responseAt(doc, op, status);
      const headers = res.headers as JsonObject | undefined;
      if (!headers) continue;
      for (const [name, raw] of Object.entries(headers)) {
        const header = deref(doc, raw) as JsonObject;
        if (header.example !== undefined || header.examples !== undefined) continue;
        const value = schemaExample(doc, header.schema) ?? knownHeaderValue(doc, name, op, res);
        if (value !== undefined) header.example = clone(value);
        else if (header.required !== true) delete headers[name];
      }
    }
  }
}

/**
 * Drops the components nothing refers to any more (the stubs' ToolStub response, the tools' input
 * and output schemas, whose content lives on inline in the tools_list example). Security schemes
 * are named, not referenced, and always stay.
 */
function pruneComponents(doc: JsonObject) {
  const components = doc.components as JsonObject | undefined;
  if (!components) return;
  const reached = new Set<string>();
  const visit = (node: Json) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node)) return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/')) {
        const [kind, name] = v.slice('#/components/'.length).split('/');
        const key = `${kind}/${name}`;
        if (reached.has(key)) continue;
        reached.add(key);
        const target = ((components[kind!] ?? {}) as JsonObject)[unescapePointer(name!)];
        if (target !== undefined) visit(target);
      } else visit(v);
    }
  };
  for (const [k, v] of Object.entries(doc)) if (k !== 'components') visit(v);
  for (const [kind, group] of Object.entries(components)) {
    if (kind === 'securitySchemes' || !isObject(group)) continue;
    for (const name of Object.keys(group)) if (!reached.has(`${kind}/${escapePointer(name)}`)) delete group[name];
    if (Object.keys(group).length === 0) delete components[kind];
  }
}

const unescapePointer = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
