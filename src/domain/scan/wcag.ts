/** WCAG vocabulary the scanner needs: which axe-core tags a standard selects, and tag → criterion. */
import type { WcagStandard } from './types.js';

/** Every WCAG 2.x success criterion id (2.2, plus 4.1.1 which 2.2 removed). */
export const WCAG_CRITERIA: ReadonlySet<string> = new Set([
  '1.1.1', '1.2.1', '1.2.2', '1.2.3', '1.2.4', '1.2.5', '1.2.6', '1.2.7', '1.2.8', '1.2.9',
  '1.3.1', '1.3.2', '1.3.3', '1.3.4', '1.3.5', '1.3.6',
  '1.4.1', '1.4.2', '1.4.3', '1.4.4', '1.4.5', '1.4.6', '1.4.7', '1.4.8', '1.4.9', '1.4.10', '1.4.11', '1.4.12', '1.4.13',
  '2.1.1', '2.1.2', '2.1.3', '2.1.4', '2.2.1', '2.2.2', '2.2.3', '2.2.4', '2.2.5', '2.2.6', '2.3.1', '2.3.2', '2.3.3',
  '2.4.1', '2.4.2', '2.4.3', '2.4.4', '2.4.5', '2.4.6', '2.4.7', '2.4.8', '2.4.9', '2.4.10', '2.4.11', '2.4.12', '2.4.13',
  '2.5.1', '2.5.2', '2.5.3', '2.5.4', '2.5.5', '2.5.6', '2.5.7', '2.5.8',
  '3.1.1', '3.1.2', '3.1.3', '3.1.4', '3.1.5', '3.1.6', '3.2.1', '3.2.2', '3.2.3', '3.2.4', '3.2.5', '3.2.6',
  '3.3.1', '3.3.2', '3.3.3', '3.3.4', '3.3.5', '3.3.6', '3.3.7', '3.3.8', '3.3.9',
  '4.1.1', '4.1.2', '4.1.3',
]);

const LEVEL_A = ['wcag2a', 'wcag21a', 'wcag22a'];
const LEVEL_AA = ['wcag2aa', 'wcag21aa', 'wcag22aa'];
const LEVEL_AAA = ['wcag2aaa', 'wcag21aaa'];

/** axe-core tags a standard runs. Only WCAG tags: best-practice rules would make the report speak of more than WCAG. */
export function tagsForStandard(standard: WcagStandard): string[] {
  switch (standard) {
    case 'WCAG2A': return [...LEVEL_A];
    case 'WCAG2AA': return [...LEVEL_A, ...LEVEL_AA];
    case 'WCAG2AAA': return [...LEVEL_A, ...LEVEL_AA, ...LEVEL_AAA];
  }
}

/**
 * "wcag1412" → "1.4.12". The digits alone are ambiguous ("1.41.2" vs "1.4.12"), so every
 * split is tried against the known criteria; tags such as "wcag2aa" are not criteria and give null.
 */
export function criterionFromTag(tag: string): string | null {
  const digits = /^wcag(\d{3,6})$/.exec(tag)?.[1];
  if (!digits) return null;
  for (let i = 1; i < digits.length - 1; i++) {
    for (let j = i + 1; j < digits.length; j++) {
      const id = `${digits.slice(0, i)}.${digits.slice(i, j)}.${digits.slice(j)}`;
      if (WCAG_CRITERIA.has(id)) return id;
    }
  }
  return null;
}

/** All criteria a rule's tags name, in tag order, without repeats. */
export function criteriaFromTags(tags: readonly string[]): string[] {
  const ids = tags.map(criterionFromTag).filter((id): id is string => id !== null);
  return [...new Set(ids)];
}
