/** ACT outcomes and consistency as W3C's implementation reports define them (scripts/act-consistency.ts). */
import { describe, expect, it } from 'vitest';
import { checkPrecision, consistencyOf, flagCounts, outcomeOf, percentile, type Expected, type Outcome } from '../../../scripts/act-consistency.js';

const cases = (spec: string) => spec.split(' ').map((pair): { expected: Expected; outcome: Outcome } => {
  const [e, o] = pair.split(':') as [string, string];
  const expected = ({ P: 'passed', F: 'failed', I: 'inapplicable' } as const)[e as 'P' | 'F' | 'I'];
  const outcome = ({ p: 'passed', f: 'failed', i: 'inapplicable', '?': 'cantTell', '-': 'untested' } as const)[o as 'p' | 'f' | 'i' | '?' | '-'];
  return { expected, outcome };
});

describe('outcomeOf', () => {
  const result = { findings: [{ code: 'a', type: 'error' }, { code: 'b', type: 'warning' }], notEvaluated: ['c'] };
  it('fails on an error of one of the rule\'s procedures, cannot tell on a warning, passes on nothing', () => {
    expect(outcomeOf(result, ['a', 'b'])).toBe('failed');
    expect(outcomeOf(result, ['b'])).toBe('cantTell');
    expect(outcomeOf(result, ['d'])).toBe('passed');
  });
  it('is untested when the page was not checked or a procedure was not evaluated and nothing found', () => {
    expect(outcomeOf(undefined, ['a'])).toBe('untested');
    expect(outcomeOf({ ...result, error: 'timeout' }, ['a'])).toBe('untested');
    expect(outcomeOf(result, ['c', 'd'])).toBe('untested');
  });
  it('is inapplicable on a document the tool does not check (pactum: anything but an HTML page)', () => {
    expect(outcomeOf({ findings: [], notEvaluated: [], outsideScope: true }, ['a'])).toBe('inapplicable');
  });
  it('cannot tell an error on a page whose scripts did not run, when asked to', () => {
    expect(outcomeOf({ ...result, scripted: true }, ['a'], true)).toBe('cantTell');
    expect(outcomeOf({ ...result, scripted: true }, ['a'], false)).toBe('failed');
  });
});

describe('consistencyOf', () => {
  it('consistent: every failed example failed (or cannot tell), no other failed, nothing untested', () => {
    expect(consistencyOf(cases('P:p F:f F:? I:i'), true)).toBe('consistent');
  });
  it('partially consistent: a failed example failed but another was missed', () => {
    expect(consistencyOf(cases('P:p F:f F:p I:p'), true)).toBe('partially consistent');
  });
  it('partially consistent: only "cannot tell", and no inapplicable example touched', () => {
    expect(consistencyOf(cases('P:? F:? F:p I:p'), true)).toBe('partially consistent');
  });
  it('inconsistent: a passed or inapplicable example failed, or "cannot tell" on an inapplicable one without a true failure', () => {
    expect(consistencyOf(cases('P:f F:f'), true)).toBe('inconsistent');
    expect(consistencyOf(cases('I:f F:f'), true)).toBe('inconsistent');
    expect(consistencyOf(cases('P:? F:? I:?'), true)).toBe('inconsistent');
    expect(consistencyOf(cases('P:p F:p I:p'), true)).toBe('inconsistent');
  });
  it('not evaluated when every failed example was untested; not implemented without procedures', () => {
    expect(consistencyOf(cases('P:- F:- I:-'), true)).toBe('not evaluated');
    expect(consistencyOf(cases('P:p F:- I:p'), true)).toBe('not evaluated');
    expect(consistencyOf(cases('P:p F:f'), false)).toBe('not implemented');
  });
});

describe('flagCounts', () => {
  it('counts the examples flagged (failed or cannot tell) and failed, by what each is expected to be', () => {
    const counts = flagCounts(cases('P:p P:? P:f F:f F:? F:p F:- I:? I:i'));
    expect(counts.passed).toEqual({ examples: 3, flagged: 2, failed: 1 });
    expect(counts.failed).toEqual({ examples: 4, flagged: 2, failed: 1 });
    expect(counts.inapplicable).toEqual({ examples: 2, flagged: 1, failed: 0 });
  });
});

describe('checkPrecision', () => {
  it('counts a check\'s flags by expected outcome: its precision is flags on failed examples over all its flags', () => {
    const examples = [
      { expected: 'failed' as const, codes: ['x', 'y'] },
      { expected: 'failed' as const, codes: ['x'] },
      { expected: 'failed' as const, codes: ['y'] },
      { expected: 'passed' as const, codes: ['x', 'x'] },
      { expected: 'inapplicable' as const, codes: [] },
    ];
    expect(checkPrecision(examples, 'x')).toEqual({ failed: 2, passed: 1, inapplicable: 0, precision: 2 / 3 });
    expect(checkPrecision(examples, 'z')).toEqual({ failed: 0, passed: 0, inapplicable: 0, precision: null });
  });
});

describe('percentile', () => {
  it('is the nearest-rank percentile, whatever the order', () => {
    const values = [50, 10, 40, 20, 30, 60, 70, 80, 90, 100];
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 90)).toBe(90);
    expect(percentile([7], 90)).toBe(7);
    expect(percentile([], 50)).toBeNull();
  });
});
