/**
 * Requests derived from the specs, in the spirit of schemathesis: every example request
 * (examples phase), valid requests generated from the schemas with a seed (generated phase), and
 * requests that break the schema, the media type or the method (negative phase).
 */
import { randomBytes } from 'node:crypto';
import { generateSync } from 'json-schema-faker';
import { operations, type ApiName, type OperationSpec } from '../../generated/operations.js';
import { deref, inline, loadBundledSpec, type Json, type JsonObject, type ParameterObject } from '../spec/documents.js';
import type { ConformanceRequest } from './http.js';
import type { Phase } from './report.js';

/** Generated strings stay short (a lock path is stored and listed): at most this many characters. */
const MAX_STRING = 200;

export interface Credentials {
  token?: string;
  /** user:password */
  basic?: string;
}

export interface Target {
  base: string;
  /** org/repo, for the object APIs' base path. */
  repo: string;
  credentials: Credentials;
}

export interface Case {
  phase: Phase;
  api: ApiName;
  op: OperationSpec | null;
  operationId: string;
  name: string;
  request: ConformanceRequest;
  /** refusal: the request is invalid and must be answered with a 4xx. */
  expect: 'any' | 'refusal';
}

interface ParamDoc { name: string; in: string; required: boolean; schema: Json; example?: Json }

export interface OperationDoc {
  op: OperationSpec;
  api: ApiName;
  params: ParamDoc[];
  body: { mediaTypes: string[]; schema: Json | null; examples: Json[]; binary: boolean } | null;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/** Each operation of an API with its parameters and body as the bundled spec describes them. */
export function operationDocs(api: ApiName): OperationDoc[] {
  const doc = loadBundledSpec(api);
  const out: OperationDoc[] = [];
  for (const [, rawItem] of Object.entries(doc.paths as JsonObject)) {
    const item = deref(doc, rawItem) as JsonObject;
    for (const method of METHODS) {
      const o = item[method] as JsonObject | undefined;
      if (!o) continue;
      const op = operations.find((x) => x.operationId === o.operationId)!;
      const params = [...((item.parameters as Json[]) ?? []), ...((o.parameters as Json[]) ?? [])].map((p) => {
        const d = deref(doc, p) as ParameterObject;
        const schema = inline(doc, d.schema ?? {});
        const example = d.example ?? ((schema as JsonObject).examples as Json[] | undefined)?.[0];
        return { name: d.in === 'header' ? d.name.toLowerCase() : d.name, in: d.in, required: Boolean(d.required), schema, example };
      });
      let body: OperationDoc['body'] = null;
      if (o.requestBody) {
        const content = (deref(doc, o.requestBody) as JsonObject).content as JsonObject;
        const mediaTypes = Object.keys(content);
        const first = content[mediaTypes[0]!] as JsonObject;
        const schema = first.schema ? inline(doc, first.schema) : null;
        const examples: Json[] = [];
        for (const m of Object.values(content) as JsonObject[]) {
          if (m.example !== undefined) examples.push(m.example);
          for (const e of Object.values((m.examples ?? {}) as JsonObject)) examples.push((deref(doc, e) as JsonObject).value!);
        }
        for (const e of ((schema as JsonObject | null)?.examples as Json[] | undefined) ?? []) examples.push(e);
        const binary = !mediaTypes.some((t) => /json/.test(t));
        body = { mediaTypes, schema, examples: dedupe(examples), binary };
      }
      out.push({ op, api, params, body });
    }
  }
  return out;
}

const dedupe = (xs: Json[]) => [...new Map(xs.map((x) => [JSON.stringify(x), x])).values()];

function fake(schema: Json, seed: number): Json {
  return generateSync(schema as never, { seed, optionalsProbability: 0.5, maxDefaultItems: 3, maxLength: MAX_STRING }) as Json;
}

function paramValues(od: OperationDoc, seed: number | null, drop?: string): Record<string, Json> {
  const values: Record<string, Json> = {};
  for (const p of od.params) {
    if (p.name === drop) continue;
    if (!p.required && seed === null && p.example === undefined) continue;
    if (!p.required && seed !== null && seed % 2 === 0) continue; // optional ones every other time
    values[p.name] = seed === null && p.example !== undefined ? p.example : fake(p.schema, seed ?? 1);
  }
  return values;
}

function authHeaders(op: OperationSpec, c: Credentials): Record<string, string> {
  const schemes = new Set(op.security.flat());
  if (schemes.has('bearerAuth') && c.token) return { authorization: `Bearer ${c.token}` };
  if (schemes.has('basicAuth') && c.basic) return { authorization: `Basic ${Buffer.from(c.basic).toString('base64')}` };
  return {};
}

/** An object as a form body (the OAuth endpoints): each member a field, other values as JSON text. */
function formBody(value: Json): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value);
  return new URLSearchParams(Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
}

export function buildRequest(
  target: Target,
  od: OperationDoc,
  opts: { params: Record<string, Json>; body?: Json | string | Uint8Array; contentType?: string; method?: string; variant?: number },
): ConformanceRequest {
  const [org, repo] = target.repo.split('/');
  let path = od.op.path.replace('{org}', encodeURIComponent(org!)).replace('{repo}', encodeURIComponent(repo!));
  const query = new URLSearchParams();
  const headers: Record<string, string> = { ...authHeaders(od.op, target.credentials) };
  for (const p of od.params) {
    const v = opts.params[p.name];
    if (v === undefined) continue;
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(text));
    else if (p.in === 'query') query.set(p.name, text);
    else if (p.in === 'header') headers[p.name] = text;
  }
  // Accept the JSON type of the operation's success, alternating between the object APIs' two.
  const success = Object.entries(od.op.responses).filter(([s]) => s.startsWith('2')).flatMap(([, r]) => r.mediaTypes);
  const json = success.filter((t) => /json/.test(t));
  if (od.op.operationId === 'mcp.post') headers.accept = 'application/json, text/event-stream';
  else if (json.length) headers.accept = json[(opts.variant ?? 0) % json.length]!;
  let body: string | Uint8Array | undefined;
  if (opts.body !== undefined && od.body) {
    const type = opts.contentType ?? od.body.mediaTypes[(opts.variant ?? 0) % od.body.mediaTypes.length]!;
    headers['content-type'] = type === '*/*' ? 'application/octet-stream' : type;
    body = typeof opts.body === 'string' || opts.body instanceof Uint8Array ? opts.body : type === 'application/x-www-form-urlencoded' ? formBody(opts.body) : JSON.stringify(opts.body);
  }
  const qs = query.toString();
  return { method: opts.method ?? od.op.method, url: `${target.base}${path}${qs ? `?${qs}` : ''}`, headers, body };
}

const caseOf = (phase: Phase, od: OperationDoc, name: string, request: ConformanceRequest, expect: Case['expect'] = 'any'): Case => ({
  phase, api: od.api, op: od.op, operationId: od.op.operationId, name, request, expect,
});

export function exampleCases(target: Target, docs: OperationDoc[]): Case[] {
  const cases: Case[] = [];
  for (const od of docs) {
    if (!od.body || od.body.binary) {
      cases.push(caseOf('examples', od, 'example parameters', buildRequest(target, od, { params: paramValues(od, null), body: od.body?.binary ? randomBytes(64) : undefined })));
      continue;
    }
    od.body.examples.forEach((example, i) =>
      cases.push(caseOf('examples', od, `example body #${i + 1}`, buildRequest(target, od, { params: paramValues(od, null), body: example, variant: i }))),
    );
  }
  return cases;
}

export function generatedCases(target: Target, docs: OperationDoc[], seed: number, maxExamples: number): Case[] {
  const cases: Case[] = [];
  for (const od of docs) {
    for (let i = 0; i < maxExamples; i++) {
      const s = seed * 1000 + i;
      const body = od.body ? (od.body.binary ? randomBytes(16 + i) : od.body.schema ? fake(od.body.schema, s) : undefined) : undefined;
      cases.push(caseOf('generated', od, `generated #${i + 1} (seed ${s})`, buildRequest(target, od, { params: paramValues(od, s), body, variant: i })));
    }
  }
  return cases;
}

/** A value the property's schema refuses, or undefined when its schema does not constrain it. */
function invalidFor(p: JsonObject): Json | undefined {
  if (p.const !== undefined || p.enum) return '!! not one of the allowed values !!';
  const types = new Set(([] as Json[]).concat((p.type as Json) ?? []).map(String));
  if (!types.size) return undefined;
  if (types.has('number')) types.add('integer');
  const candidates: [string, Json][] = [['integer', 12345], ['string', 'not the right type'], ['boolean', true], ['object', { not: 'expected' }], ['array', ['not', 'expected']], ['null', null]];
  return candidates.find(([t]) => !types.has(t))?.[1];
}

export function negativeCases(target: Target, docs: OperationDoc[], seed: number): Case[] {
  const cases: Case[] = [];
  const byPath = new Map<string, string[]>();
  for (const od of docs) byPath.set(od.op.path, [...(byPath.get(od.op.path) ?? []), od.op.method]);
  for (const od of docs) {
    const params = paramValues(od, null);
    const refused = (name: string, req: ConformanceRequest) => cases.push(caseOf('negative', od, name, req, 'refusal'));
    // A method the path does not serve (tool stubs answer 405 to every method, which this checks too).
    const declared = byPath.get(od.op.path)!;
    const other = ['DELETE', 'PUT', 'PATCH', 'GET'].find((m) => !declared.includes(m) && !(m === 'GET' && declared.includes('HEAD')));
    if (other && od.op.method === declared[0]) refused(`wrong method ${other}`, buildRequest(target, od, { params, method: other }));
    for (const p of od.params.filter((x) => x.required && x.in !== 'path')) {
      refused(`missing required ${p.in} parameter ${p.name}`, buildRequest(target, od, { params: paramValues(od, null, p.name), body: od.body?.binary ? randomBytes(8) : od.body?.examples[0] }));
    }
    if (!od.body || od.body.binary) {
      if (od.body) refused('wrong media type', buildRequest(target, od, { params, body: 'plain text', contentType: 'text/plain' }));
      continue;
    }
    const base = (od.body.examples[0] ?? (od.body.schema ? fake(od.body.schema, seed) : {}));
    refused('malformed JSON', buildRequest(target, od, { params, body: '{"not": json', contentType: od.body.mediaTypes[0] }));
    refused('wrong media type', buildRequest(target, od, { params, body: JSON.stringify(base), contentType: 'text/plain' }));
    const schema = od.body.schema as JsonObject | null;
    if (!schema || schema.type !== 'object' || !base || typeof base !== 'object' || Array.isArray(base)) continue;
    refused('not an object', buildRequest(target, od, { params, body: ['an array'] }));
    for (const req of (schema.required as string[] | undefined) ?? []) {
      const { [req]: _gone, ...rest } = base;
      refused(`missing required property ${req}`, buildRequest(target, od, { params, body: rest }));
    }
    const props = (schema.properties ?? {}) as Record<string, JsonObject>;
    for (const name of Object.keys(props).sort().slice(0, 4)) {
      const p = props[name]!;
      const bad = invalidFor(p);
      if (bad !== undefined) refused(`wrong type of ${name}`, buildRequest(target, od, { params, body: { ...(base), [name]: bad } }));
      if (p.type === 'string' && (p.pattern || p.format === 'uri')) {
        refused(`invalid value of ${name}`, buildRequest(target, od, { params, body: { ...(base), [name]: '!! not valid !!' } }));
      }
    }
  }
  return cases;
}
