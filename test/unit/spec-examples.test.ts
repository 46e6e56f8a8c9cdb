/**
 * Every example in the specs is valid against the schema it illustrates: schema `examples` (at
 * any depth), media-type `example`/`examples` of requests and responses, and parameter examples.
 * The mock server serves these and the conformance runner sends them, so a wrong one would
 * mislead both.
 */
import { describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { API_NAMES, deref, escapePointer, loadBundledSpec, toDefs, type Json, type JsonObject, type ParameterObject } from '../../src/spec/documents.js';
import { tools } from '../../generated/tools.js';

function compilerFor(doc: JsonObject) {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const components = ((doc.components as JsonObject)?.schemas ?? {}) as JsonObject;
  ajv.addSchema({ $defs: toDefs(components) as JsonObject }, 'spec');
  return (schema: Json) => ajv.compile({ $defs: toDefs(components) as JsonObject, ...(toDefs(schema) as JsonObject) });
}

/** Yields [where, schemaPointer, example] for every `examples` entry nested in component schemas. */
function* schemaExamples(node: Json, at: string): Generator<[string, string, Json]> {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const [i, n] of node.entries()) yield* schemaExamples(n, `${at}/${i}`);
    return;
  }
  if (Array.isArray(node.examples)) for (const [i, ex] of node.examples.entries()) yield [`${at}/examples/${i}`, at, ex];
  for (const [k, v] of Object.entries(node)) if (k !== 'examples') yield* schemaExamples(v, `${at}/${escapePointer(k)}`);
}

describe.each(API_NAMES)('examples of the %s spec', (api) => {
  const doc = loadBundledSpec(api);
  const components = ((doc.components as JsonObject).schemas ?? {}) as JsonObject;
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $defs: toDefs(components) as JsonObject }, 'spec');
  const compile = compilerFor(doc);

  it('has schema examples that validate, at every depth', () => {
    let count = 0;
    for (const [name, schema] of Object.entries(components)) {
      for (const [where, at, example] of schemaExamples(schema, `#/$defs/${escapePointer(name)}`)) {
        const validate = ajv.getSchema(`spec${at}`)!;
        expect(validate(example), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
        count++;
      }
    }
    expect(count).toBeGreaterThan(0);
  });

  it('has operation examples (bodies and parameters) that validate', () => {
    let count = 0;
    for (const [path, rawItem] of Object.entries(doc.paths as JsonObject)) {
      const item = deref(doc, rawItem) as JsonObject;
      for (const [method, rawOp] of Object.entries(item)) {
        if (method === 'parameters' || !rawOp || typeof rawOp !== 'object') continue;
        const op = rawOp as JsonObject;
        const where = `${method.toUpperCase()} ${path}`;
        const bodies: [string, JsonObject][] = [];
        if (op.requestBody) bodies.push(['request', (deref(doc, op.requestBody) as JsonObject).content as JsonObject]);
        for (const [status, r] of Object.entries((op.responses ?? {}) as JsonObject)) {
          const content = (deref(doc, r) as JsonObject).content as JsonObject | undefined;
          if (content) bodies.push([status, content]);
        }
        for (const [label, content] of bodies) {
          for (const [type, media] of Object.entries(content ?? {})) {
            const m = media as JsonObject;
            const examples = [
              ...(m.example !== undefined ? [m.example] : []),
              ...Object.values((m.examples ?? {}) as JsonObject).map((e) => (deref(doc, e) as JsonObject).value),
            ];
            if (!examples.length || !/json/.test(type)) continue;
            const validate = compile(m.schema!);
            for (const ex of examples) {
              expect(validate(ex), `${where} ${label} ${type}: ${JSON.stringify(validate.errors)}`).toBe(true);
              count++;
            }
          }
        }
        for (const p of [...((item.parameters as Json[]) ?? []), ...((op.parameters as Json[]) ?? [])]) {
          const param = deref(doc, p) as ParameterObject;
          if (param.example === undefined) continue;
          expect(compile(param.schema!)(param.example), `${where} parameter ${param.name}`).toBe(true);
          count++;
        }
      }
    }
    expect(count).toBeGreaterThan(0);
  });
});

describe('tool examples', () => {
  it('gives every tool an input example and an output example that validate', () => {
    for (const t of Object.values(tools)) {
      const inputs = (t.inputSchema.examples ?? []) as unknown[];
      const outputs = (t.outputSchema.examples ?? []) as unknown[];
      expect(inputs.length, `${t.name} input examples`).toBeGreaterThan(0);
      expect(outputs.length, `${t.name} output examples`).toBeGreaterThan(0);
      for (const ex of inputs) expect(t.validateInput(ex), `${t.name} input ${JSON.stringify(t.validateInput.errors)}`).toBe(true);
      for (const ex of outputs) expect(t.validateOutput(ex), `${t.name} output ${JSON.stringify(t.validateOutput.errors)}`).toBe(true);
    }
  });

  it('makes the JSON-RPC tools/call example a faithful result of its tool', () => {
    const doc = loadBundledSpec('dashboard');
    const post = ((doc.paths as JsonObject)['/api/v1/mcp'] as JsonObject).post as JsonObject;
    const request = (((post.requestBody as JsonObject).content as JsonObject)['application/json'] as JsonObject).examples as JsonObject;
    const response = ((((post.responses as JsonObject)['200'] as JsonObject).content as JsonObject)['application/json'] as JsonObject).examples as JsonObject;
    const call = (request.tools_call as JsonObject).value as JsonObject;
    const params = call.params as JsonObject;
    const tool = tools[params.name as keyof typeof tools];
    expect(tool.validateInput(params.arguments)).toBe(true);
    const result = ((response.tools_call as JsonObject).value as JsonObject).result as JsonObject;
    expect(tool.validateOutput(result.structuredContent)).toBe(true);
    expect(JSON.parse(((result.content as JsonObject[])[0]!.text) as string)).toEqual(result.structuredContent);
  });
});
