/**
 * A finished scan written for pipelines: SARIF 2.1.0 (code-scanning views: GitHub's), JUnit XML
 * (CI test dashboards), CSV (spreadsheets) and pa11y-ci's JSON (GitLab's merge-request
 * accessibility widget). Each is written a few pages at a time, in the pages' stored
 * order, so that no part of the server ever holds a whole export: a head, then the text of each
 * run of pages, then a tail. What has to be known across pages travels in an ExportState (the
 * rules met so far, a few counts), small whatever the report's size. Pure: the compute pool runs
 * the pages' part (exportPages); the head and tail are small and written where they are needed.
 *
 * SARIF lists its results first and its rules after them: a rule's index is its order of first
 * appearance, and its impact (the strongest of its issues') is only known once every page is
 * read. JUnit's top-level totals come first in the document, so JUnit takes a counting pass over
 * the pages before the writing one; that pass also settles each rule's impact and help text,
 * which its failures carry.
 */
import { VERSION } from '../../ground/version.js';
import type { PageReport, ReportSummary } from '../scan/types.js';
import { pagePrints } from './fingerprint.js';
import { isDismissedAsNoFailure, statusOf, toFindingMark, type FindingMark, type FindingStatus, type MarkIndex } from './marks.js';
import { artifactUri, type SourceMapping } from './locations.js';
import { criterionOf, ruleOf, strongerImpact, viewIssue, type ReportView, type ReportViewIssue, type ViewPartRule } from './view-model.js';

export type ExportFormat = 'sarif' | 'junit' | 'csv' | 'pa11y';

export const EXPORT_TYPES: Record<ExportFormat, string> = {
  sarif: 'application/sarif+json',
  junit: 'application/xml; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  pa11y: 'application/json',
};

/** The file name extension of each export, in its path (/reports/{scanId}.<extension>). */
export const EXPORT_EXTENSIONS: Record<ExportFormat, string> = { sarif: 'sarif', junit: 'junit.xml', csv: 'csv', pa11y: 'pa11y.json' };

/** How one export is written, as its request asked. */
export interface ExportOptions {
  /** SARIF: URL prefixes mapped to repository directories (artifact locations become repository paths). */
  sourceMap: readonly SourceMapping[];
  /** SARIF: results written at most (GitHub code scanning refuses a run with more); the rest are counted, not listed. */
  sarifMaxResults: number;
  /** Reviewers' marks of the scan's findings, by fingerprint, as of `now` (an accepted mark holds until its expiry). */
  marks: MarkIndex;
  now: string;
  /** List the findings people decided are not failures (false positives, needs-review items passed), with their marks. */
  includeFalsePositives: boolean;
}

/** GitHub code scanning's limit of results per run (more, and the whole upload is refused). */
export const GITHUB_MAX_RESULTS = 25_000;

const defaultOptions = (): ExportOptions => ({ sourceMap: [], sarifMaxResults: GITHUB_MAX_RESULTS, marks: {}, now: '', includeFalsePositives: false });

/** An issue with its fingerprint and where reviewers' marks put it. */
type MarkedIssue = PageReport['issues'][number] & { fingerprint: string; status: FindingStatus; mark: FindingMark | null };

type MarkedPage = Omit<PageReport, 'issues'> & { issues: MarkedIssue[] };

/** The page's issues an export lists, each with its fingerprint and mark: those decided not to be failures only when asked. */
function marked(page: PageReport, options: ExportOptions): MarkedPage {
  const prints = pagePrints(page);
  const issues: MarkedIssue[] = [];
  page.issues.forEach((issue, i) => {
    const fingerprint = prints[i]!;
    const m = options.marks[fingerprint];
    const status = statusOf(m, issue.type, options.now);
    if (isDismissedAsNoFailure(status) && !options.includeFalsePositives) return;
    issues.push({ ...issue, fingerprint, status, mark: m ? toFindingMark(m, options.now) : null });
  });
  return { ...page, issues };
}

/** A mark's reason, or a review's note: what CSV and SARIF say of a marked finding. */
const markNote = (issue: MarkedIssue): string | null => issue.mark?.reason ?? issue.mark?.review?.note ?? null;

/** SARIF's suppression of a finding a person set aside: accepted (until its expiry), or a listed false positive or passed review. */
function suppressionsOf(issue: MarkedIssue): object[] | undefined {
  const why: Partial<Record<FindingStatus, string>> = {
    accepted: `Accepted until ${issue.mark?.expiresAt ?? '?'}: ${issue.mark?.reason ?? ''}`,
    false_positive: `False positive: ${issue.mark?.reason ?? ''}`,
    review_passed: `Passed review: ${issue.mark?.review?.note ?? ''}`,
  };
  const justification = why[issue.status];
  return justification ? [{ kind: 'external', status: 'accepted', justification }] : undefined;
}

/** The scan's facts an export states beside its pages. */
export interface ExportMeta extends Pick<ReportView, 'scanId' | 'siteUrl' | 'standard' | 'engine' | 'finishedAt'> {
  notEvaluated: ReportSummary['notEvaluated'];
}

/** A rule as first met (its issues' list stays empty here). */
export type ExportRule = Omit<ViewPartRule, 'issues' | 'count' | 'pages'>;

/** What carries over from one run of pages to the next. */
export interface ExportState {
  /** The rules met so far, in order of first appearance (SARIF's ruleIndex is the position). */
  rules: ExportRule[];
  /** Results (SARIF) written so far. */
  written: number;
  /** JUnit's totals, from its counting pass. */
  totals: { tests: number; failures: number; errors: number; skipped: number };
  /** SARIF: results left out past sarifMaxResults. pa11y: pages written, pages without errors, entries written. */
  omitted: number;
  pages: { seen: number; passing: number; entries: number };
  options: ExportOptions;
}

export const newExportState = (options: Partial<ExportOptions> = {}): ExportState => ({
  rules: [], written: 0, totals: { tests: 0, failures: 0, errors: 0, skipped: 0 }, omitted: 0, pages: { seen: 0, passing: 0, entries: 0 }, options: { ...defaultOptions(), ...options },
});

/** A page that could not be checked. */
export interface FailedPage {
  url: string;
  error: string;
}

/**
 * JUnit's counting pass over pages (its totals and its rules), or any format's writing pass: the
 * text of these pages, in pieces of about CHUNK_CHARS. `state` is updated in place.
 */
export type ExportPass = 'count' | 'write';

const CHUNK_CHARS = 64 * 1024;

/** Text gathered into pieces of about CHUNK_CHARS, so that a large page's text is written (and let go of) a piece at a time. */
class Chunks {
  readonly done: string[] = [];
  private current = '';
  add(text: string) {
    this.current += text;
    if (this.current.length >= CHUNK_CHARS) {
      this.done.push(this.current);
      this.current = '';
    }
  }
  end(): string[] {
    if (this.current) this.done.push(this.current);
    this.current = '';
    return this.done;
  }
}

/** The rule of `issue` in `state`, added (and indexed) on first appearance; its impact the strongest seen. */
function ruleIn(state: ExportState, index: Map<string, number>, issue: PageReport['issues'][number]): { rule: ExportRule; at: number } {
  const key = `${issue.code}|${issue.type}`;
  let at = index.get(key);
  if (at === undefined) {
    const { issues: _i, count: _c, pages: _p, ...rule } = ruleOf(issue);
    at = state.rules.push(rule) - 1;
    index.set(key, at);
  }
  const rule = state.rules[at]!;
  rule.impact = strongerImpact(rule.impact, issue.impact);
  return { rule, at };
}

const indexOf = (state: ExportState) => new Map(state.rules.map((r, i) => [r.key, i]));

export function exportHead(format: ExportFormat, meta: ExportMeta, state: ExportState): string {
  switch (format) {
    case 'sarif': return sarifHead(meta);
    case 'junit': return junitHead(meta, state);
    case 'csv': return `${CSV_COLUMNS.join(',')}\r\n`;
    case 'pa11y': return '{"results":{\n';
  }
}

export function exportPages(format: ExportFormat, pass: ExportPass, all: readonly PageReport[], state: ExportState, meta: Pick<ExportMeta, 'finishedAt'>): string[] {
  const pages = all.map((page) => marked(page, state.options));
  if (pass === 'count') {
    if (format === 'junit') junitCount(pages, state);
    return [];
  }
  const out = new Chunks();
  switch (format) {
    case 'sarif': sarifPages(pages, state, out); break;
    case 'junit': junitPages(pages, state, meta.finishedAt, out); break;
    case 'csv': csvPages(pages, state, out); break;
    case 'pa11y': pa11yPages(pages, state, out); break;
  }
  return out.end();
}

export function exportTail(format: ExportFormat, meta: ExportMeta, state: ExportState, failed: readonly FailedPage[]): string {
  switch (format) {
    case 'sarif': return sarifTail(meta, state, failed);
    case 'junit': return '</testsuites>\n';
    case 'csv': return failed.map((page) => csvRow([page.url, 'page-error', 'page-error', null, '', null, '', page.error, '', '', null, null, '', '', null])).join('');
    case 'pa11y': return pa11yTail(state);
  }
}

/** A whole export in one string, from pages at hand (tests; small reports). */
export function exportReport(format: ExportFormat, meta: ExportMeta, pages: readonly PageReport[], options: Partial<ExportOptions> = {}): string {
  const state = newExportState(options);
  exportPages(format, 'count', pages, state, meta);
  const failed = pages.filter((p) => p.error).map((p) => ({ url: p.url, error: p.error! }));
  return exportHead(format, meta, state) + exportPages(format, 'write', pages, state, meta).join('') + exportTail(format, meta, state, failed);
}

// ---------------------------------------------------------------------------------------------
// SARIF 2.1.0

//
// Written for GitHub code scanning's reader as well as the OASIS schema ("SARIF support for code
// scanning"): relative artifact URIs (locations.ts), a region with its four positions (a page's
// element has no line in a source file: line 1, its markup in the location's message),
// partialFingerprints with primaryLocationLineHash (the one GitHub reads), rules with
// shortDescription, fullDescription and help text, names and descriptions within GitHub's
// lengths, at most 20 tags a rule and at most 25,000 results a run (sarifMaxResults).

const SARIF_LEVEL = { error: 'error', warning: 'warning', notice: 'note' } as const;
const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';
/** Where the tool is described (the driver's informationUri). */
export const INFORMATION_URI = 'https://github.com/pactum-dev/pactum';

/** GitHub's lengths: a rule's name at most 255 characters, its descriptions at most 1024; tags beyond 20 refuse the upload. */
const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const MAX_TAGS = 20;

const ruleTags = (rule: ExportRule) => [
  'accessibility',
  ...rule.wcagCriteria.map((c) => `wcag${c}`),
  ...(rule.level ? [`wcag-level-${rule.level.toLowerCase()}`] : []),
  ...(rule.impact ? [`impact-${rule.impact}`] : []),
].slice(0, MAX_TAGS);


/** The region of a page's finding: line 1 (GitHub wants all four positions; a page's element has no line in a source file). */
const PAGE_REGION = { startLine: 1, startColumn: 1, endLine: 1, endColumn: 1 };

/** The base every artifact URI is relative to: the repository the file is uploaded for. */
const URI_BASE = '%SRCROOT%';

function sarifHead(meta: ExportMeta): string {
  const bases = { [URI_BASE]: { description: { text: 'The root of the repository: a page mapped to its source (a source mapping) is a path in it; any other page is host/path' } } };
  return `{"$schema":${JSON.stringify(SARIF_SCHEMA)},"version":"2.1.0","runs":[{\n"automationDetails":${JSON.stringify({ id: `pactum/${meta.scanId}` })},\n"originalUriBaseIds":${JSON.stringify(bases)},\n"results":[\n`;
}

function sarifPages(pages: readonly (MarkedPage)[], state: ExportState, out: Chunks) {
  const index = indexOf(state);
  for (const page of pages) {
    const uri = artifactUri(page.url, state.options.sourceMap);
    page.issues.forEach((issue, i) => {
      const { rule, at } = ruleIn(state, index, issue);
      if (state.written >= state.options.sarifMaxResults) {
        state.omitted++;
        return;
      }
      const shown = viewIssue(issue, page.url, `i${i}`);
      // The finding's fingerprint (fingerprint.ts): GitHub then keeps an alert open across scans as pactum keeps a mark.
      const hash = issue.fingerprint;
      const suppressions = suppressionsOf(issue);
      const result = {
        ruleId: rule.code,
        ruleIndex: at,
        level: SARIF_LEVEL[rule.type],
        message: { text: `${shown.message} Page: ${shown.pageUrl}` },
        locations: [{
          physicalLocation: { artifactLocation: { uri, uriBaseId: URI_BASE }, region: PAGE_REGION },
          logicalLocations: [{ fullyQualifiedName: shown.selector, kind: 'element' }],
          message: { text: `The element ${shown.selector} of ${shown.pageUrl}: ${shown.context}` },
        }],
        partialFingerprints: { primaryLocationLineHash: `${hash.slice(0, 16)}:1`, 'pactumFinding/v1': hash },
        properties: {
          pageUrl: shown.pageUrl, selector: shown.selector, context: shown.context, impact: shown.impact, wcagCriterion: criterionOf(issue),
          ...(shown.contrast ? { contrast: shown.contrast } : {}),
          ...(shown.evidence ? { evidence: shown.evidence } : {}),
          findingStatus: issue.status,
          ...(issue.mark ? { mark: issue.mark } : {}),
        },
        ...(suppressions ? { suppressions } : {}),
      };
      out.add(`${state.written++ > 0 ? ',\n' : ''}${JSON.stringify(result)}`);
    });
  }
}

function sarifTail(meta: ExportMeta, state: ExportState, failed: readonly FailedPage[]): string {
  const rules = state.rules.map((rule) => JSON.stringify({
    id: rule.code,
    name: clip(rule.code, 255),
    shortDescription: { text: clip(rule.help, 1024) },
    fullDescription: { text: clip(`${rule.help}${rule.wcagCriteria.length ? ` (WCAG ${rule.wcagCriteria.join(', ')}${rule.level ? `, level ${rule.level}` : ''})` : ''}. See ${rule.helpUrl}`, 1024) },
    helpUri: rule.helpUrl,
    help: { text: `${rule.help}. See ${rule.helpUrl}`, markdown: `${rule.help}. [Learn more](${rule.helpUrl})` },
    defaultConfiguration: { level: SARIF_LEVEL[rule.type] },
    properties: { tags: ruleTags(rule), precision: rule.type === 'error' ? 'high' : 'medium', wcagCriteria: rule.wcagCriteria, wcagLevel: rule.level, impact: rule.impact, 'problem.severity': SARIF_LEVEL[rule.type] === 'note' ? 'recommendation' : SARIF_LEVEL[rule.type] },
  }));
  const omitted = state.omitted
    ? [{ level: 'warning', message: { text: `${state.omitted} more results were left out: a run lists at most ${state.options.sarifMaxResults} (GitHub code scanning refuses more); the CSV and pa11y exports list every issue` } }]
    : [];
  const invocation = {
    executionSuccessful: failed.length === 0,
    ...(meta.finishedAt ? { endTimeUtc: meta.finishedAt } : {}),
    toolExecutionNotifications: [
      ...failed.map((p) => ({
        level: 'error', message: { text: `${p.error} Page: ${p.url}` }, locations: [{ physicalLocation: { artifactLocation: { uri: artifactUri(p.url, state.options.sourceMap), uriBaseId: URI_BASE } } }],
      })),
      ...omitted,
    ],
  };
  const properties = { scanId: meta.scanId, siteUrl: meta.siteUrl, standard: meta.standard, engine: meta.engine, notEvaluated: meta.notEvaluated, resultsOmitted: state.omitted, sourceMap: state.options.sourceMap };
  const driver = `{"name":"pactum","version":${JSON.stringify(VERSION)},"semanticVersion":${JSON.stringify(VERSION)},"informationUri":${JSON.stringify(INFORMATION_URI)},"rules":[${rules.length ? `\n${rules.join(',\n')}\n` : ''}]}`;
  return `${state.written > 0 ? '\n' : ''}],\n"tool":{"driver":${driver}},\n"invocations":[${JSON.stringify(invocation)}],\n"properties":${JSON.stringify(properties)}\n}]}\n`;
}

// ---------------------------------------------------------------------------------------------
// JUnit XML

/** XML 1.0 text: the five escapes, and characters XML cannot hold at all dropped. */
// eslint-disable-next-line no-control-regex
const xmlText = (s: string) => s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const attr = (name: string, value: string | number) => `${name}="${xmlText(String(value))}"`;
const caseName = (code: string, criteria: readonly string[]) => `${code}${criteria.length ? ` (WCAG ${criteria.join(', ')})` : ''}`;

/** A page's issues by rule (the rules as `state` knows them), in order of first appearance on the page. */
function byRule(page: PageReport, state: ExportState, index: Map<string, number>): Map<ExportRule, ReportViewIssue[]> {
  const groups = new Map<ExportRule, ReportViewIssue[]>();
  page.issues.forEach((issue, i) => {
    const { rule } = ruleIn(state, index, issue);
    const list = groups.get(rule) ?? [];
    if (!list.length) groups.set(rule, list);
    list.push(viewIssue(issue, page.url, `i${i}`));
  });
  return groups;
}

/** The counting pass: one suite per page, one case per page and rule, a case for a page error and each rule not evaluated. */
function junitCount(pages: readonly PageReport[], state: ExportState) {
  const index = indexOf(state);
  const t = state.totals;
  for (const page of pages) {
    const rules = [...byRule(page, state, index).keys()];
    const cases = (page.error ? 1 : 0) + rules.length + (page.notEvaluated?.length ?? 0);
    t.tests += Math.max(1, cases);
    t.failures += rules.filter((r) => r.type === 'error').length;
    t.errors += page.error ? 1 : 0;
    t.skipped += page.notEvaluated?.length ?? 0;
  }
}

function junitHead(meta: ExportMeta, state: ExportState): string {
  const t = state.totals;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ${attr('name', `pactum ${meta.standard} ${meta.siteUrl}`)} ${attr('tests', t.tests)} ${attr('failures', t.failures)} ${attr('errors', t.errors)} ${attr('skipped', t.skipped)}>\n`;
}

/** One suite per page: errors fail a rule's case, warnings pass with their text, rules not evaluated are skipped. */
function junitPages(pages: readonly PageReport[], state: ExportState, finishedAt: string | null, out: Chunks) {
  const index = indexOf(state);
  for (const page of pages) {
    const cases: string[] = [];
    let f = 0, e = 0, s = 0;
    if (page.error) {
      e++;
      cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', 'page could be checked')}>\n      <error ${attr('message', page.error)} type="page-error">${xmlText(page.error)}</error>\n    </testcase>`);
    }
    for (const [rule, issues] of byRule(page, state, index)) {
      const lines = issues.map((i) => `${i.selector}: ${i.message}`).join('\n');
      if (rule.type === 'error') {
        f++;
        cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', caseName(rule.code, rule.wcagCriteria))}>\n      <failure ${attr('message', `${issues.length} issue${issues.length === 1 ? '' : 's'}: ${rule.help}`)} ${attr('type', rule.impact ?? 'error')}>${xmlText(lines)}</failure>\n    </testcase>`);
      } else {
        cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', caseName(rule.code, rule.wcagCriteria))}>\n      <system-out>${xmlText(`needs review (${rule.type}):\n${lines}`)}</system-out>\n    </testcase>`);
      }
    }
    for (const ne of page.notEvaluated ?? []) {
      s++;
      cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', caseName(ne.code, ne.wcagCriteria))}>\n      <skipped ${attr('message', `not evaluated: ${ne.reason}${ne.detail ? ` (${ne.detail})` : ''}`)}/>\n    </testcase>`);
    }
    if (cases.length === 0) cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', 'no issues found')}/>`);
    out.add(`  <testsuite ${attr('name', page.url)} ${attr('tests', cases.length)} ${attr('failures', f)} ${attr('errors', e)} ${attr('skipped', s)}${finishedAt ? ` ${attr('timestamp', finishedAt.replace(/Z$/, ''))}` : ''}>\n`);
    for (const c of cases) out.add(`${c}\n`);
    out.add('  </testsuite>\n');
  }
}

// ---------------------------------------------------------------------------------------------
// CSV (RFC 4180)

export const CSV_COLUMNS = ['page_url', 'rule', 'type', 'impact', 'wcag_criteria', 'level', 'selector', 'message', 'context', 'help_url', 'contrast_ratio', 'required_ratio', 'fingerprint', 'status', 'mark_note'] as const;

/**
 * One field: a spreadsheet would run a leading =, +, -, @, tab or carriage return as a formula
 * (CSV injection), so such a field gets a leading apostrophe; then RFC 4180 quoting.
 */
export function csvField(value: string | number | null | undefined): string {
  let s = value === null || value === undefined ? '' : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const csvRow = (fields: (string | number | null)[]) => `${fields.map(csvField).join(',')}\r\n`;

/** One row per issue, its rule's columns as the rule was first met; pages that could not be checked follow every issue (exportTail). */
function csvPages(pages: readonly (MarkedPage)[], state: ExportState, out: Chunks) {
  const index = indexOf(state);
  for (const page of pages) {
    page.issues.forEach((issue, n) => {
      const { rule } = ruleIn(state, index, issue);
      const i = viewIssue(issue, page.url, `i${n}`);
      out.add(csvRow([i.pageUrl, rule.code, rule.type, i.impact, rule.wcagCriteria.join(' '), rule.level, i.selector, i.message, i.context, i.helpUrl, i.contrast?.ratio ?? null, i.contrast?.required ?? null, issue.fingerprint, issue.status, markNote(issue)]));
    });
  }
}

// ---------------------------------------------------------------------------------------------
// pa11y-ci JSON: what GitLab reads as a merge request's accessibility report
// (artifacts:reports:accessibility). `results` maps each page's URL to its entries; GitLab counts
// every entry as an error (and compares entries between pipelines), so, as pa11y-ci does by
// default, only errors are listed: warnings and notices need a person's review, which the
// report page, SARIF and CSV carry. A page that could not be checked is one entry saying why.
// The totals follow the results (JSON's key order means nothing to a reader): `total` pages,
// `passes` pages without an entry, `errors` entries.

const PA11Y_TYPE_CODE = { error: 1, warning: 2, notice: 3 } as const;

function pa11yEntries(page: PageReport, state: ExportState, index: Map<string, number>): object[] {
  const entries: object[] = [];
  if (page.error) {
    entries.push({ code: 'pactum.page-error', type: 'error', typeCode: 1, message: page.error, context: '', selector: '', runner: 'pactum', runnerExtras: {} });
  }
  page.issues.forEach((issue, i) => {
    const { rule } = ruleIn(state, index, issue);
    if (rule.type !== 'error') return;
    const shown = viewIssue(issue, page.url, `i${i}`);
    entries.push({
      code: rule.code, type: rule.type, typeCode: PA11Y_TYPE_CODE[rule.type], message: shown.message, context: shown.context, selector: shown.selector,
      runner: rule.code.startsWith('pactum-') ? 'pactum' : 'axe',
      runnerExtras: { impact: shown.impact, help: rule.help, helpUrl: rule.helpUrl, wcagCriteria: rule.wcagCriteria },
    });
  });
  return entries;
}

function pa11yPages(pages: readonly PageReport[], state: ExportState, out: Chunks) {
  const index = indexOf(state);
  for (const page of pages) {
    const entries = pa11yEntries(page, state, index);
    out.add(`${state.pages.seen++ > 0 ? ',\n' : ''}${JSON.stringify(page.url)}:[`);
    entries.forEach((e, i) => out.add(`${i ? ',\n' : '\n'}${JSON.stringify(e)}`));
    out.add(']');
    state.pages.entries += entries.length;
    if (!entries.length) state.pages.passing++;
  }
}

const pa11yTail = (state: ExportState) => `${state.pages.seen ? '\n' : ''}},\n"total":${state.pages.seen},"passes":${state.pages.passing},"errors":${state.pages.entries}}\n`;
