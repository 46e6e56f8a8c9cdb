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
