/** What a conformance run found: a table per operation and check, failures with curl lines, JUnit XML. */
import { curlLine, type ConformanceRequest } from './http.js';

export type Phase = 'examples' | 'generated' | 'negative' | 'mcp' | 'flow';

export interface CaseResult {
  phase: Phase;
  api: string;
  operationId: string;
  name: string;
  request: ConformanceRequest;
  status: number | null;
  problems: string[];
  /** A check a stateless mock cannot pass, and why: not a failure, reported apart. */
  limitation?: string;
}

/** A phase the run left out, and why. */
export interface SkippedPhase {
  phase: string;
  reason: string;
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));

export function summaryTable(results: CaseResult[]): string {
  const rows = new Map<string, { phases: Set<Phase>; cases: number; failed: number }>();
  for (const r of results) {
    const key = `${r.api} ${r.operationId}`;
    const row = rows.get(key) ?? { phases: new Set(), cases: 0, failed: 0 };
    row.phases.add(r.phase);
    row.cases++;
    if (r.problems.length) row.failed++;
    rows.set(key, row);
  }
  const width = Math.max(...[...rows.keys()].map((k) => k.length), 9);
  const lines = [`${pad('operation', width)}  cases  failed  phases`];
  for (const [k, row] of [...rows.entries()].sort()) lines.push(`${pad(k, width)}  ${pad(String(row.cases), 5)}  ${pad(String(row.failed), 6)}  ${[...row.phases].join(',')}`);
  // And per check: each problem starts with the name of the check that found it.
  const checks = new Map<string, number>();
  for (const r of results) for (const p of r.problems) checks.set(p.split(':')[0]!, (checks.get(p.split(':')[0]!) ?? 0) + 1);
  if (checks.size) {
    lines.push('', 'failed checks:');
    for (const [c, n] of [...checks.entries()].sort((a, b) => b[1] - a[1])) lines.push(`  ${pad(c, 28)} ${n}`);
  }
  return lines.join('\n');
}

export function failureReport(results: CaseResult[], limit = 50): string {
  const failed = results.filter((r) => r.problems.length);
  return failed
    .slice(0, limit)
    .map((r) => `✗ [${r.phase}] ${r.api} ${r.operationId} — ${r.name} (status ${r.status ?? 'none'})\n${r.problems.map((p) => `    ${p}`).join('\n')}\n    reproduce: ${curlLine(r.request)}`)
    .concat(failed.length > limit ? [`… and ${failed.length - limit} more failures`] : [])
    .join('\n');
}

const xml = (s: string) => s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

export function junitXml(results: CaseResult[]): string {
  const suites = new Map<string, CaseResult[]>();
  for (const r of results) suites.set(`${r.phase}/${r.api}`, [...(suites.get(`${r.phase}/${r.api}`) ?? []), r]);
  const out = [`<?xml version="1.0" encoding="UTF-8"?>`, `<testsuites name="pactum conformance" tests="${results.length}" failures="${results.filter((r) => r.problems.length).length}" skipped="${results.filter((r) => r.limitation).length}">`];
  for (const [name, rs] of suites) {
    out.push(`  <testsuite name="${xml(name)}" tests="${rs.length}" failures="${rs.filter((r) => r.problems.length).length}" skipped="${rs.filter((r) => r.limitation).length}">`);
    for (const r of rs) {
      out.push(`    <testcase classname="${xml(`${r.api}.${r.operationId}`)}" name="${xml(r.name)}">`);
      if (r.problems.length) out.push(`      <failure message="${xml(r.problems[0]!)}">${xml(`${r.problems.join('\n')}\n\n${curlLine(r.request)}`)}</failure>`);
      else if (r.limitation) out.push(`      <skipped message="${xml(r.limitation)}"/>`);
      out.push('    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}

/** A progress bar on a terminal; a line at each quarter otherwise (CI logs). */
export function progress(stream: NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean }) {
  let lastQuarter = -1;
  return (done: number, total: number, phase: string) => {
    if (stream.isTTY) {
      const width = 30;
      const filled = total ? Math.round((done / total) * width) : width;
      stream.write(`\r  ${pad(phase, 9)} [${'='.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total}`);
      if (done === total) stream.write('\n');
      return;
    }
    const quarter = total ? Math.floor((done / total) * 4) : 4;
    if (quarter !== lastQuarter) {
      lastQuarter = quarter;
      stream.write(`  ${phase}: ${done}/${total}\n`);
    }
  };
}
