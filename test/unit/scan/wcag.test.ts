import axe from 'axe-core';
import { describe, expect, it } from 'vitest';
import { criteriaFromTags, criterionFromTag, tagsForStandard, WCAG_CRITERIA } from '../../../src/domain/scan/wcag.js';

describe('criterionFromTag', () => {
  it.each([
    ['wcag111', '1.1.1'],
    ['wcag143', '1.4.3'],
    ['wcag1410', '1.4.10'],
    ['wcag1412', '1.4.12'],
    ['wcag2411', '2.4.11'],
    ['wcag258', '2.5.8'],
    ['wcag412', '4.1.2'],
  ])('%s → %s', (tag, criterion) => {
    expect(criterionFromTag(tag)).toBe(criterion);
  });

  it.each(['wcag2a', 'wcag21aa', 'wcag22aa', 'wcag2aaa', 'wcag2a-obsolete', 'best-practice', 'EN-9.1.1.1', 'wcag999', 'cat.forms'])(
    '%s is not a criterion',
    (tag) => {
      expect(criterionFromTag(tag)).toBeNull();
    },
  );

  it('maps every criterion tag axe-core uses to a known criterion', () => {
    const tags = new Set(axe.getRules().flatMap((rule) => rule.tags).filter((tag) => /^wcag\d+$/.test(tag)));
    expect(tags.size).toBeGreaterThan(20);
    for (const tag of tags) expect(WCAG_CRITERIA.has(criterionFromTag(tag) ?? ''), tag).toBe(true);
  });
});

describe('criteriaFromTags', () => {
  it('keeps tag order and drops level and non-WCAG tags', () => {
    const linkName = axe.getRules().find((rule) => rule.ruleId === 'link-name')!;
    expect(criteriaFromTags(linkName.tags)).toEqual(['2.4.4', '4.1.2']);
    expect(criteriaFromTags(['best-practice', 'cat.keyboard'])).toEqual([]);
    expect(criteriaFromTags(['wcag143', 'wcag143'])).toEqual(['1.4.3']);
  });
});

describe('tagsForStandard', () => {
  it('includes the levels below', () => {
    expect(tagsForStandard('WCAG2A')).toEqual(['wcag2a', 'wcag21a', 'wcag22a']);
    expect(tagsForStandard('WCAG2AA')).toEqual(['wcag2a', 'wcag21a', 'wcag22a', 'wcag2aa', 'wcag21aa', 'wcag22aa']);
    expect(tagsForStandard('WCAG2AAA')).toEqual(['wcag2a', 'wcag21a', 'wcag22a', 'wcag2aa', 'wcag21aa', 'wcag22aa', 'wcag2aaa', 'wcag21aaa']);
  });

  it('never selects best-practice rules', () => {
    const selected = axe.getRules(tagsForStandard('WCAG2AAA'));
    expect(selected.length).toBeGreaterThan(50);
    expect(selected.every((rule) => rule.tags.some((tag) => /^wcag2\d?a+$/.test(tag)))).toBe(true);
  });
});
