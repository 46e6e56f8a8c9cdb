/**
 * The fix budget: a snippet's elements and nesting are measured in one parse before any recipe
 * runs (jsdom takes no step at all for a refused snippet), counted as the engine parses it, and
 * markup the parser multiplies is refused as soon as the count passes the limit.
 */
import { describe, expect, it } from 'vitest';
import { draftFix, FixBudgetError, measureMarkup, type FixBudget } from '../../../src/domain/fix/index.js';
import { countTreeSteps, stepsOf } from './tree-steps.js';

countTreeSteps();

const UNBOUNDED: FixBudget = { maxElements: Number.MAX_SAFE_INTEGER, maxDepth: Number.MAX_SAFE_INTEGER };
const DEFAULTS: FixBudget = { maxElements: 3000, maxDepth: 128 };
const nested = (n: number) => `${'<div>'.repeat(n)}Opening hours${'</div>'.repeat(n)}`;
const refusal = (work: () => unknown) => {
  try {
    work();
  } catch (err) {
    return err;
  }
  return null;
};

describe('measureMarkup', () => {
  it('counts the elements and the nesting of the document the engine parses (html, head and body included)', () => {
    expect(measureMarkup('<div><p>x</p></div>', UNBOUNDED)).toEqual({ elements: 5, depth: 4 });
    expect(measureMarkup('plain text', UNBOUNDED)).toEqual({ elements: 3, depth: 2 });
    // A table part is parsed inside the table the engine puts around it.
    expect(measureMarkup('<tr><td>a</td></tr>', UNBOUNDED)).toEqual({ elements: 7, depth: 6 });
    // Template contents count too.
    expect(measureMarkup('<template><div><span>x</span></div></template>', UNBOUNDED).depth).toBe(5);
    expect(measureMarkup(nested(700), UNBOUNDED).depth).toBe(702);
  });

  it('refuses past the limits, naming which', () => {
    expect(refusal(() => measureMarkup(nested(200), DEFAULTS))).toMatchObject({ limit: 'depth', max: 128, found: 202 });
    const inputs = Array.from({ length: 3000 }, () => '<input>').join('');
    expect(refusal(() => measureMarkup(inputs, DEFAULTS))).toMatchObject({ limit: 'elements', max: 3000, found: 3001 });
  });

  it('stops counting at the limit when the parser multiplies elements (misnested formatting re-opened in every block)', () => {
    // 200 <b> left open in a paragraph are re-opened in each of 500 more: 100,000 elements from 7 kB.
    const multiplied = `<p>${Array.from({ length: 200 }, (_, i) => `<b class="b${i}">`).join('')}x</p>${'<p>x</p>'.repeat(500)}`;
    expect(refusal(() => measureMarkup(multiplied, DEFAULTS))).toMatchObject({ limit: 'elements', found: 3001 });
  });
});

describe('draftFix with a budget', () => {
  it('refuses 700 nested <div> for 1.3.1 before any recipe runs: jsdom takes no step', () => {
    let err: unknown;
    const steps = stepsOf(() => (err = refusal(() => draftFix({ criterionId: '1.3.1', issueMessage: 'Heading markup should be used', htmlContext: nested(700), platform: 'html' }, DEFAULTS))));
    expect(err).toBeInstanceOf(FixBudgetError);
    expect(err).toMatchObject({ limit: 'depth', max: 128, found: 702 });
    expect(steps.all).toBe(0);
  });

  it('refuses 4,000 <input> for 4.1.2 before any recipe runs', () => {
    const inputs = Array.from({ length: 4000 }, (_, i) => `<input name="f${i}">`).join('');
    let err: unknown;
    const steps = stepsOf(() => (err = refusal(() => draftFix({ criterionId: '4.1.2', issueMessage: 'Form elements must have labels', htmlContext: inputs, platform: 'html' }, DEFAULTS))));
    expect(err).toMatchObject({ limit: 'elements', max: 3000 });
    expect(steps.all).toBe(0);
  });

  it('drafts deep and wide markup within the limits', () => {
    const heading = `${'<div>'.repeat(120)}<p><b>Opening hours</b></p>${'</div>'.repeat(120)}`;
    const deep = draftFix({ criterionId: '1.3.1', issueMessage: 'Heading markup should be used', htmlContext: heading, platform: 'html' }, DEFAULTS);
    expect(deep.fixedHtml).toContain('<h2>Opening hours</h2>');
    const inputs = Array.from({ length: 2000 }, (_, i) => `<input name="first_name_${i}">`).join('');
    const wide = draftFix({ criterionId: '4.1.2', issueMessage: 'Form elements must have labels', htmlContext: inputs, platform: 'html' }, DEFAULTS);
    expect(wide.fixedHtml.match(/<label for=/g)).toHaveLength(2000);
  });
});
