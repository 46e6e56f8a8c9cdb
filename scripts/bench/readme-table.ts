/**
 * The README's benchmark table, written by `make bench` and by nothing else. A full run records
 * its figures in docs/bench-results.json (each benchmark with the date, machine and commit of the
 * run that measured it; a run with --only replaces only its own benchmarks), and the table between
 * the README's markers is rendered from that file, so every figure in it is one a script printed.
 * test/unit/readme-bench-table.test.ts checks the README still matches the file.
 */
import type { Figure } from './lib.js';

export const START = '<!-- bench-table:start (written by make bench) -->';
export const END = '<!-- bench-table:end -->';

export interface BenchRun {
  date: string;
  machine: string;
  commit: string;
  figures: Figure[];
}

/** Benchmark name → the run that last measured it. */
export type Results = Record<string, BenchRun>;

/** The recorded results with one run's benchmarks replaced (those it ran and completed). */
export function mergeRun(results: Results, run: Omit<BenchRun, 'figures'>, figures: Figure[], completed: string[]): Results {
  const next: Results = { ...results };
  for (const bench of completed) next[bench] = { ...run, figures: figures.filter((f) => f.bench === bench) };
  return next;
}

const num = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));
const cell = (s: string) => s.replaceAll('|', '\\|');

/**
 * The table: the figures with a goal, each with its same-run baseline, ratio and the run it came
 * from; benchmarks in the order `make bench` first recorded them.
 */
export function renderTable(results: Results): string {
  const names = Object.keys(results);
  const runs = [...new Set(names.map((n) => `${results[n]!.date.slice(0, 10)}, commit ${results[n]!.commit}, ${results[n]!.machine}`))];
  const rows = names.flatMap((name) =>
    results[name]!.figures
      .filter((f) => f.goal)
      .map((f) =>
        [
          name,
          cell(f.measure),
          `${num(f.value)} ${f.unit}`.trim(),
          f.baseline ? cell(`${f.baseline.name}: ${num(f.baseline.value)} ${f.unit}`.trim()) : '',
          f.ratio !== undefined ? num(f.ratio) : '',
          cell(f.goal ?? ''),
          f.met === undefined ? '' : f.met ? 'met' : '**not met**',
          String(runs.indexOf(`${results[name]!.date.slice(0, 10)}, commit ${results[name]!.commit}, ${results[name]!.machine}`) + 1),
        ].join(' | '),
      ),
  );
  return [
    START,
    '| bench | measure | pactum | baseline (same run) | ratio | goal | | run |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
    '',
    ...runs.map((r, i) => `${i + 1}. \`make bench\`, ${r}`),
    END,
  ].join('\n');
}

/** The README with its table replaced; unchanged when the markers are missing. */
export function replaceTable(readme: string, table: string): string {
  const from = readme.indexOf(START);
  const to = readme.indexOf(END);
  if (from < 0 || to < from) return readme;
  return readme.slice(0, from) + table + readme.slice(to + END.length);
}
