/** dashboard_query_issues over stored pages: every issue of the scan that passes the filter, in page order. */
import type { Issue, IssueType, Impact } from './types.js';

export interface IssueFilter {
  criterion?: string;
  type?: IssueType;
  impact?: Impact;
  code?: string;
  /** Only this page's issues. */
  page?: string;
}

export interface IssueQueryPage {
  url: string;
  issues: readonly Issue[];
}

export type IssueMatch = Issue & { pageUrl: string };

/** The matches from `start`, at most `limit`, and how many there are in all. */
export function queryIssues(pages: Iterable<IssueQueryPage>, filter: IssueFilter, start: number, limit: number): { total: number; issues: IssueMatch[] } {
  const { criterion, type, impact, code, page: pageUrl } = filter;
  const issues: IssueMatch[] = [];
  let total = 0;
  for (const p of pages) {
    if (pageUrl && p.url !== pageUrl) continue;
    for (const i of p.issues) {
      if (criterion && !(i.wcagCriteria ?? [i.wcagCriterion]).includes(criterion)) continue;
      if ((type && i.type !== type) || (impact && i.impact !== impact) || (code && i.code !== code)) continue;
      if (total >= start && issues.length < limit) issues.push({ ...i, pageUrl: p.url });
      total++;
    }
  }
  return { total, issues };
}
