/**
 * Every finding carries the EN 301 549 clause of its criterion, and a colour-contrast finding its
 * APCA Lc beside the WCAG 2 ratio. The Lc values are the reference implementation's own test values (apca-w3's test/index.js), which colorjs.io, the library pactum computes them with, must reproduce.
 */
import type axe from 'axe-core';
import { describe, expect, it } from 'vitest';
import { issuesOf } from '../../../src/domain/scan/axe-results.js';
import { issueOfFinding } from '../../../src/domain/scan/checks/catalogue.js';
import { apcaLc, apcaThreshold, contrastOf } from '../../../src/domain/scan/contrast.js';
import { en301549Clause } from '../../../src/domain/scan/en301549.js';
import { buildReportView } from '../../../src/domain/report/view-model.js';
import { criteria } from '../../../src/domain/regulations/index.js';

const contrastRule = (fg: string, bg: string, ratio: number, px = 16, weight = 'normal'): axe.Result => ({
  id: 'color-contrast', tags: ['wcag2aa', 'wcag143'], help: 'Elements must meet minimum color contrast ratio thresholds', helpUrl: 'https://dequeuniversity.com/rules/axe/4.14/color-contrast', impact: 'serious', description: '',
  nodes: [{
    html: '<p class="faint">x</p>', target: ['.faint'], impact: 'serious', all: [], none: [],
    any: [{ id: 'color-contrast', impact: 'serious', data: { fgColor: fg, bgColor: bg, contrastRatio: ratio }, relatedNodes: [],
      message: `Element has insufficient color contrast of ${ratio} (foreground color: ${fg}, background color: ${bg}, font size: ${(px * 0.75).toFixed(1)}pt (${px}px), font weight: ${weight}). Expected contrast ratio of 4.5:1` }],
  }],
} as unknown as axe.Result);

describe('APCA Lc (colorjs.io, against apca-w3\'s test values)', () => {
  it('gives the values of the library\'s own tests, polarity included', () => {
    const cases: [string, string, number][] = [
      ['#888', '#fff', 63.056469930209424], ['#fff', '#888', -68.54146436644962],
      ['#000', '#aaa', 58.146262578561334], ['#aaa', '#000', -56.24113336839742],
      ['#123', '#def', 91.66830811481631], ['#def', '#123', -93.06770049484275],
      ['#123', '#444', 8.32326136957393], ['#444', '#123', -7.526878460278154],
    ];
    for (const [text, background, lc] of cases) expect(apcaLc(text, background), `${text} on ${background}`).toBe(lc);
  });

  it('lays a translucent text colour over its background first, as the reference calcAPCA does (#0006 on #fff)', () => {
    expect(apcaLc('#0006', '#fff')).toBeCloseTo(54.62184067441377, 0);
  });

  it('reads nothing from colours it cannot parse', () => {
    expect(apcaLc('var(--x)', '#fff')).toBeNull();
  });

  it('asks the WCAG 3 draft\'s threshold of the text\'s size and weight', () => {
    expect(apcaThreshold(16, false)).toBe(75);
    expect(apcaThreshold(24, false)).toBe(60);
    expect(apcaThreshold(16, true)).toBe(60);
    expect(apcaThreshold(36, false)).toBe(45);
    expect(apcaThreshold(24, true)).toBe(45);
    expect(apcaThreshold(null, false)).toBe(75);
  });
});

describe('a contrast finding', () => {
  it('carries the WCAG 2 ratio and the APCA Lc, advisory', () => {
    const [issue] = issuesOf([contrastRule('#888888', '#ffffff', 3.54)], 'error');
    expect(issue!.contrast).toEqual({
      foreground: '#888888', background: '#ffffff', ratio: 3.54, required: 4.5,
      apca: { lc: 63.1, threshold: 75, meets: false, advisory: 'WCAG 3 working draft' },
    });
    expect(issue!.en301549).toBe('9.1.4.3');
  });

  it('light text on dark is negative; large bold text is held to Lc 45', () => {
    const [issue] = issuesOf([contrastRule('#ffffff', '#888888', 3.54, 24, 'bold')], 'error');
    expect(issue!.contrast!.apca).toEqual({ lc: -68.5, threshold: 45, meets: true, advisory: 'WCAG 3 working draft' });
  });

  it('is read from the message of a report stored before the field existed', () => {
    const [issue] = issuesOf([contrastRule('#000000', '#aaaaaa', 9.04)], 'error');
    const { contrast, en301549, ...stored } = issue!;
    expect(contrastOf(stored)).toEqual(contrast);
    const view = buildReportView({
      scan: { scanId: 'scn_1', siteUrl: 'https://example.com/', standard: 'WCAG2AA', status: 'completed', engine: 'chromium', finishedAt: '2026-12-07T00:00:00.000Z' },
      summary: { pagesScanned: 1, pagesFailed: 0, totalIssues: 1, byLevel: { error: 1, warning: 0, notice: 0 }, byCriterion: { '1.4.3': 1 }, notEvaluated: [] },
      pages: [{ url: 'https://example.com/', title: 'x', issueCount: 1, issues: [stored] }],
      brandScore: null, maxIssues: 10,
    });
    const shown = view.rules[0]!.issues[0]!;
    expect(shown.contrast!.apca!.lc).toBe(58.1);
    expect(shown.en301549).toBe(en301549);
  });
});

describe('EN 301 549 clauses', () => {
  it('chapter 9 holds WCAG 2.1\'s 50 A and AA criteria, not AAA nor WCAG 2.2\'s additions', () => {
    const mapped = criteria.filter((c) => c.en301549);
    expect(mapped).toHaveLength(50);
    expect(en301549Clause('1.1.1')).toBe('9.1.1.1');
    expect(en301549Clause('4.1.1')).toBe('9.4.1.1');
    expect(en301549Clause('1.3.4')).toBe('9.1.3.4');
    expect(en301549Clause('2.5.8')).toBeNull();
    expect(en301549Clause('1.4.6')).toBeNull();
    expect(en301549Clause(null)).toBeNull();
  });

  it('a check beyond axe carries its clause', () => {
    const issue = issueOfFinding({ check: 'pactum-keyboard-trap', criterion: '2.1.2', selector: '#d', html: '<div id="d">', what: 'focus cannot leave div#d', evidence: 'x' });
    expect(issue.en301549).toBe('9.2.1.2');
  });
});
