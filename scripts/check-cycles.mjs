#!/usr/bin/env node
/**
 * Fails when the files of src/ import each other in a circle (type-only imports included: a
 * circle of types is a circle of knowledge). Prints each circle found.
 *
 *   node scripts/check-cycles.mjs [dir]      (default src)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const top = resolve(root, process.argv[2] ?? 'src');
const files = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

const graph = new Map();
const all = new Set(files(top));
for (const file of all) {
  const edges = new Set();
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const target = resolve(dirname(file), (m[1] ?? m[2]).replace(/\.js$/, '.ts'));
    if (all.has(target)) edges.add(target);
  }
  graph.set(file, edges);
}

// Tarjan's strongly connected components: each component of more than one file is a circle.
let index = 0;
const stack = [];
const info = new Map();
const circles = [];
function visit(v) {
  info.set(v, { index, low: index, onStack: true });
  index++;
  stack.push(v);
  for (const w of graph.get(v)) {
    if (!info.has(w)) {
      visit(w);
      info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
    } else if (info.get(w).onStack) info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
  }
  if (info.get(v).low === info.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      info.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v).has(v)) circles.push(component);
  }
}
for (const v of graph.keys()) if (!info.has(v)) visit(v);

if (circles.length) {
  for (const c of circles) console.log(`import circle of ${c.length} files:\n  ${c.map((f) => relative(root, f)).sort().join('\n  ')}`);
  process.exit(1);
}
console.log(`no import circles among the ${graph.size} files of ${relative(root, top)}/`);
