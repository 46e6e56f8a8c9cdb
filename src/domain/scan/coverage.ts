/**
 * The WCAG criteria a scan under a standard tests at all: those of the axe-core rules it runs and
 * of the checks beyond axe it includes. A criterion outside this set was not evaluated by the
 * scan, whatever its report says of other criteria.
 */
import axe from 'axe-core';
import { checksFor } from './checks/catalogue.js';
import type { WcagStandard } from './types.js';
import { criteriaFromTags, tagsForStandard } from './wcag.js';

export function coveredCriteria(standard: WcagStandard): Set<string> {
  const covered = new Set<string>();
  for (const rule of axe.getRules(tagsForStandard(standard))) for (const c of criteriaFromTags(rule.tags)) covered.add(c);
  for (const check of checksFor(standard)) for (const c of check.criteria) covered.add(c);
  return covered;
}
