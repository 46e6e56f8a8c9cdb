/**
 * A finished scan written for pipelines: SARIF 2.1.0 (code-scanning views), JUnit XML (CI test
 * dashboards) and CSV (spreadsheets). Each is written a few pages at a time, in the pages' stored
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
import { createHash } from 'node:crypto';
import { VERSION } from '../../ground/version.js';
import type { PageReport, ReportSummary } from '../scan/types.js';
import { criterionOf, ruleOf, strongerImpact, viewIssue, type ReportView, type ReportViewIssue, type ViewPartRule } from './view-model.js';

export type ExportFormat = 'sarif' | 'junit' | 'csv';

export const EXPORT_TYPES: Record<ExportFormat, string> = {
  sarif: 'application/sarif+json',
  junit: 'application/xml; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

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
}

export const newExportState = (): ExportState => ({ rules: [], written: 0, totals: { tests: 0, failures: 0, errors: 0, skipped: 0 } });

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
  }
}

export function exportPages(format: ExportFormat, pass: ExportPass, pages: readonly PageReport[], state: ExportState, meta: Pick<ExportMeta, 'finishedAt'>): string[] {
  if (pass === 'count') {
    if (format === 'junit') junitCount(pages, state);
    return [];
  }
  const out = new Chunks();
  switch (format) {
    case 'sarif': sarifPages(pages, state, out); break;
    case 'junit': junitPages(pages, state, meta.finishedAt, out); break;
    case 'csv': csvPages(pages, state, out); break;
  }
  return out.end();
}

export function exportTail(format: ExportFormat, meta: ExportMeta, state: ExportState, failed: readonly FailedPage[]): string {
  switch (format) {
    case 'sarif': return sarifTail(meta, state, failed);
    case 'junit': return '</testsuites>\n';
    case 'csv': return failed.map((page) => csvRow([page.url, 'page-error', 'page-error', null, '', null, '', page.error, '', '', null, null])).join('');
  }
}

/** A whole export in one string, from pages at hand (tests; small reports). */
export function exportReport(format: ExportFormat, meta: ExportMeta, pages: readonly PageReport[]): string {
  const state = newExportState();
  exportPages(format, 'count', pages, state, meta);
  const failed = pages.filter((p) => p.error).map((p) => ({ url: p.url, error: p.error! }));
  return exportHead(format, meta, state) + exportPages(format, 'write', pages, state, meta).join('') + exportTail(format, meta, state, failed);
}

// ---------------------------------------------------------------------------------------------
// SARIF 2.1.0

const SARIF_LEVEL = { error: 'error', warning: 'warning', notice: 'note' } as const;
const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

const ruleTags = (rule: ExportRule) => [
  'accessibility',
  ...rule.wcagCriteria.map((c) => `wcag${c}`),
  ...(rule.level ? [`wcag-level-${rule.level.toLowerCase()}`] : []),
  ...(rule.impact ? [`impact-${rule.impact}`] : []),
];

/** A stable fingerprint of one finding across scans: the page, the rule and the element. */
const fingerprint = (code: string, issue: Pick<ReportViewIssue, 'pageUrl' | 'selector'>) => createHash('sha256').update(`${issue.pageUrl}\0${code}\0${issue.selector}`).digest('hex').slice(0, 32);

function sarifHead(meta: ExportMeta): string {
  return `{"$schema":${JSON.stringify(SARIF_SCHEMA)},"version":"2.1.0","runs":[{\n"automationDetails":${JSON.stringify({ id: `pactum/${meta.scanId}` })},\n"results":[\n`;
}

function sarifPages(pages: readonly PageReport[], state: ExportState, out: Chunks) {
  const index = indexOf(state);
  for (const page of pages) {
    page.issues.forEach((issue, i) => {
      const { rule, at } = ruleIn(state, index, issue);
      const shown = viewIssue(issue, page.url, `i${i}`);
      const result = {
        ruleId: rule.code,
        ruleIndex: at,
        level: SARIF_LEVEL[rule.type],
        message: { text: shown.message },
        locations: [{
          physicalLocation: { artifactLocation: { uri: shown.pageUrl }, region: { snippet: { text: shown.context } } },
          logicalLocations: [{ fullyQualifiedName: shown.selector, kind: 'element' }],
        }],
        partialFingerprints: { 'pactumElement/v1': fingerprint(rule.code, shown) },
        properties: {
          impact: shown.impact, wcagCriterion: criterionOf(issue),
          ...(shown.contrast ? { contrast: shown.contrast } : {}),
          ...(shown.evidence ? { evidence: shown.evidence } : {}),
        },
      };
      out.add(`${state.written++ > 0 ? ',\n' : ''}${JSON.stringify(result)}`);
    });
  }
}

function sarifTail(meta: ExportMeta, state: ExportState, failed: readonly FailedPage[]): string {
  const rules = state.rules.map((rule) => JSON.stringify({
    id: rule.code,
    name: rule.code,
    shortDescription: { text: rule.help },
    helpUri: rule.helpUrl,
    help: { text: `${rule.help}. See ${rule.helpUrl}`, markdown: `${rule.help}. [Learn more](${rule.helpUrl})` },
    defaultConfiguration: { level: SARIF_LEVEL[rule.type] },
    properties: { tags: ruleTags(rule), wcagCriteria: rule.wcagCriteria, wcagLevel: rule.level, impact: rule.impact, 'problem.severity': SARIF_LEVEL[rule.type] === 'note' ? 'recommendation' : SARIF_LEVEL[rule.type] },
  }));
  const invocation = {
    executionSuccessful: failed.length === 0,
    ...(meta.finishedAt ? { endTimeUtc: meta.finishedAt } : {}),
    toolExecutionNotifications: failed.map((p) => ({
      level: 'error', message: { text: p.error }, locations: [{ physicalLocation: { artifactLocation: { uri: p.url } } }],
    })),
  };
  const properties = { scanId: meta.scanId, siteUrl: meta.siteUrl, standard: meta.standard, engine: meta.engine, notEvaluated: meta.notEvaluated };
  const driver = `{"name":"pactum","semanticVersion":${JSON.stringify(VERSION)},"rules":[${rules.length ? `\n${rules.join(',\n')}\n` : ''}]}`;
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

export const CSV_COLUMNS = ['page_url', 'rule', 'type', 'impact', 'wcag_criteria', 'level', 'selector', 'message', 'context', 'help_url', 'contrast_ratio', 'required_ratio'] as const;

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
function csvPages(pages: readonly PageReport[], state: ExportState, out: Chunks) {
  const index = indexOf(state);
  for (const page of pages) {
    page.issues.forEach((issue, n) => {
      const { rule } = ruleIn(state, index, issue);
      const i = viewIssue(issue, page.url, `i${n}`);
      out.add(csvRow([i.pageUrl, rule.code, rule.type, i.impact, rule.wcagCriteria.join(' '), rule.level, i.selector, i.message, i.context, i.helpUrl, i.contrast?.ratio ?? null, i.contrast?.required ?? null]));
    });
  }
}
