/**
 * The ACR's conformance table is derived from the evidence only: no "Supports" that a check did
 * not earn, "Not Evaluated" for every criterion no check covers, failures graded by their spread.
 */
import { describe, expect, it } from 'vitest';
import { conformanceTable } from '../../../src/domain/report/acr.js';
import { acrDocument, acrHtml } from '../../../src/domain/report/acr-document.js';
import { pagePrints } from '../../../src/domain/report/fingerprint.js';
import type { MarkIndex, StoredMark } from '../../../src/domain/report/marks.js';
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
    expect(row('1.4.3')).toMatchObject({ conformance: 'Does Not Support', remarks: '2 failures on 2 of 3 pages checked' });
    expect(row('1.1.1')).toMatchObject({ conformance: 'Partially Supports', remarks: '1 failure on 1 of 3 pages checked' });
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

describe('reviewers\' marks in the ACR', () => {
  const now = '2026-12-07T12:00:00.000Z';
  const mark = (fingerprint: string, m: Partial<StoredMark>): StoredMark => ({
    fingerprint, mark: null, reason: null, expires_at: null, marked_by: 'usr_a', marked_at: now, review_outcome: null, review_note: null, reviewed_by: null, reviewed_at: null, ...m,
  });
  const home = pagePrints(pages[0]!);
  const marked = (marks: MarkIndex) => {
    const t = conformanceTable({ pages, covered, marks, now });
    return (id: string) => t.find((r) => r.criterion === id)!;
  };

  it('counts a false positive as no failure', () => {
    const r = marked({ [home[0]!]: mark(home[0]!, { mark: 'false_positive', reason: 'decorative' }) });
    expect(r('1.1.1').remarks).toMatch(/1 finding dismissed by a reviewer as no failure/);
    expect(r('1.1.1').conformance === 'Supports' || r('1.1.1').conformance === 'Not Evaluated').toBe(true);
  });

  it('still counts an accepted failure, with the reason; once its acceptance has lapsed it is open again', () => {
    const r = marked({ [home[1]!]: mark(home[1]!, { mark: 'accepted', reason: 'vendor widget', expires_at: '2027-01-01T00:00:00.000Z' }) });
    expect(r('1.4.3')).toMatchObject({ conformance: 'Does Not Support', remarks: '2 failures on 2 of 3 pages checked; 1 failure accepted by the organization (vendor widget)' });
    const lapsed = marked({ [home[1]!]: mark(home[1]!, { mark: 'accepted', reason: 'vendor widget', expires_at: '2026-01-01T00:00:00.000Z' }) });
    expect(lapsed('1.4.3').remarks).toBe('2 failures on 2 of 3 pages checked');
  });

  it('makes a needs-review finding a person confirmed a failure, and one they passed no failure', () => {
    expect(marked({ [home[2]!]: mark(home[2]!, { review_outcome: 'fail', review_note: 'vague' }) })('2.4.4')).toMatchObject({ conformance: 'Partially Supports' });
    expect(marked({ [home[2]!]: mark(home[2]!, { review_outcome: 'pass', review_note: 'fine in context' }) })('2.4.4').conformance).toBe('Supports');
  });
});

describe('the ACR document', () => {
  const doc = acrDocument(
    { scanId: 'scn_x', siteUrl: 'https://e.com/', standard: 'WCAG2AA', engine: 'chromium', finishedAt: '2026-12-07T11:00:00.000Z', versions: { pactum: '3.4.0', axeCore: '4.14.1', chromium: null } },
    { pages, covered, now: '2026-12-07T12:00:00.000Z' },
  );

  it('never says Supports outside the WCAG tables, and repeats each criterion\'s level at its EN 301 549 clause', () => {
    const others = [...doc.section508, ...doc.en301549].flatMap((c) => c.rows);
    for (const r of others.filter((x) => !/^9\.\d/.test(x.section))) expect(r.conformance, r.section).not.toBe('Supports');
    const web = doc.en301549[0]!.rows;
    for (const r of [...doc.wcag.levelA, ...doc.wcag.levelAA].filter((x) => x.en301549)) expect(web.find((x) => x.section === r.en301549)?.conformance).toBe(r.conformance);
    expect(doc.summary).toEqual({ Supports: expect.any(Number), 'Partially Supports': 1, 'Does Not Support': 1, 'Not Applicable': 0, 'Not Evaluated': expect.any(Number) });
  });

  it('escapes what the site put in it', () => {
    const hostile = acrDocument(
      { scanId: 'scn_x', siteUrl: 'https://e.com/', standard: 'WCAG2AA', engine: 'jsdom', finishedAt: null, versions: { pactum: '3.4.0', axeCore: '4.14.1', chromium: null } },
      { pages: [page('https://e.com/"><script>alert(1)</script>', [], { error: '<img src=x onerror=alert(1)>' })], covered, now: '2026-12-07T12:00:00.000Z' },
    );
    const html = acrHtml(hostile);
    expect(html).not.toMatch(/<script|<img/);
    expect(html).toContain('&lt;script&gt;');
  });
});
