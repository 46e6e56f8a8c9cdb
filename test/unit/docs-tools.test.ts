/** docs/tools.md is what the tool catalogue (from the spec) says: run make generate after a spec change. */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { renderToolsPage } from '../../scripts/docs-tools.js';
import { toolNames } from '../../generated/tools.js';

it('docs/tools.md is written from the catalogue, one section per tool', () => {
  const page = readFileSync(new URL('../../docs/tools.md', import.meta.url), 'utf8');
  expect(page, 'docs/tools.md differs from the catalogue: run make generate').toBe(renderToolsPage());
  for (const name of toolNames) expect(page).toContain(`\n## ${name}\n`);
});
