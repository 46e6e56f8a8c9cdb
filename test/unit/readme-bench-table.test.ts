/**
 * The README's benchmark table is what `make bench` recorded: rendered from
 * docs/bench-results.json, never typed by hand (scripts/bench/readme-table.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { END, mergeRun, renderTable, START, type Results } from '../../scripts/bench/readme-table.js';

const root = join(import.meta.dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

it('shows exactly the figures make bench recorded', () => {
  const block = readme.slice(readme.indexOf(START), readme.indexOf(END) + END.length);
  expect(block.startsWith(START)).toBe(true);
  const recorded = join(root, 'docs', 'bench-results.json');
  const results = existsSync(recorded) ? (JSON.parse(readFileSync(recorded, 'utf8')) as Results) : {};
  expect(block).toBe(renderTable(results));
});

it('replaces only the benchmarks a run completed, each row naming its run', () => {
  const fig = (bench: string, value: number) => ({ bench, measure: 'm', value, unit: 'x', goal: '>= 1', met: value >= 1 });
  const first = mergeRun({}, { date: '2026-01-01T00:00:00Z', machine: 'A', commit: 'aaa' }, [fig('mcp', 2), fig('batch', 0.5)], ['mcp', 'batch']);
  const second = mergeRun(first, { date: '2026-02-01T00:00:00Z', machine: 'B', commit: 'bbb' }, [fig('batch', 1.5), fig('objects', 3)], ['batch']);
  expect(second.mcp!.commit).toBe('aaa');
  expect(second.batch!.figures.map((f) => f.value)).toEqual([1.5]);
  expect(second.objects).toBeUndefined(); // it did not complete
  const table = renderTable(second);
  expect(table).toContain('| mcp | m | 2.00 x |  |  | >= 1 | met | 1 |');
  expect(table).toContain('| batch | m | 1.50 x |  |  | >= 1 | met | 2 |');
  expect(table).toContain('2. `make bench`, 2026-02-01, commit bbb, B');
});
