/**
 * The report model the report view draws and the exports are written from: one finished scan,
 * summarised by WCAG principle and level, its pages worst first, its issues grouped by rule with
 * what a person needs to act on each (the element, the criterion and its level, the colours and
 * ratio of a contrast failure, the element's screenshot). Pure: the compute pool runs it.
 */
import type { components } from '../../../generated/types/dashboard.js';
import criteriaData from '../regulations/data/wcag-criteria.json' with { type: 'json' };
import { countByLevel } from '../scan/summary.js';
import type { Impact, Issue, IssueType, PageReport, ReportSummary } from '../scan/types.js';

export type ReportView = components['schemas']['report-view'];
export type ReportViewRule = ReportView['rules'][number];
export type ReportViewIssue = ReportViewRule['issues'][number];
export type WcagLevel = 'A' | 'AA' | 'AAA';

/** The scan as its row says, and what it found. */
export interface ReportViewInput {
  scan: Pick<ReportView, 'scanId' | 'siteUrl' | 'standard' | 'status' | 'engine' | 'finishedAt'>;
  summary: ReportSummary;
  pages: PageReport[];
  brandScore: number | null;
  /** Issues listed at most (REPORT_MAX_ISSUES); the counts stay whole. */
  maxIssues: number;
}

const LEVELS = new Map<string, WcagLevel>((criteriaData as { id: string; level: WcagLevel }[]).map((c) => [c.id, c.level]));
const PRINCIPLES = [['1', 'Perceivable'], ['2', 'Operable'], ['3', 'Understandable'], ['4', 'Robust']] as const;
const IMPACT_RANK: Record<Impact, number> = { minor: 1, moderate: 2, serious: 3, critical: 4 };
const TYPE_RANK: Record<IssueType, number> = { error: 0, warning: 1, notice: 2 };

export const levelOf = (criterion: string | null | undefined): WcagLevel | null => (criterion ? (LEVELS.get(criterion) ?? null) : null);

/**
 * axe-core's colour-contrast message carries the measurement: "contrast of 1.91 (foreground
 * color: #bbbbbb, background color: #ffffff, …); expected contrast ratio of 4.5:1".
 */
const CONTRAST = /contrast of ([\d.]+) \(foreground color: (#[0-9a-f]{3,8}), background color: (#[0-9a-f]{3,8})[^)]*\)[^;]*; expected contrast ratio of ([\d.]+):1/i;

export function contrastOf(issue: Pick<Issue, 'code' | 'message'>): ReportViewIssue['contrast'] {
  if (!issue.code.startsWith('color-contrast')) return null;
  const m = CONTRAST.exec(issue.message);
  if (!m) return null;
  return { foreground: m[2]!.toLowerCase(), background: m[3]!.toLowerCase(), ratio: Number(m[1]), required: Number(m[4]) };
}

/** The rule's own one-line help: the message up to its first colon (messages are "<help>: <why>, at …"). */
export function helpOf(issue: Pick<Issue, 'code' | 'message'>): string {
  const text = issue.message.replace(/^Needs review: /, '');
  const colon = text.indexOf(': ');
  return colon > 0 ? text.slice(0, colon) : issue.code;
}

/** Pages that could not be checked first, then most errors, then most warnings, then by URL. */
function worstFirst(a: ReportView['pages'][number], b: ReportView['pages'][number]): number {
  return Number(Boolean(b.error)) - Number(Boolean(a.error)) || b.byLevel.error - a.byLevel.error || b.byLevel.warning - a.byLevel.warning || a.url.localeCompare(b.url);
}

export function buildReportView(input: ReportViewInput): ReportView {
  const byPrinciple = PRINCIPLES.map(([principle, name]) => ({ principle, name, A: 0, AA: 0, AAA: 0 }));
  const rules = new Map<string, ReportViewRule & { pageSet: Set<string> }>();
  let shown = 0;
  input.pages.forEach((page, p) => {
    page.issues.forEach((issue, i) => {
      const criterion = issue.wcagCriterion ?? issue.wcagCriteria[0] ?? null;
      const level = levelOf(criterion);
      const row = criterion ? byPrinciple[Number(criterion[0]) - 1] : undefined;
      if (row && level) row[level]++;
      const key = `${issue.code}|${issue.type}`;
      let rule = rules.get(key);
      if (!rule) {
        rule = { code: issue.code, type: issue.type, impact: issue.impact, wcagCriteria: issue.wcagCriteria, level, help: helpOf(issue), helpUrl: issue.helpUrl, count: 0, pages: 0, issues: [], pageSet: new Set() };
        rules.set(key, rule);
      }
      rule.count++;
      rule.pageSet.add(page.url);
      if (issue.impact && (!rule.impact || IMPACT_RANK[issue.impact] > IMPACT_RANK[rule.impact])) rule.impact = issue.impact;
      if (shown < input.maxIssues) {
        shown++;
        rule.issues.push({
          id: `p${p}i${i}`, pageUrl: page.url, selector: issue.selector, context: issue.context, message: issue.message, impact: issue.impact,
          wcagCriterion: criterion, helpUrl: issue.helpUrl, contrast: contrastOf(issue), screenshot: issue.screenshot ?? null, evidence: issue.evidence ?? null,
        });
      }
    });
  });
  const pages = input.pages
    .map((page) => ({ url: page.url, title: page.title, issueCount: page.issueCount, byLevel: countByLevel(page.issues), error: page.error ?? null, notEvaluated: page.notEvaluated ?? [] }))
    .sort(worstFirst);
  return {
    ...input.scan,
    summary: {
      pagesScanned: input.summary.pagesScanned,
      pagesFailed: input.summary.pagesFailed,
      totalIssues: input.summary.totalIssues,
      byLevel: input.summary.byLevel,
      byPrinciple,
      notEvaluated: input.summary.notEvaluated ?? [],
      ...(input.summary.screenshotsSkipped ? { screenshotsSkipped: input.summary.screenshotsSkipped } : {}),
    },
    brandScore: input.brandScore,
    pages,
    rules: [...rules.values()]
      .map(({ pageSet, ...rule }) => ({ ...rule, pages: pageSet.size }))
      .sort((a, b) => TYPE_RANK[a.type] - TYPE_RANK[b.type] || b.count - a.count || a.code.localeCompare(b.code)),
    issuesShown: shown,
  };
}
