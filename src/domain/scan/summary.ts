/** Totals of a scan's pages, as report.json's summary, and the digest (report-digest.json). */
import type { ByLevel, EngineName, Impact, Issue, IssueType, PageReport, Report, ReportSummary } from './types.js';

export function countByLevel(issues: readonly Issue[]): ByLevel {
  const byLevel: ByLevel = { error: 0, warning: 0, notice: 0 };
  for (const issue of issues) byLevel[issue.type]++;
  return byLevel;
}

/** Each issue counts once, under its first criterion, so the criteria add up to the issues that have one. */
export function countByCriterion(issues: readonly Issue[]): Record<string, number> {
  const byCriterion: Record<string, number> = {};
  for (const { wcagCriterion } of issues) {
    if (wcagCriterion) byCriterion[wcagCriterion] = (byCriterion[wcagCriterion] ?? 0) + 1;
  }
  return byCriterion;
}

/** Each rule or check not evaluated, with the number of pages it was not evaluated on, most pages first. */
export function countNotEvaluated(pages: readonly PageReport[]): ReportSummary['notEvaluated'] {
  const counts = new Map<string, ReportSummary['notEvaluated'][number]>();
  for (const page of pages) {
    for (const entry of page.notEvaluated ?? []) {
      const key = `${entry.code}|${entry.reason}`;
      const known = counts.get(key);
      if (known) known.pages++;
      else counts.set(key, { code: entry.code, wcagCriteria: entry.wcagCriteria, reason: entry.reason, pages: 1 });
    }
  }
  return [...counts.values()].sort((a, b) => b.pages - a.pages || a.code.localeCompare(b.code));
}

/** What summarize counts of one page's issues. */
export interface PageTally {
  issues: number;
  byLevel: ByLevel;
  byCriterion: Record<string, number>;
}

/**
 * A page's counts, taken when the page is done: a scan then sums per-page counts at its end
 * instead of counting every issue of every page at once (a second of the event loop for 100,000
 * issues). One page's issues are few enough to count on the loop.
 */
export function tallyPage(page: PageReport): PageTally {
  return { issues: page.issues.length, byLevel: countByLevel(page.issues), byCriterion: countByCriterion(page.issues) };
}

/** The summary of these pages; `tallies` (one per page, in the same order) when they were taken already. */
export function summarize(pages: readonly PageReport[], tallies: readonly PageTally[] = pages.map(tallyPage)): ReportSummary {
  const byLevel: ByLevel = { error: 0, warning: 0, notice: 0 };
  const byCriterion: Record<string, number> = {};
  let totalIssues = 0;
  for (const tally of tallies) {
    totalIssues += tally.issues;
    for (const level of ['error', 'warning', 'notice'] as const) byLevel[level] += tally.byLevel[level];
    // Page by page, in order: the criteria keep the order of their first issue, as counting them all at once would.
    for (const [criterion, n] of Object.entries(tally.byCriterion)) byCriterion[criterion] = (byCriterion[criterion] ?? 0) + n;
  }
  return {
    pagesScanned: pages.length,
    pagesFailed: pages.filter((page) => page.error).length,
    totalIssues,
    byLevel,
    byCriterion,
    notEvaluated: countNotEvaluated(pages),
  };
}

export function buildReport(pages: readonly PageReport[], engine?: EngineName, tallies?: readonly PageTally[]): Report {
  return { ...(engine ? { engine } : {}), summary: summarize(pages, tallies), pages: [...pages] };
}

export interface RuleGroup {
  code: string;
  type: IssueType;
  wcagCriteria: string[];
  impact: Impact | null;
  help: string;
  helpUrl: string;
  issues: number;
  pages: number;
  examples: { pageUrl: string; selector: string; context: string }[];
}

export interface PageSummary {
  url: string;
  title: string | null;
  issueCount: number;
  byLevel: ByLevel;
  notEvaluated: number;
  error: string | null;
}

export interface ReportDigest {
  engine?: EngineName;
  summary: ReportSummary;
  rules: RuleGroup[];
  rulesTotal: number;
  pages: PageSummary[];
  pagesTotal: number;
}

const IMPACT_RANK: Record<Impact, number> = { minor: 1, moderate: 2, serious: 3, critical: 4 };
const EXAMPLES = 3;

/** The rule's own one-line help: the message up to its first colon (messages are "<help>: <why>, at …"). */
function helpOf(issue: Issue): string {
  const text = issue.message.replace(/^Needs review: /, '');
  const colon = text.indexOf(': ');
  return colon > 0 ? text.slice(0, colon) : issue.code;
}

/** Issues grouped by rule and type (most issues first), and one line per page: unchecked pages, then most errors, then most warnings. */
export function digest(report: Report, top: number): ReportDigest {
  const groups = new Map<string, RuleGroup & { pageSet: Set<string> }>();
  for (const page of report.pages) {
    for (const issue of page.issues) {
      const key = `${issue.code}|${issue.type}`;
      let group = groups.get(key);
      if (!group) {
        group = { code: issue.code, type: issue.type, wcagCriteria: issue.wcagCriteria, impact: issue.impact, help: helpOf(issue), helpUrl: issue.helpUrl, issues: 0, pages: 0, examples: [], pageSet: new Set() };
        groups.set(key, group);
      }
      group.issues++;
      group.pageSet.add(page.url);
      if (issue.impact && (!group.impact || IMPACT_RANK[issue.impact] > IMPACT_RANK[group.impact])) group.impact = issue.impact;
      if (group.examples.length < EXAMPLES) group.examples.push({ pageUrl: page.url, selector: issue.selector, context: issue.context });
    }
  }
  const typeRank: Record<IssueType, number> = { error: 0, warning: 1, notice: 2 };
  const rules = [...groups.values()]
    .map(({ pageSet, ...group }) => ({ ...group, pages: pageSet.size }))
    .sort((a, b) => b.issues - a.issues || typeRank[a.type] - typeRank[b.type] || a.code.localeCompare(b.code));
  const pages = report.pages
    .map((page): PageSummary => ({ url: page.url, title: page.title, issueCount: page.issueCount, byLevel: countByLevel(page.issues), notEvaluated: page.notEvaluated?.length ?? 0, error: page.error ?? null }))
    .sort((a, b) => Number(Boolean(b.error)) - Number(Boolean(a.error)) || b.byLevel.error - a.byLevel.error || b.byLevel.warning - a.byLevel.warning || a.url.localeCompare(b.url));
  return {
    ...(report.engine ? { engine: report.engine } : {}),
    summary: report.summary,
    rules: rules.slice(0, top),
    rulesTotal: rules.length,
    pages: pages.slice(0, top),
    pagesTotal: pages.length,
  };
}
