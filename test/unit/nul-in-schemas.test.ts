/**
 * The specs state the rule the server holds every JSON body to: no string and no property name
 * holds a NUL character, at any depth, extra properties included (PostgreSQL cannot store one).
 * Generated clients and the conformance runner read it from the schemas, so the spec's schema of
 * every JSON request body, compiled as a client would, refuses such a body that the rest of it
 * admits. (The server's own validators leave the rule to the router's body scan, which refuses the
 * same bodies first: reliability/fuzz.test.ts sends them.)
 */
import { describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { operations } from '../../generated/operations.js';
import { loadBundledSpec, toDefs, type JsonObject } from '../../src/spec/documents.js';

/** The spec's schema of the operation's request body, compiled from the bundled spec. */
function specValidator(op: (typeof bodies)[number], content: JsonObject) {
  const doc = loadBundledSpec(op.apis[0]!);
  const ajv = new Ajv2020.default({ strict: false });
  addFormats.default(ajv);
  const components = ((doc.components as JsonObject).schemas ?? {}) as JsonObject;
  return ajv.compile({ $defs: toDefs(components) as JsonObject, ...(toDefs(content.schema as JsonObject) as JsonObject) });
}



/** Operations with a JSON body of their own (the MCP endpoint's arguments are checked per tool call). */
const bodies = operations.filter((op) => op.requestBody?.validate && op.operationId !== 'mcp.post' && !op.tool);

/** The operation's request body as the spec declares it: its first example and its validator. */
function bodyOf(op: (typeof bodies)[number]) {
  const doc = loadBundledSpec(op.apis[0]!);
  const operation = Object.values(doc.paths as Record<string, Record<string, JsonObject>>)
    .flatMap((item) => Object.values(item))
    .find((o) => o.operationId === op.operationId)!;
  const content = ((operation.requestBody as JsonObject).content as JsonObject)[op.requestBody!.mediaTypes[0]!] as JsonObject;
  const validate = specValidator(op, content);
  const examples = content.examples as Record<string, { value: Record<string, unknown> }> | undefined;
  if (examples) return { validate, example: structuredClone(Object.values(examples)[0]!.value) };
  if (content.example) return { validate, example: structuredClone(content.example as Record<string, unknown>) };
  const ref = ((content.schema as JsonObject).$ref as string).split('/').pop()!;
  const schema = ((doc.components as JsonObject).schemas as JsonObject)[ref] as JsonObject;
  return { validate, example: structuredClone((schema.examples as Record<string, unknown>[])[0]!) };
}

describe('the NUL rule in the schemas', () => {
  it('covers the object APIs and sign-in', () => {
    expect(bodies.map((op) => op.operationId)).toEqual(expect.arrayContaining(['auth.login', 'batch.batch', 'legacy.createObject', 'locks.create']));
  });

  it.each(bodies.map((op) => [op.operationId, op] as const))('%s refuses a NUL anywhere and admits its example', (_id, op) => {
    const { validate, example } = bodyOf(op);
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    const variants: Record<string, unknown>[] = [
      { ...example, extra: 'a\u0000b' },
      { ...example, extra: { deeper: ['fine', { deepest: '\u0000' }] } },
      { ...example, ['na\u0000me']: 1 },
    ];
    // Where the schema admits no extra property (sign-in), NUL in a declared string.
    const firstString = Object.entries(example).find(([, v]) => typeof v === 'string');
    if (firstString) variants.push({ ...example, [firstString[0]]: `${firstString[1] as string}\u0000` });
    for (const body of variants) expect(validate(body), JSON.stringify(body)).toBe(false);
  });
});
