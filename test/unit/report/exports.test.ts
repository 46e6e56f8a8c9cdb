/** The report model and the exports written from it, on reports made up to hold the awkward cases. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import Ajv04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { JSDOM } from 'jsdom';
import { buildReportView, contrastOf } from '../../../src/domain/report/view-model.js';
import { csvField, exportHead, exportPages, exportReport, exportTail, newExportState, type ExportFormat, type ExportMeta } from '../../../src/domain/report/exports.js';
import type { Issue, PageReport } from '../../../src/domain/scan/types.js';
import { parseCsv } from '../../helpers/csv.js';
import { fingerprintsOf } from '../../../src/domain/report/fingerprint.js';

const issue = (over: Partial<Issue>): Issue => ({
  code: 'image-alt', wcagCriterion: '1.1.1', wcagCriteria: ['1.1.1'], type: 'error', impact: 'critical', message: 'Images must have alternative text: no alt, at img', selector: 'img', context: '<img src="a.png">', helpUrl: 'https://dequeuniversity.com/rules/axe/4.14/image-alt', ...over,
});
const CONTRAST = 'Elements must meet minimum color contrast ratio thresholds: element has insufficient color contrast of 1.91 (foreground color: #bbbbbb, background color: #ffffff, font size: 12.0pt (16px), font weight: normal); expected contrast ratio of 4.5:1, at .faint (<p class="faint">x</p>); see https://dequeuniversity.com/rules/axe/4.14/color-contrast';

const pages: PageReport[] = [
  { url: 'https://example.com/', title: 'Home', issueCount: 1, issues: [issue({ type: 'warning', code: 'pactum-link-purpose', wcagCriterion: '2.4.4', wcagCriteria: ['2.4.4'], impact: 'moderate', message: 'Needs review: Links must lead: x' })], notEvaluated: [{ code: 'target-size', wcagCriteria: ['2.5.8'], reason: 'needs a browser' }] },
  { url: 'https://example.com/bad', title: null, issueCount: 0, issues: [], error: 'https://example.com/bad answered HTTP 500', notEvaluated: [] },
  {
    url: 'https://example.com/a,"b"', title: 'A', issueCount: 4, notEvaluated: [],
    issues: [
      issue({ code: 'color-contrast', wcagCriterion: '1.4.3', wcagCriteria: ['1.4.3'], impact: 'serious', message: CONTRAST, selector: '.faint', context: '<p class="faint">x</p>', screenshot: 'a'.repeat(32) }),
      issue({ selector: '=HYPERLINK("http://evil")', context: '<img alt="">\u0001\r\n"quoted", line' }),
      issue({ selector: 'img:nth-child(2)' }),
      issue({ selector: '+cmd|x' }),
    ],
  },
];
const summary = { pagesScanned: 3, pagesFailed: 1, totalIssues: 5, byLevel: { error: 4, warning: 1, notice: 0 }, byCriterion: {}, notEvaluated: [{ code: 'target-size', wcagCriteria: ['2.5.8'], reason: 'needs a browser' as const, pages: 1 }] };
const scan = { scanId: 'scn_1', siteUrl: 'https://example.com/', standard: 'WCAG2AA' as const, status: 'completed_with_errors' as const, engine: 'jsdom' as const, finishedAt: '2026-11-26T10:00:00.000Z' };
const view = (maxIssues = 100) => buildReportView({ scan, summary, pages, brandScore: null, maxIssues });
const meta: ExportMeta = { scanId: scan.scanId, siteUrl: scan.siteUrl, standard: scan.standard, engine: scan.engine, finishedAt: scan.finishedAt, notEvaluated: summary.notEvaluated };
const toSarif = () => JSON.parse(exportReport('sarif', meta, pages)) as { runs: { tool: { driver: { rules: { id: string; properties: { impact: string | null } }[] } }; results: { ruleId: string; ruleIndex: number; level: string; message: { text: string }; properties: { pageUrl: string }; locations: { physicalLocation: { artifactLocation: { uri: string } }; logicalLocations: { fullyQualifiedName: string }[] }[] }[]; invocations: { toolExecutionNotifications: unknown[] }[] }[] };
const toJunit = () => exportReport('junit', meta, pages);
const toCsv = () => exportReport('csv', meta, pages);

/** An export written a page at a time, each page's state passed on as the compute pool passes it (a structured clone). */
function inRuns(format: ExportFormat): string {
  let state = newExportState();
  for (const page of pages) {
    exportPages(format, 'count', [page], state, meta);
    state = structuredClone(state);
  }
  let text = '';
  const writing = structuredClone(state);
  text += exportHead(format, meta, writing);
  let carried = writing;
  for (const page of pages) {
    text += exportPages(format, 'write', [page], carried, meta).join('');
    carried = structuredClone(carried);
  }
  return text + exportTail(format, meta, carried, pages.filter((p) => p.error).map((p) => ({ url: p.url, error: p.error! })));
}

describe('the report model', () => {
  it('puts the page that could not be checked first, then most errors; errors before warnings; counts by principle and level', () => {
    const v = view();
    expect(v.pages.map((p) => p.url)).toEqual(['https://example.com/bad', 'https://example.com/a,"b"', 'https://example.com/']);
    expect(v.rules.map((r) => `${r.type}:${r.code}:${r.count}`)).toEqual(['error:image-alt:3', 'error:color-contrast:1', 'warning:pactum-link-purpose:1']);
    expect(v.summary.byPrinciple.map((p) => [p.principle, p.A, p.AA])).toEqual([['1', 3, 1], ['2', 1, 0], ['3', 0, 0], ['4', 0, 0]]);
    expect(v.rules[1]!.issues[0]).toMatchObject({ contrast: { foreground: '#bbbbbb', background: '#ffffff', ratio: 1.91, required: 4.5 }, en301549: '9.1.4.3', screenshot: 'a'.repeat(32) });
    // APCA beside the ratio: #bbb text on white is Lc 36.7 (APCA 0.0.98G-4g), under the draft's 75 for 16px text.
    expect(v.rules[1]!.issues[0]!.contrast!.apca).toEqual({ lc: 36.7, threshold: 75, meets: false, advisory: 'WCAG 3 working draft' });
    expect(contrastOf({ code: 'image-alt', message: CONTRAST })).toBeNull();
  });

  it('lists at most maxIssues issues and keeps the counts whole', () => {
    const v = view(2);
    expect(v.issuesShown).toBe(2);
    expect(v.rules.reduce((n, r) => n + r.issues.length, 0)).toBe(2);
    expect(v.rules.reduce((n, r) => n + r.count, 0)).toBe(5);
  });
});

describe('the exports', () => {
  it('SARIF is valid against the official SARIF 2.1.0 schema', () => {
    const schema = JSON.parse(readFileSync('node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json', 'utf8')) as object;
    const ajv = new Ajv04.default({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    const sarif = toSarif();
    expect(validate(sarif), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    expect(sarif.runs[0]!.invocations[0]!.toolExecutionNotifications).toHaveLength(1);
  });

  it('SARIF lists every issue of the report model once, under its rule, and each rule with its strongest impact', () => {
    const run = toSarif().runs[0]!;
    const rules = run.tool.driver.rules;
    const got = run.results.map((r) => `${rules[r.ruleIndex]!.id}|${r.ruleId}|${r.level}|${r.properties.pageUrl}|${r.locations[0]!.logicalLocations[0]!.fullyQualifiedName}|${r.message.text}`);
    const level = { error: 'error', warning: 'warning', notice: 'note' } as const;
    const expected = view().rules.flatMap((rule) => rule.issues.map((i) => `${rule.code}|${rule.code}|${level[rule.type]}|${i.pageUrl}|${i.selector}|${i.message} Page: ${i.pageUrl}`));
    expect(got.sort()).toEqual(expected.sort());
    expect(Object.fromEntries(rules.map((r) => [r.id, r.properties.impact]))).toEqual(Object.fromEntries(view().rules.map((r) => [r.code, r.impact])));
  });

  it('each format written a page at a time, its state carried between runs, is the same text as written at once', () => {
    for (const format of ['sarif', 'junit', 'csv', 'pa11y'] as const) expect(inRuns(format), format).toBe(exportReport(format, meta, pages));
  });

  it('JUnit XML parses, with control characters dropped and markup escaped', () => {
    const xml = toJunit();
    const doc = new JSDOM(xml, { contentType: 'application/xml' }).window.document;
    expect(doc.querySelector('parsererror')).toBeNull();
    expect(doc.querySelectorAll('testsuite')).toHaveLength(3);
    expect(doc.querySelector('testsuite[name="https://example.com/"] testcase > skipped')?.getAttribute('message')).toBe('not evaluated: needs a browser');
    expect(doc.querySelector('testsuite[name="https://example.com/bad"] error')?.getAttribute('type')).toBe('page-error');
    expect(doc.documentElement.getAttribute('failures')).toBe('2');
  });

  it('SARIF and pa11y JSON carry the EN 301 549 clause and the contrast with its APCA Lc', () => {
    const results = toSarif().runs[0]!.results as unknown as { ruleId: string; properties: { en301549: string | null; contrast?: { apca: { lc: number } } } }[];
    const contrast = results.find((r) => r.ruleId === 'color-contrast')!;
    expect(contrast.properties.en301549).toBe('9.1.4.3');
    expect(contrast.properties.contrast!.apca.lc).toBe(36.7);
    const pa11y = JSON.parse(exportReport('pa11y', meta, pages)) as { results: Record<string, { code: string; runnerExtras: { en301549: string | null; contrast?: unknown } }[]> };
    const entry = Object.values(pa11y.results).flat().find((e) => e.code === 'color-contrast')!;
    expect(entry.runnerExtras.en301549).toBe('9.1.4.3');
    expect(entry.runnerExtras.contrast).toMatchObject({ ratio: 1.91, apca: { threshold: 75 } });
  });

  it('CSV is RFC 4180 and safe from formula injection', () => {
    const rows = parseCsv(toCsv());
    expect(rows).toHaveLength(1 + 5 + 1);
    for (const r of rows) expect(r).toHaveLength(18);
    const evil = rows.find((r) => r[6]!.includes('HYPERLINK'))!;
    expect(evil[6]).toBe(`'=HYPERLINK("http://evil")`);
    expect(evil[8]).toBe('<img alt="">\u0001\r\n"quoted", line');
    expect(rows.find((r) => r[6]!.includes('cmd'))![6]).toBe("'+cmd|x");
    expect(rows.at(-1)!.slice(0, 3)).toEqual(['https://example.com/bad', 'page-error', 'page-error']);
    expect(rows[0]!.slice(12, 15)).toEqual(['en301549', 'apca_lc', 'apca_threshold']);
    const contrast = rows.find((r) => r[1] === 'color-contrast')!;
    expect(contrast.slice(10, 15)).toEqual(['1.91', '4.5', '9.1.4.3', String(contrastOf({ code: 'color-contrast', message: CONTRAST })!.apca!.lc), '75']);
    expect(csvField('-1')).toBe("'-1");
    expect(csvField(-1 as never)).toBe('-1');
  });
});

describe('exports with reviewers\' marks', () => {
  const issue = (code: string, selector: string, context: string) => ({ code, wcagCriterion: '1.1.1', wcagCriteria: ['1.1.1'], type: 'error' as const, impact: 'critical' as const, message: `${code}: at ${selector}`, selector, context, helpUrl: 'https://example.com/help' });
  const pages = [{ url: 'https://example.com/', title: 'Home', issueCount: 2, issues: [issue('image-alt', 'img', '<img src="/a.png">'), issue('image-alt', 'img', '<img src="/b.png">')] }];
  const [fpPrint, acceptedPrint] = fingerprintsOf('https://example.com/', pages[0]!.issues);
  const mark = (fingerprint: string, m: 'false_positive' | 'accepted', expires: string | null) => ({ fingerprint, mark: m, reason: `why ${m}`, expires_at: expires, marked_by: 'usr_a', marked_at: '2026-12-01T00:00:00.000Z', review_outcome: null, review_note: null, reviewed_by: null, reviewed_at: null });
  const marks = { [fpPrint!]: mark(fpPrint!, 'false_positive', null), [acceptedPrint!]: mark(acceptedPrint!, 'accepted', '2027-01-01T00:00:00.000Z') };
  const meta = { scanId: 'scn_x', siteUrl: 'https://example.com/', standard: 'WCAG2AA' as const, engine: 'jsdom' as const, finishedAt: '2026-12-07T00:00:00.000Z', notEvaluated: [] };
  const csv = (now: string, includeFalsePositives = false) => parseCsv(exportReport('csv', meta, pages, { marks, now, includeFalsePositives })).slice(1).map((r) => r[16]);

  it('leaves a false positive out unless asked, keeps an accepted finding until its expiry, then shows it open again', () => {
    expect(csv('2026-12-07T00:00:00.000Z')).toEqual(['accepted']);
    expect(csv('2026-12-07T00:00:00.000Z', true)).toEqual(['false_positive', 'accepted']);
    expect(csv('2027-01-02T00:00:00.000Z')).toEqual(['open']);
    const pa11y = JSON.parse(exportReport('pa11y', meta, pages, { marks, now: '2026-12-07T00:00:00.000Z' })) as { results: Record<string, unknown[]>; errors: number };
    expect(pa11y.errors).toBe(1);
  });
});
