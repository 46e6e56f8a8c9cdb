/**
 * The ACR's conformance table is derived from the evidence only: no "Supports" that a check did
 * not earn, "Not Evaluated" for every criterion no check covers, failures graded by their spread.
 */
import { describe, expect, it } from 'vitest';
import { conformanceTable } from '../../../src/domain/report/acr.js';
import { coveredCriteria } from '../../../src/domain/scan/coverage.js';
import type { Issue, PageReport } from '../../../src/domain/scan/types.js';

const issue = (code: string, criterion: string, type: Issue['type'] = 'error'): Issue => ({
  code, wcagCriterion: criterion, wcagCriteria: [criterion], type, impact: 'serious', message: code, selector: 'x', context: '<x>', helpUrl: 'https://example.com/',
});
const page = (url: string, issues: Issue[], extra: Partial<PageReport> = {}): PageReport => ({ url, title: null, issueCount: issues.length, notEvaluated: [], issues, ...extra });

const covered = coveredCriteria('WCAG2AA');
const pages = [
  page('https://e.com/', [issue('image-alt', '1.1.1'), issue('color-contrast', '1.4.3'), issue('pactum-link-purpose', '2.4.4', 'warning')]),
  page('https://e.com/a', [issue('color-contrast', '1.4.3')]),
  page('https://e.com/b', [], { notEvaluated: [{ code: 'target-size', wcagCriteria: ['2.5.8'], reason: 'needs a browser' }] }),
  page('https://e.com/gone', [], { error: 'answered HTTP 404' }),
];
const table = conformanceTable({ pages, covered, reviews: { '1.2.4': { conformance: 'Not Applicable', remarks: 'No live media.' } } });
const row = (id: string) => table.find((r) => r.criterion === id)!;

describe('the ACR conformance table', () => {
  it('lists WCAG 2.2 A and AA (4.1.1 removed), each with its EN 301 549 clause where one exists', () => {
    expect(table).toHaveLength(55);
    expect(table.every((r) => r.level === 'A' || r.level === 'AA')).toBe(true);
    expect(row('1.1.1').en301549).toBe('9.1.1.1');
    expect(row('2.5.8').en301549).toBeNull();
    expect(table.find((r) => r.criterion === '4.1.1')).toBeUndefined();
  });

  it('grades confirmed failures by their spread over the pages checked', () => {
    expect(row('1.4.3')).toMatchObject({ conformance: 'Does Not Support', remarks: '2 confirmed failures on 2 of 3 pages checked' });
    expect(row('1.1.1')).toMatchObject({ conformance: 'Partially Supports', remarks: '1 confirmed failure on 1 of 3 pages checked' });
  });

  it('says Not Evaluated for every criterion no check covers, never Supports by default', () => {
    const uncovered = table.filter((r) => !covered.has(r.criterion) && r.criterion !== '1.2.4');
    expect(uncovered.length).toBeGreaterThan(0);
    for (const r of uncovered) expect(r.conformance, r.criterion).toBe('Not Evaluated');
    for (const r of table.filter((x) => x.conformance === 'Supports')) expect(covered.has(r.criterion), r.criterion).toBe(true);
  });

  it('leaves findings awaiting review, and checks that could not run, Not Evaluated', () => {
    expect(row('2.4.4')).toMatchObject({ conformance: 'Not Evaluated', remarks: '1 finding awaits a person\'s review.' });
    expect(row('2.5.8').conformance).toBe('Not Evaluated');
  });

  it('says Supports where a check covers the criterion and nothing of it is open; a reviewer\'s word stands', () => {
    expect(covered.has('3.1.1')).toBe(true);
    expect(row('3.1.1').conformance).toBe('Supports');
    expect(row('1.2.4')).toMatchObject({ conformance: 'Not Applicable', remarks: 'No live media.' });
  });

  it('evaluates nothing when no page could be checked', () => {
    const none = conformanceTable({ pages: [page('https://e.com/', [], { error: 'down' })], covered });
    expect(new Set(none.map((r) => r.conformance))).toEqual(new Set(['Not Evaluated']));
  });
});
