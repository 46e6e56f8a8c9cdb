/**
 * ACT implementation outcomes and consistency, as W3C's ACT implementation reports define them:
 * a tool's outcome on one test case for one ACT rule (from the findings of the procedures that
 * implement the rule), and the tool's consistency with the rule over all its test cases.
 */
export type Expected = 'passed' | 'failed' | 'inapplicable';
export type Outcome = 'passed' | 'failed' | 'inapplicable' | 'cantTell' | 'untested';
export type Consistency = 'consistent' | 'partially consistent' | 'inconsistent' | 'not evaluated' | 'not implemented';

export interface ToolFindings {
  findings: readonly { code: string; type: string }[];
  notEvaluated: readonly string[];
  /** The page could not be checked. */
  error?: string;
  /** The page has scripts the engine did not run (jsdom). */
  scripted?: boolean;
  /** The document is of a kind the tool does not check (pactum checks HTML pages only): every rule is inapplicable. */
  outsideScope?: boolean;
}

/**
 * failed: a procedure reported an error; cantTell: only "needs review" (a warning), or an error
 * on a page whose scripts did not run (what they change was not seen); untested: the page could
 * not be checked, or a procedure was not evaluated and nothing was found; passed: nothing found.
 */
export function outcomeOf(result: ToolFindings | undefined, procedures: readonly string[], scriptsNotRun = false): Outcome {
  if (!result || result.error) return 'untested';
  if (result.outsideScope) return 'inapplicable';
  const mine = result.findings.filter((f) => procedures.includes(f.code));
  if (mine.some((f) => f.type === 'error')) return scriptsNotRun && result.scripted ? 'cantTell' : 'failed';
  if (mine.length > 0) return 'cantTell';
  if (procedures.some((p) => result.notEvaluated.includes(p))) return 'untested';
  return 'passed';
}

export function consistencyOf(cases: readonly { expected: Expected; outcome: Outcome }[], implemented: boolean): Consistency {
  if (!implemented) return 'not implemented';
  const failedCases = cases.filter((c) => c.expected === 'failed');
  const falsePositive = cases.some((c) => c.expected !== 'failed' && c.outcome === 'failed');
  if (falsePositive) return 'inconsistent';
  if (cases.every((c) => c.outcome === 'untested') || (failedCases.length > 0 && failedCases.every((c) => c.outcome === 'untested'))) return 'not evaluated';
  const truePositive = failedCases.some((c) => c.outcome === 'failed');
  const falseNegative = failedCases.some((c) => c.outcome === 'passed' || c.outcome === 'inapplicable' || c.outcome === 'untested');
  const untested = cases.some((c) => c.outcome === 'untested');
  if (truePositive && !falseNegative && !untested) return 'consistent';
  if (truePositive) return 'partially consistent';
  const cantTell = cases.some((c) => c.outcome === 'cantTell');
  const inapplicableClean = cases.every((c) => c.expected !== 'inapplicable' || c.outcome === 'passed' || c.outcome === 'inapplicable');
  if (cantTell && inapplicableClean) return 'partially consistent';
  return 'inconsistent';
}

/** How many examples a tool flags (outcome failed or cannot tell), by what the example is expected to be. */
export interface FlagCounts {
  failed: { examples: number; flagged: number; failed: number };
  passed: { examples: number; flagged: number; failed: number };
  inapplicable: { examples: number; flagged: number; failed: number };
}

export function flagCounts(cases: readonly { expected: Expected; outcome: Outcome }[]): FlagCounts {
  const counts: FlagCounts = { failed: { examples: 0, flagged: 0, failed: 0 }, passed: { examples: 0, flagged: 0, failed: 0 }, inapplicable: { examples: 0, flagged: 0, failed: 0 } };
  for (const c of cases) {
    const row = counts[c.expected];
    row.examples++;
    if (c.outcome === 'failed' || c.outcome === 'cantTell') row.flagged++;
    if (c.outcome === 'failed') row.failed++;
  }
  return counts;
}

/**
 * One check's flags: the examples of the ACT rules it answers for on which it reported anything,
 * by expected outcome, and its precision (flags on failed examples over all its flags; null
 * without flags).
 */
export function checkPrecision(examples: readonly { expected: Expected; codes: readonly string[] }[], check: string): { failed: number; passed: number; inapplicable: number; precision: number | null } {
  const out = { failed: 0, passed: 0, inapplicable: 0 };
  for (const e of examples) if (e.codes.includes(check)) out[e.expected]++;
  const all = out.failed + out.passed + out.inapplicable;
  return { ...out, precision: all === 0 ? null : out.failed / all };
}

/** The nearest-rank percentile (p in 0..100) of some numbers; null for none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
