/**
 * Numbers in the docs that describe the code (how many tools, tool stubs, operations) are checked
 * against the specs' generated catalogue: a tool added or removed fails this test until the pages
 * say so.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { operations } from '../../generated/operations.js';
import { tools } from '../../generated/tools.js';

const page = (name: string) => readFileSync(join(import.meta.dirname, '..', '..', 'docs', name), 'utf8');
const counts = {
  tools: Object.keys(tools).length,
  'tool stubs': operations.filter((o) => o.tool !== null).length,
  'dashboard operations': operations.filter((o) => o.apis.includes('dashboard')).length,
};

it.each(['mock.md', 'mcp.md', 'tools.md'])('the numbers in docs/%s are the catalogue\'s', (name) => {
  const text = page(name);
  const found: string[] = [];
  for (const [what, n] of Object.entries(counts)) {
    for (const m of text.matchAll(new RegExp(`\\b(\\d+) ${what}\\b`, 'g'))) {
      found.push(what);
      expect(Number(m[1]), `docs/${name}: "${m[0]}"`).toBe(n);
    }
  }
  expect(found.length, `docs/${name} states some of these numbers`).toBeGreaterThan(0);
});

it('the operations and schemas docs/other-teams.md says make clients joins are the joined spec\'s', async () => {
  const { mergeSpecs } = await import('../../scripts/clients/spec.js');
  const { loadBundledSpec } = await import('../../src/spec/documents.js');
  const doc = mergeSpecs(loadBundledSpec('dashboard'), loadBundledSpec('legacy'), loadBundledSpec('batch')) as { paths: Record<string, Record<string, unknown>>; components: { schemas: object } };
  const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
  const ops = Object.values(doc.paths).reduce((n, item) => n + methods.filter((m) => item[m] !== undefined).length, 0);
  const said = /pactum\.openapi\.json: (\d+) operations, (\d+) schemas/.exec(page('other-teams.md'));
  expect(said, 'docs/other-teams.md quotes make clients').not.toBeNull();
  expect({ operations: Number(said![1]), schemas: Number(said![2]) }).toEqual({ operations: ops, schemas: Object.keys(doc.components.schemas).length });
});
