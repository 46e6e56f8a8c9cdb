/** Totals of a scan's pages, as report.json's summary. */
import type { ByLevel, Issue, PageReport, Report, ReportSummary } from './types.js';

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

export function summarize(pages: readonly PageReport[]): ReportSummary {
  const issues = pages.flatMap((page) => page.issues);
  return {
    pagesScanned: pages.length,
    pagesFailed: pages.filter((page) => page.error).length,
    totalIssues: issues.length,
    byLevel: countByLevel(issues),
    byCriterion: countByCriterion(issues),
  };
}

export function buildReport(pages: readonly PageReport[]): Report {
  return { summary: summarize(pages), pages: [...pages] };
}
