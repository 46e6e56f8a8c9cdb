/**
 * `pactum conformance --target <url>`: the conformance runner for any server that implements
 * pactum's specs. Exit status 1 when anything failed, 2 for a usage mistake.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ApiName } from '../../generated/operations.js';
import { TargetProblem, runConformance } from '../conformance/index.js';
import { failureReport, junitXml, progress, summaryTable, type Phase, type SkippedPhase } from '../conformance/report.js';
import { UsageError } from './args.js';

export async function conformance(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      target: { type: 'string' },
      api: { type: 'string', default: 'all' },
      token: { type: 'string' },
      basic: { type: 'string' },
      repo: { type: 'string' },
      'allow-writes': { type: 'string' },
      seed: { type: 'string', default: '1' },
      'max-examples': { type: 'string', default: '5' },
      junit: { type: 'string' },
      'read-only': { type: 'boolean', default: false },
      concurrency: { type: 'string', default: '4' },
      phases: { type: 'string', default: 'examples,generated,negative,mcp,flow' },
    },
  });
  if (!values.target) throw new UsageError('usage: pactum conformance --target <base-url> [--api dashboard|legacy|batch|all] [--token T] [--basic user:pass] [--repo org/repo] [--allow-writes org/repo] [--seed N] [--max-examples N] [--junit out.xml] [--read-only] [--phases examples,generated,negative,mcp,flow]');
  try {
    new URL(values.target);
  } catch {
    throw new UsageError(`--target ${values.target} is not a URL`);
  }
  const apis: ApiName[] = values.api === 'all' ? ['dashboard', 'legacy', 'batch'] : (values.api.split(',') as ApiName[]);
  for (const a of apis) if (!['dashboard', 'legacy', 'batch'].includes(a)) throw new UsageError(`--api ${a}: choose dashboard, legacy, batch or all`);
  if (values.basic && !values.basic.includes(':')) throw new UsageError('--basic takes user:password');
  const phases = values.phases.split(',').map((p) => p.trim()) as Phase[];
  for (const p of phases) if (!['examples', 'generated', 'negative', 'mcp', 'flow'].includes(p)) throw new UsageError(`--phases ${p}: choose among examples, generated, negative, mcp, flow`);
  const allowWrites = values['allow-writes'];
  if (allowWrites !== undefined && !/^[^/\s]+\/[^/\s]+$/.test(allowWrites)) throw new UsageError(`--allow-writes ${allowWrites}: name the repository as org/repo`);
  if (allowWrites && values.repo && values.repo !== allowWrites) throw new UsageError(`--allow-writes ${allowWrites} names another repository than --repo ${values.repo}: the run writes only to the repository it checks`);
  const repo = values.repo ?? allowWrites ?? 'acme/site';
  const seed = Number(values.seed);
  const maxExamples = Number(values['max-examples']);
  if (!Number.isInteger(seed) || !Number.isInteger(maxExamples) || maxExamples < 0) throw new UsageError('--seed and --max-examples take whole numbers');

  const skipped: SkippedPhase[] = [];
  const run = runConformance({
    target: values.target, apis, token: values.token, basic: values.basic, repo, allowWrites, seed, maxExamples,
    readOnly: values['read-only'], concurrency: Number(values.concurrency), phases, onProgress: progress(process.stderr),
    onSkip: (s) => {
      skipped.push(s);
      process.stderr.write(`warning: skipping ${s.phase}: ${s.reason}\n`);
    },
    onNotice: (line) => process.stderr.write(`note: ${line}\n`),
  });
  let results: Awaited<typeof run>;
  try {
    results = await run;
  } catch (err) {
    // A target that cannot be checked: one line, not a failure per check.
    if (err instanceof TargetProblem) {
      console.error(`pactum conformance: ${err.message}`);
      return 2;
    }
    throw err;
  }
  const failed = results.filter((r) => r.problems.length);
  const limited = results.filter((r) => r.limitation);
  console.log(summaryTable(results));
  if (failed.length) console.log(`\n${failureReport(results)}`);
  if (limited.length) {
    console.log('\nexpected limitations of the target, a stateless mock (docs/mock.md), not counted as failures:');
    for (const r of limited) console.log(`  ~ [${r.phase}] ${r.api} ${r.operationId} — ${r.name}: ${r.limitation}`);
  }
  if (skipped.length) console.log(`\nskipped: ${skipped.map((s) => `${s.phase} (${s.reason.split(':')[0]})`).join(', ')}`);
  if (values.junit) writeFileSync(values.junit, junitXml(results));
  const extra = [limited.length ? `, ${limited.length} expected mock limitations` : '', skipped.length ? `, ${skipped.length} phases skipped` : ''].join('');
  console.log(`\n${results.length - failed.length - limited.length} passed, ${failed.length} failed${extra} (seed ${seed}; rerun with --seed ${seed} to reproduce)`);
  return failed.length ? 1 : 0;
}
