/** Which recipe fixes which WCAG success criterion. */
import type { Recipe } from './model.js';
import { contrastEnhanced, contrastMinimum, nonTextContrast } from './recipes/contrast.js';
import { infoAndRelationships } from './recipes/info-relationships.js';
import { keyboard } from './recipes/keyboard.js';
import { labelsOrInstructions } from './recipes/labels.js';
import { languageOfPage } from './recipes/language.js';
import { linkPurpose } from './recipes/link-purpose.js';
import { nameRoleValue } from './recipes/name-role-value.js';
import { nonTextContent } from './recipes/non-text-content.js';
import { pageTitled } from './recipes/page-titled.js';

const RECIPES: readonly Recipe[] = [
  nonTextContent,
  infoAndRelationships,
  contrastMinimum,
  contrastEnhanced,
  nonTextContrast,
  keyboard,
  pageTitled,
  linkPurpose,
  languageOfPage,
  labelsOrInstructions,
  nameRoleValue,
];

const BY_CRITERION: ReadonlyMap<string, Recipe> = new Map(RECIPES.flatMap((r) => r.criteria.map((c) => [c, r] as const)));

/** Criterion ids in WCAG order. */
export const SUPPORTED_CRITERIA: readonly string[] = Object.freeze(
  Array.from(BY_CRITERION.keys()).sort((a, b) => {
    const pa = a.split('.').map(Number);
    const pb = b.split('.').map(Number);
    return pa[0]! - pb[0]! || pa[1]! - pb[1]! || pa[2]! - pb[2]!;
  }),
);

/** "1.1.1", " 1.1.1 Non-text Content" and "WCAG 1.1.1" all mean 1.1.1. */
export function normaliseCriterionId(criterionId: string): string {
  return /\d+\.\d+\.\d+/.exec(criterionId)?.[0] ?? criterionId.trim();
}

export function recipeFor(criterionId: string): Recipe | undefined {
  return BY_CRITERION.get(normaliseCriterionId(criterionId));
}
