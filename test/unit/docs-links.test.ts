/**
 * Every relative link in the README and in docs/ leads somewhere: the file exists, and a #fragment
 * names a heading of that page (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { expect, it } from 'vitest';

const root = join(dirname(new URL(import.meta.url).pathname), '..', '..');
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} +(.+)$/gm)) {
    const slug = m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

it('has no broken relative links in the README and docs/', () => {
  const broken: string[] = [];
  for (const page of pages) {
    const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const href = m[1]!;
      if (/^[a-z]+:/i.test(href)) continue;
      const [path, fragment] = href.split('#') as [string, string | undefined];
      const target = path ? join(root, dirname(page), path) : join(root, page);
      if (!existsSync(target)) { broken.push(`${page}: ${href} (no ${relative(root, target)})`); continue; }
      if (fragment && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(fragment)) broken.push(`${page}: ${href} (no heading #${fragment})`);
    }
  }
  expect(broken).toEqual([]);
});
