/**
 * The report model the report view draws and the exports are written from: one finished scan,
 * summarised by WCAG principle and level, its pages worst first, its issues grouped by rule with
 * what a person needs to act on each (the element, the criterion and its level, the colours and
 * ratio of a contrast failure, the element's screenshot). Pure: the compute pool runs it.
 */
import type { components } from '../../../generated/types/dashboard.js';
import criteriaData from '../regulations/data/wcag-criteria.json' with { type: 'json' };
import { countByLevel } from '../scan/summary.js';
import { pagePrints } from './fingerprint.js';
import { statusOf, toFindingMark, type MarkIndex } from './marks.js';
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
  /** Reviewers' marks of the findings, and when it is (an accepted mark holds until its expiry). */
  marks?: Marks;
}

/** Reviewers' marks by fingerprint, as of `now`. */
export interface Marks {
  marks: MarkIndex;
  now: string;
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

/** A rule as the view lists it, while its pages are still being read: keyed by code and type. */
export type ViewPartRule = ReportViewRule & { key: string };

/**
 * What a run of consecutive pages adds to the report model: their counts by principle and level,
 * their rules (in order of first appearance) with the issues listed of them, their page entries.
 * Parts are built where the pages are parsed (the compute pool) and added up in page order
 * (addViewPart), so the model of any report is built from a bounded number of pages at a time.
 */
export interface ViewPart {
  /** Issues counted per principle (1-4) and level (A, AA, AAA). */
  byPrinciple: Record<WcagLevel, number>[];
  rules: ViewPartRule[];
  pages: ReportView['pages'];
  shown: number;
}

const emptyPrinciples = (): Record<WcagLevel, number>[] => PRINCIPLES.map(() => ({ A: 0, AA: 0, AAA: 0 }));

export const emptyViewPart = (): ViewPart => ({ byPrinciple: emptyPrinciples(), rules: [], pages: [], shown: 0 });

/** The criterion an issue is filed under: its own, else the first of its rule's. */
export const criterionOf = (issue: Pick<Issue, 'wcagCriterion' | 'wcagCriteria'>) => issue.wcagCriterion ?? issue.wcagCriteria[0] ?? null;

/** An issue as the view and the exports show it; `id` names its place in the report (page p, issue i). */
export function viewIssue(issue: Issue, pageUrl: string, id: string): ReportViewIssue {
  return {
    id, pageUrl, selector: issue.selector, context: issue.context, message: issue.message, impact: issue.impact,
    wcagCriterion: criterionOf(issue), helpUrl: issue.helpUrl, contrast: contrastOf(issue), screenshot: issue.screenshot ?? null, evidence: issue.evidence ?? null,
  };
}

/** A rule as first seen, on `issue`: its code and type, and what the issue says of it. */
export const ruleOf = (issue: Issue): ViewPartRule => ({
  key: `${issue.code}|${issue.type}`, code: issue.code, type: issue.type, impact: issue.impact, wcagCriteria: issue.wcagCriteria, level: levelOf(criterionOf(issue)),
  help: helpOf(issue), helpUrl: issue.helpUrl, count: 0, pages: 0, issues: [],
});

/** The stronger of two impacts. */
export const strongerImpact = (a: Impact | null, b: Impact | null): Impact | null => (b && (!a || IMPACT_RANK[b] > IMPACT_RANK[a]) ? b : a);

/**
 * The part of `pages`, the report's pages from position `firstIndex` on, listing at most `quota`
 * of their issues (the report's REPORT_MAX_ISSUES less what earlier parts listed).
 */
export function viewPart(pages: readonly PageReport[], firstIndex: number, quota: number, marks?: Marks): ViewPart {
  const part = emptyViewPart();
  const rules = new Map<string, ViewPartRule>();
  pages.forEach((page, offset) => {
    const p = firstIndex + offset;
    const seen = new Set<ViewPartRule>();
    const prints = pagePrints(page);
    page.issues.forEach((issue, i) => {
      const criterion = criterionOf(issue);
      const level = levelOf(criterion);
      const row = criterion ? part.byPrinciple[Number(criterion[0]) - 1] : undefined;
      if (row && level) row[level]++;
      const key = `${issue.code}|${issue.type}`;
      let rule = rules.get(key);
      if (!rule) rules.set(key, (rule = ruleOf(issue)));
      rule.count++;
      if (!seen.has(rule)) {
        seen.add(rule);
        rule.pages++;
      }
      rule.impact = strongerImpact(rule.impact, issue.impact);
      if (part.shown < quota) {
        part.shown++;
        const shown = viewIssue(issue, page.url, `p${p}i${i}`);
        const m = marks?.marks[prints[i]!];
        shown.finding = { fingerprint: prints[i]!, status: statusOf(m, issue.type, marks?.now ?? ''), mark: m ? toFindingMark(m, marks.now) : null };
        rule.issues.push(shown);
      }
    });
    part.pages.push({ url: page.url, title: page.title, issueCount: page.issueCount, byLevel: countByLevel(page.issues), error: page.error ?? null, notEvaluated: page.notEvaluated ?? [] });
  });
  part.rules = [...rules.values()];
  return part;
}

/** Adds `part` (the pages after those already in `into`) to `into`: a rule first seen earlier keeps what it was first seen with. */
export function addViewPart(into: ViewPart, part: ViewPart): ViewPart {
  part.byPrinciple.forEach((row, n) => {
    for (const level of ['A', 'AA', 'AAA'] as const) into.byPrinciple[n]![level] += row[level];
  });
  const known = new Map(into.rules.map((r) => [r.key, r]));
  for (const rule of part.rules) {
    const had = known.get(rule.key);
    if (!had) {
      into.rules.push(rule);
      known.set(rule.key, rule);
      continue;
    }
    had.count += rule.count;
    had.pages += rule.pages;
    had.impact = strongerImpact(had.impact, rule.impact);
    for (const issue of rule.issues) had.issues.push(issue);
  }
  for (const page of part.pages) into.pages.push(page);
  into.shown += part.shown;
  return into;
}

/** The model from every page's part added up: pages worst first, rules errors first and most frequent first. */
export function finishReportView(input: Omit<ReportViewInput, 'pages' | 'maxIssues'>, all: ViewPart): ReportView {
  return {
    ...input.scan,
    summary: {
      pagesScanned: input.summary.pagesScanned,
      pagesFailed: input.summary.pagesFailed,
      totalIssues: input.summary.totalIssues,
      byLevel: input.summary.byLevel,
      byPrinciple: PRINCIPLES.map(([principle, name], n) => ({ principle, name, ...all.byPrinciple[n]! })),
      notEvaluated: input.summary.notEvaluated ?? [],
      ...(input.summary.screenshotsSkipped ? { screenshotsSkipped: input.summary.screenshotsSkipped } : {}),
    },
    brandScore: input.brandScore,
    pages: [...all.pages].sort(worstFirst),
    rules: all.rules
      .map(({ key: _key, ...rule }) => rule)
      .sort((a, b) => TYPE_RANK[a.type] - TYPE_RANK[b.type] || b.count - a.count || a.code.localeCompare(b.code)),
    issuesShown: all.shown,
  };
}

/** The model of a report whose pages are all at hand. */
export function buildReportView(input: ReportViewInput): ReportView {
  return finishReportView(input, viewPart(input.pages, 0, input.maxIssues, input.marks));
}
