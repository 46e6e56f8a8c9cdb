/**
 * The bundled specs (generated/specs/*.json) and the JSON-pointer helpers that walk them. Used by
 * the generator, the conformance runner and the tests, so all three read the contract the same way.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

/**
 * What the generator, the conformance runner and the tests read of an OpenAPI parameter object
 * (once dereferenced). The specs pass Redocly's lint first: every parameter has its name and location.
 */
export type ParameterObject = JsonObject & {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Json;
  example?: Json;
};

export const API_NAMES = ['dashboard', 'legacy', 'batch'] as const;
export type ApiDocName = (typeof API_NAMES)[number];

const here = dirname(fileURLToPath(import.meta.url));
// src/spec → repository root, from sources (tsx), from dist/src/spec and from the bundle in dist/pactum.
const rootCandidates = [join(here, '..', '..'), join(here, '..', '..', '..')];

export function loadBundledSpec(api: ApiDocName): JsonObject {
  for (const root of rootCandidates) {
    try {
      return JSON.parse(readFileSync(join(root, 'generated', 'specs', `${api}.json`), 'utf8')) as JsonObject;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  throw new Error(`generated/specs/${api}.json not found: run make generate`);
}

export function pointer(doc: Json, ref: string): Json {
  if (!ref.startsWith('#')) throw new Error(`only local refs are expected after bundling: ${ref}`);
  let node: Json = doc;
  for (const raw of ref.slice(2).split('/').filter((x, i) => x !== '' || i > 0)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) throw new Error(`unresolvable ref ${ref}`);
    node = (node as JsonObject)[key]!;
  }
  return node;
}

export const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Follows $ref chains of OpenAPI objects (parameters, responses, path items...). */
export function deref<T extends Json>(doc: Json, node: T): T {
  let n: Json = node;
  while (n && typeof n === 'object' && !Array.isArray(n) && typeof n.$ref === 'string') n = pointer(doc, n.$ref);
  return n as T;
}

/** Rewrites #/components/schemas/x refs to #/$defs/x, so component schemas can live under one ajv root. */
export function toDefs(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(toDefs);
  if (schema && typeof schema === 'object') {
    const o: JsonObject = {};
    for (const [k, v] of Object.entries(schema)) {
      o[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', '#/$defs/') : toDefs(v);
    }
    return o;
  }
  return schema;
}

/**
 * Inlines every local ref, for self-contained schemas (MCP tool schemas, generated test data). A
 * schema that refers to itself (json-without-nul: any JSON value, however deep) cannot be copied
 * into itself: it goes into the result's own `$defs` once, and each place it recurs refers there.
 */
export function inline(doc: Json, schema: Json): Json {
  const defs: JsonObject = {};
  const out = inlineRefs(doc, schema, [], defs);
  if (Object.keys(defs).length === 0 || !out || typeof out !== 'object' || Array.isArray(out)) return out;
  return { ...out, $defs: { ...((out.$defs as JsonObject | undefined) ?? {}), ...defs } };
}

function inlineRefs(doc: Json, schema: Json, seen: string[], defs: JsonObject): Json {
  if (Array.isArray(schema)) return schema.map((s) => inlineRefs(doc, s, seen, defs));
  if (!schema || typeof schema !== 'object') return schema;
  const { $ref, ...rest } = schema;
  const own: JsonObject = {};
  for (const [k, v] of Object.entries(rest)) own[k] = inlineRefs(doc, v, seen, defs);
  if (typeof $ref !== 'string') return own;
  if (seen.includes($ref)) {
    const name = $ref.slice($ref.lastIndexOf('/') + 1);
    if (!Object.hasOwn(defs, name)) {
      defs[name] = {}; // taken before it is filled: its own recurrences refer to it
      defs[name] = inlineRefs(doc, pointer(doc, $ref), [$ref], defs);
    }
    return { $ref: `#/$defs/${name}`, ...own };
  }
  const target = inlineRefs(doc, pointer(doc, $ref), [...seen, $ref], defs) as JsonObject;
  return { ...target, ...own };
}
