/**
 * What drafting a fix costs, counted rather than timed: every step jsdom takes through its tree
 * goes through its symbol-tree (a node's parent, children, siblings), so the steps a draft takes
 * are counted there, and the count for n elements is compared with the count for 2n.
 *
 * Wide input (2,000 fields of a form) must grow in step with the elements: a recipe that searches
 * the whole document for each element grows with their square. One cost is jsdom's and is counted
 * apart: on every insertion or removal it numbers the node among its siblings (for live ranges,
 * which these documents never have), so changing each of many siblings grows with their square;
 * the element limit (FIX_MAX_ELEMENTS) bounds that. Deep input (nested <div>) may grow with
 * elements times depth, which the depth limit (FIX_MAX_DEPTH) bounds, never with its cube.
 */
import { describe, expect, it } from 'vitest';
import { draftFix, type FixInput } from '../../../src/domain/fix/index.js';
import { countTreeSteps, stepsOf, type TreeSteps } from './tree-steps.js';

countTreeSteps();

function counted(input: Omit<FixInput, 'platform'>): TreeSteps {
  let fixedHtml = '';
  const steps = stepsOf(() => ({ fixedHtml } = draftFix({ ...input, platform: 'html' })));
  expect(fixedHtml).not.toBe('');
  return steps;
}

/** The recipe's own steps (jsdom's sibling numbering apart) for n and 2n, and both counts. */
function growth(make: (n: number) => Omit<FixInput, 'platform'>, n: number) {
  const [small, large] = [counted(make(n)), counted(make(2 * n))];
  return {
    own: (large.all - large.numbering) / (small.all - small.numbering),
    all: large.all / small.all,
  };
}

const fields = (n: number) => Array.from({ length: n }, (_, i) => `<input name="field_${i}">`).join('');
const nested = (n: number) => `${'<div>'.repeat(n)}x${'</div>'.repeat(n)}`;

describe('the cost of drafting a fix', () => {
  it('grows in step with the fields of a wide form (4.1.2, 3.3.2, 1.3.1)', () => {
    for (const [criterionId, issueMessage] of [
      ['4.1.2', 'Form elements must have labels'],
      ['3.3.2', 'Form field has no label'],
      ['1.3.1', 'Form field is not tied to its label'],
    ] as const) {
      const { own, all } = growth((n) => ({ criterionId, issueMessage, htmlContext: fields(n) }), 200);
      // Linear: twice the fields, twice the steps (a little more for the longer ids).
      expect(own, `${criterionId}: own steps from 200 to 400 fields`).toBeLessThan(2.3);
      // jsdom's numbering among siblings included: at most the square.
      expect(all, `${criterionId}: all steps from 200 to 400 fields`).toBeLessThan(4.2);
    }
  });

  it('grows in step with the labels of a wide form whose text sits beside each field', () => {
    const beside = (n: number) => Array.from({ length: n }, (_, i) => `<div><span>Field ${i}</span><input></div>`).join('');
    const { own } = growth((n) => ({ criterionId: '1.3.1', issueMessage: 'Form field is not tied to its label', htmlContext: beside(n) }), 200);
    expect(own).toBeLessThan(2.3);
  });

  it('grows with elements times depth on nested markup (1.3.1, 4.1.2, 2.1.1), never with the cube of the depth', () => {
    for (const [criterionId, issueMessage] of [
      ['1.3.1', 'Heading markup should be used'],
      ['1.3.1', 'List items must be contained in a list'],
      ['4.1.2', 'Buttons must have discernible text'],
      ['2.1.1', 'Element is not keyboard accessible'],
    ] as const) {
      const { all } = growth((n) => ({ criterionId, issueMessage, htmlContext: nested(n) }), 60);
      // n elements at depth up to n: at most the square (4 per doubling); the cube is 8.
      expect(all, `${criterionId} (${issueMessage}): steps from 60 to 120 nested <div>`).toBeLessThan(4.5);
    }
  });
});
