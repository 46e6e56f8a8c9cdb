/**
 * `make bench`: every benchmark, one after another (each runs its candidate and baseline side by
 * side), their figures collected into bench-results.json and bench-results.md with the date,
 * the machine and the commit. `make bench QUICK=1` is the smoke version CI runs: small sizes and
 * short runs, no goal enforced, only that every benchmark completes and prints its ratios.
 *
 *   npx tsx scripts/bench/run-all.ts [--quick] [--only objects,batch]
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Figure } from './lib.js';
import { mergeRun, renderTable, replaceTable, type Results } from './readme-table.js';

const { values } = parseArgs({ options: { quick: { type: 'boolean' }, only: { type: 'string' } } });
const quick = Boolean(values.quick);
const root = new URL('../..', import.meta.url).pathname;
const has = (cmd: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const pgUp = () => {
  try {
    execFileSync('pg_isready', ['-q', '-h', '127.0.0.1', '-p', '5432'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Each benchmark and its arguments, full and quick. */
const benches: { name: string; args: string[]; quickArgs: string[]; when?: () => string | null }[] = [
  { name: 'validation', args: ['--rounds', '5', '--duration', '5'], quickArgs: ['--rounds', '1', '--duration', '1'] },
  { name: 'mcp', args: ['--rounds', '3', '--duration', '10'], quickArgs: ['--rounds', '1', '--duration', '2'] },
  { name: 'observability', args: ['--rounds', '8', '--duration', '5'], quickArgs: ['--rounds', '1', '--duration', '2', '--mib', '16', '--uploads', '1'] },
  { name: 'objects', args: ['--rounds', '3'], quickArgs: ['--rounds', '1', '--size-mib', '64', '--skip-big'] },
  { name: 'batch', args: pgUp() ? [] : ['--backends', 'sqlite'], quickArgs: ['--stored', '2000', '--requests', '10', '--backends', pgUp() ? 'sqlite,postgres' : 'sqlite'] },
  { name: 'concurrency', args: [], quickArgs: ['--clients', '4', '--duration', '3', '--single', '2'] },
  { name: 'scans', args: [], quickArgs: ['--pages', '6'] },
  { name: 'fairness', args: [], quickArgs: ['--quick'] },
  { name: 'report-view', args: [], quickArgs: ['--issues', '200', '--rounds', '1'], when: () => (has('chromium') ? null : 'Chromium is not installed (apt-get install chromium)') },
  { name: 's3', args: [], quickArgs: ['--rounds', '1', '--mib', '16'], when: () => (has('radosgw') ? null : 'Ceph is not installed (apt-get install ceph-mon ceph-osd radosgw ceph-common)') },
];

const resultsFile = join(root, '.tmp', `bench-${process.pid}.jsonl`);
rmSync(resultsFile, { force: true });
const selected = values.only ? benches.filter((b) => values.only!.split(',').includes(b.name)) : benches;
const ran: { name: string; seconds: number; status: string }[] = [];
let failed = 0;
for (const b of selected) {
  const skip = b.when?.();
  if (skip) {
    console.log(`\n== ${b.name}: not run: ${skip}`);
    ran.push({ name: b.name, seconds: 0, status: `not run: ${skip}` });
    continue;
  }
  const args = quick ? b.quickArgs : b.args;
  console.log(`\n== ${b.name}: npx tsx scripts/bench/${b.name}.ts ${args.join(' ')}`);
  const started = performance.now();
  const code = await new Promise<number>((resolve) => {
    const child = spawn('npx', ['tsx', join(root, 'scripts/bench', `${b.name}.ts`), ...args], { stdio: 'inherit', env: { ...process.env, BENCH_RESULTS: resultsFile } });
    child.on('exit', (c) => resolve(c ?? 1));
  });
  const seconds = (performance.now() - started) / 1000;
  ran.push({ name: b.name, seconds, status: code === 0 ? 'completed' : `failed (exit ${code})` });
  if (code !== 0) failed++;
}

const figures: Figure[] = existsSync(resultsFile)
  ? readFileSync(resultsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Figure)
  : [];
rmSync(resultsFile, { force: true });
const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const date = new Date().toISOString();
writeFileSync(join(root, 'bench-results.json'), JSON.stringify({ date, machine, commit, quick, benches: ran, figures }, null, 2) + '\n');

const num = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));
const rows = figures.map((f) =>
  [
    f.bench,
    f.measure,
    `${num(f.value)} ${f.unit}`.trim(),
    f.baseline ? `${f.baseline.name}: ${num(f.baseline.value)} ${f.unit}`.trim() : '',
    f.ratio !== undefined ? num(f.ratio) : '',
    f.goal ?? '',
    f.met === undefined ? '' : f.met ? 'met' : '**not met**',
  ].join(' | '),
);
const md = `# Benchmark results

${date}, commit ${commit}, ${machine}${quick ? ' — QUICK run (small sizes, short runs: the figures are not meaningful)' : ''}

Command: \`make bench${quick ? ' QUICK=1' : ''}\`

| bench | measure | pactum | baseline (same run) | ratio | goal | |
|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r} |`).join('\n')}

${ran.map((r) => `- ${r.name}: ${r.status}${r.seconds ? ` in ${r.seconds.toFixed(0)} s` : ''}`).join('\n')}
`;
writeFileSync(join(root, 'bench-results.md'), md);
console.log(`\n${md}\nwritten: bench-results.json, bench-results.md`);
// A full run's figures become the README's table (a quick run's mean nothing).
if (!quick) {
  const recorded = join(root, 'docs', 'bench-results.json');
  const before = existsSync(recorded) ? (JSON.parse(readFileSync(recorded, 'utf8')) as Results) : {};
  const completed = ran.filter((r) => r.status === 'completed').map((r) => r.name);
  const results = mergeRun(before, { date, machine, commit }, figures, completed);
  writeFileSync(recorded, JSON.stringify(results, null, 2) + '\n');
  const readme = join(root, 'README.md');
  writeFileSync(readme, replaceTable(readFileSync(readme, 'utf8'), renderTable(results)));
  console.log('written: docs/bench-results.json and the README\'s benchmark table');
}
process.exit(failed ? 1 : 0);
