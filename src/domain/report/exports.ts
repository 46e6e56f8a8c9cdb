/**
 * The report model written for pipelines: SARIF 2.1.0 (code-scanning views), JUnit XML (CI test
 * dashboards) and CSV (spreadsheets). Each is written from the same ReportView as the report
 * view, built with every issue listed. Pure: the compute pool runs them.
 */
import { createHash } from 'node:crypto';
import { VERSION } from '../../version.js';
import type { ReportView, ReportViewIssue, ReportViewRule } from './view-model.js';

export type ExportFormat = 'sarif' | 'junit' | 'csv';

export const EXPORT_TYPES: Record<ExportFormat, string> = {
  sarif: 'application/sarif+json',
  junit: 'application/xml; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

export function exportReport(view: ReportView, format: ExportFormat): string {
  switch (format) {
    case 'sarif': return JSON.stringify(toSarif(view), null, 2);
    case 'junit': return toJunit(view);
    case 'csv': return toCsv(view);
  }
}

// ---------------------------------------------------------------------------------------------
// SARIF 2.1.0

const SARIF_LEVEL = { error: 'error', warning: 'warning', notice: 'note' } as const;

const ruleTags = (rule: ReportViewRule) => [
  'accessibility',
  ...rule.wcagCriteria.map((c) => `wcag${c}`),
  ...(rule.level ? [`wcag-level-${rule.level.toLowerCase()}`] : []),
  ...(rule.impact ? [`impact-${rule.impact}`] : []),
];

/** A stable fingerprint of one finding across scans: the page, the rule and the element. */
const fingerprint = (rule: ReportViewRule, issue: ReportViewIssue) => createHash('sha256').update(`${issue.pageUrl}\0${rule.code}\0${issue.selector}`).digest('hex').slice(0, 32);

export function toSarif(view: ReportView) {
  const rules = view.rules.map((rule) => ({
    id: rule.code,
    name: rule.code,
    shortDescription: { text: rule.help },
    helpUri: rule.helpUrl,
    help: { text: `${rule.help}. See ${rule.helpUrl}`, markdown: `${rule.help}. [Learn more](${rule.helpUrl})` },
    defaultConfiguration: { level: SARIF_LEVEL[rule.type] },
    properties: { tags: ruleTags(rule), wcagCriteria: rule.wcagCriteria, wcagLevel: rule.level, impact: rule.impact, 'problem.severity': SARIF_LEVEL[rule.type] === 'note' ? 'recommendation' : SARIF_LEVEL[rule.type] },
  }));
  const results = view.rules.flatMap((rule, ruleIndex) =>
    rule.issues.map((issue) => ({
      ruleId: rule.code,
      ruleIndex,
      level: SARIF_LEVEL[rule.type],
      message: { text: issue.message },
      locations: [{
        physicalLocation: { artifactLocation: { uri: issue.pageUrl }, region: { snippet: { text: issue.context } } },
        logicalLocations: [{ fullyQualifiedName: issue.selector, kind: 'element' }],
      }],
      partialFingerprints: { 'pactumElement/v1': fingerprint(rule, issue) },
      properties: {
        impact: issue.impact, wcagCriterion: issue.wcagCriterion,
        ...(issue.contrast ? { contrast: issue.contrast } : {}),
        ...(issue.evidence ? { evidence: issue.evidence } : {}),
      },
    })),
  );
  const failed = view.pages.filter((p) => p.error);
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0' as const,
    runs: [{
      tool: { driver: { name: 'pactum', semanticVersion: VERSION, rules } },
      automationDetails: { id: `pactum/${view.scanId}` },
      invocations: [{
        executionSuccessful: failed.length === 0,
        ...(view.finishedAt ? { endTimeUtc: view.finishedAt } : {}),
        toolExecutionNotifications: failed.map((p) => ({
          level: 'error', message: { text: p.error! }, locations: [{ physicalLocation: { artifactLocation: { uri: p.url } } }],
        })),
      }],
      results,
      properties: {
        scanId: view.scanId, siteUrl: view.siteUrl, standard: view.standard, engine: view.engine,
        notEvaluated: view.summary.notEvaluated,
      },
    }],
  };
}

// ---------------------------------------------------------------------------------------------
// JUnit XML

/** XML 1.0 text: the five escapes, and characters XML cannot hold at all dropped. */
// eslint-disable-next-line no-control-regex
const xmlText = (s: string) => s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const attr = (name: string, value: string | number) => `${name}="${xmlText(String(value))}"`;

/** One suite per page, one case per page and rule: errors fail it, warnings pass with their text, rules not evaluated are skipped. */
export function toJunit(view: ReportView): string {
  const byPage = new Map<string, { rule: ReportViewRule; issues: ReportViewIssue[] }[]>();
  for (const rule of view.rules) {
    const perPage = new Map<string, ReportViewIssue[]>();
    for (const issue of rule.issues) perPage.set(issue.pageUrl, [...(perPage.get(issue.pageUrl) ?? []), issue]);
    for (const [url, issues] of perPage) byPage.set(url, [...(byPage.get(url) ?? []), { rule, issues }]);
  }
  let total = 0, failures = 0, errors = 0, skipped = 0;
  const suites = view.pages.map((page) => {
    const cases: string[] = [];
    let f = 0, e = 0, s = 0;
    const name = (code: string, criteria: readonly string[]) => `${code}${criteria.length ? ` (WCAG ${criteria.join(', ')})` : ''}`;
    if (page.error) {
      e++;
      cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', 'page could be checked')}>\n      <error ${attr('message', page.error)} type="page-error">${xmlText(page.error)}</error>\n    </testcase>`);
    }
    for (const { rule, issues } of byPage.get(page.url) ?? []) {
      const lines = issues.map((i) => `${i.selector}: ${i.message}`).join('\n');
      if (rule.type === 'error') {
        f++;
        cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', name(rule.code, rule.wcagCriteria))}>\n      <failure ${attr('message', `${issues.length} issue${issues.length === 1 ? '' : 's'}: ${rule.help}`)} ${attr('type', rule.impact ?? 'error')}>${xmlText(lines)}</failure>\n    </testcase>`);
      } else {
        cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', name(rule.code, rule.wcagCriteria))}>\n      <system-out>${xmlText(`needs review (${rule.type}):\n${lines}`)}</system-out>\n    </testcase>`);
      }
    }
    for (const ne of page.notEvaluated) {
      s++;
      cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', name(ne.code, ne.wcagCriteria))}>\n      <skipped ${attr('message', `not evaluated: ${ne.reason}${ne.detail ? ` (${ne.detail})` : ''}`)}/>\n    </testcase>`);
    }
    if (cases.length === 0) cases.push(`    <testcase ${attr('classname', page.url)} ${attr('name', 'no issues found')}/>`);
    total += cases.length; failures += f; errors += e; skipped += s;
    return `  <testsuite ${attr('name', page.url)} ${attr('tests', cases.length)} ${attr('failures', f)} ${attr('errors', e)} ${attr('skipped', s)}${view.finishedAt ? ` ${attr('timestamp', view.finishedAt.replace(/Z$/, ''))}` : ''}>\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ${attr('name', `pactum ${view.standard} ${view.siteUrl}`)} ${attr('tests', total)} ${attr('failures', failures)} ${attr('errors', errors)} ${attr('skipped', skipped)}>\n${suites.join('\n')}\n</testsuites>\n`;
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

export function toCsv(view: ReportView): string {
  const rows: (string | number | null)[][] = [[...CSV_COLUMNS]];
  for (const rule of view.rules) {
    for (const i of rule.issues) {
      rows.push([i.pageUrl, rule.code, rule.type, i.impact, rule.wcagCriteria.join(' '), rule.level, i.selector, i.message, i.context, i.helpUrl, i.contrast?.ratio ?? null, i.contrast?.required ?? null]);
    }
  }
  for (const page of view.pages) if (page.error) rows.push([page.url, 'page-error', 'page-error', null, '', null, '', page.error, '', '', null, null]);
  return rows.map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}
