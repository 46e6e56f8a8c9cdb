/**
 * The deterministic WCAG remediation engine: given a scanner finding (criterion, message, HTML and CSS
 * context) it drafts a fix for human review. No network, no randomness, no clock: the same input always
 * gives the same draft.
 */
import { toBlockMarkup } from './block-editor.js';
import { measureMarkup, type FixBudget } from './budget.js';
import { UnsupportedCriterionError, type FixInput, type FixResult, type Recipe } from './model.js';
import { normaliseCriterionId, recipeFor } from './registry.js';

export { Placeholder, UnsupportedCriterionError } from './model.js';
export type { Effort, FixInput, FixResult, Platform } from './model.js';
export { SUPPORTED_CRITERIA } from './registry.js';
export { FixBudgetError, measureMarkup, type FixBudget, type MarkupSize } from './budget.js';

// Page-level fixes live in the theme and the site settings, not in post content.
const BLOCK_EDITOR_PAGE_NOTES: Record<string, string> = {
  '2.4.2': 'In WordPress the <title> comes from the theme (add_theme_support("title-tag")) and the post title, so set it there rather than in block content.',
  '3.1.1': 'In WordPress the <html lang> comes from Settings > General > Site Language through the theme\'s language_attributes(), so set it there rather than in block content.',
};

function forBlockEditor(result: FixResult, recipe: Recipe, criterionId: string): FixResult {
  if (recipe.pageLevel === true) {
    const note = BLOCK_EDITOR_PAGE_NOTES[criterionId];
    return note === undefined ? result : { ...result, explanation: `${result.explanation} ${note}` };
  }
  return { ...result, fixedHtml: toBlockMarkup(result.fixedHtml) };
}

/**
 * Drafts a fix for one finding. With a budget, the snippet's elements and nesting are measured
 * first, and a snippet over it is refused before any recipe runs.
 * @throws UnsupportedCriterionError when no recipe exists for the criterion.
 * @throws FixBudgetError when the snippet is over the budget.
 */
export function draftFix(input: FixInput, budget?: FixBudget): FixResult {
  const criterionId = normaliseCriterionId(input.criterionId);
  const recipe = recipeFor(criterionId);
  if (recipe === undefined) throw new UnsupportedCriterionError(input.criterionId);
  if (budget !== undefined) measureMarkup(input.htmlContext, budget);
  const result = recipe.draft({ ...input, criterionId });
  return input.platform === 'cms-block-editor' ? forBlockEditor(result, recipe, criterionId) : result;
}
