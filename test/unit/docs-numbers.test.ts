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
