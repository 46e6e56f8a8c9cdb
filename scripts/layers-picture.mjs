#!/usr/bin/env node
/**
 * The picture of the layers in docs/layout.md, drawn from what dependency-cruiser finds in src/
 * (its imports collapsed to one node per layer) and the tiers of .dependency-cruiser.cjs: a
 * mermaid flowchart, top tier first. An arrow is drawn where one layer imports another and no
 * longer path of drawn arrows already leads there, so the picture stays readable.
 *
 *   node scripts/layers-picture.mjs          rewrite the picture in docs/layout.md (make layers)
 *   node scripts/layers-picture.mjs --check  fail when it differs from what src/ gives (make lint)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const page = join(root, 'docs', 'layout.md');
const BEGIN = '<!-- layers picture: make layers writes it from src/ and .dependency-cruiser.cjs -->';
const END = '<!-- end of the layers picture -->';

const { tiers } = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs'));
const layerOf = (source) => tiers.flat().find((l) => new RegExp(l.path).test(source));

function importsBetweenLayers() {
  const out = execFileSync(
    join(root, 'node_modules', '.bin', 'depcruise'),
    ['src', '--config', '.dependency-cruiser.cjs', '--include-only', '^src/', '--collapse', '^src/(clients/|[^/]+/|[^/]+$)', '--output-type', 'json'],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  const edges = new Map();
  for (const m of JSON.parse(out).modules) {
    const from = layerOf(m.source);
    if (!from) continue; // src/clients/ stands apart and imports nothing of src/
    for (const d of m.dependencies) {
      const to = layerOf(d.resolved);
      if (to && to !== from) edges.set(from.name, new Set([...(edges.get(from.name) ?? []), to.name]));
    }
  }
  return edges;
}

/** The arrows left once every arrow that a longer path already implies is dropped. */
function reduced(edges) {
  const reach = (from, skip) => {
    const seen = new Set();
    const walk = (n) => {
      for (const next of edges.get(n) ?? []) {
        if ((n === from && next === skip) || seen.has(next)) continue;
        seen.add(next);
        walk(next);
      }
    };
    walk(from);
    return seen;
  };
  return [...edges].flatMap(([from, tos]) => [...tos].filter((to) => !reach(from, to).has(to)).sort().map((to) => [from, to]));
}

function picture() {
  const arrows = reduced(importsBetweenLayers());
  const id = (name) => name.replace(/[^a-z]/g, '_');
  const lines = ['```mermaid', 'flowchart TB'];
  tiers.forEach((tier, i) => {
    lines.push(`  subgraph tier${i}[" "]`, '    direction LR');
    for (const l of tier) lines.push(`    ${id(l.name)}["${l.name === 'server' ? 'server.ts' : `${l.name}/`}"]`);
    lines.push('  end');
  });
  for (const [from, to] of arrows) lines.push(`  ${id(from)} --> ${id(to)}`);
  lines.push('```');
  return lines.join('\n');
}

const text = readFileSync(page, 'utf8');
const start = text.indexOf(BEGIN);
const end = text.indexOf(END);
if (start < 0 || end < start) throw new Error(`docs/layout.md lacks the picture's markers (${BEGIN} … ${END})`);
const updated = `${text.slice(0, start + BEGIN.length)}\n${picture()}\n${text.slice(end)}`;
if (process.argv.includes('--check')) {
  if (updated !== text) {
    console.error('docs/layout.md: the layers picture differs from what src/ gives: run make layers');
    process.exit(1);
  }
  console.log('docs/layout.md: the layers picture is up to date');
} else {
  writeFileSync(page, updated);
  console.log('docs/layout.md: layers picture written');
}
