/**
 * The conformance table of an Accessibility Conformance Report (VPAT 2.5 INT: WCAG 2.2 levels A
 * and AA, each with its EN 301 549 clause), derived from a scan's findings, the reviewers' marks
 * on them and a reviewer's assessments, never assumed:
 * - a reviewer's assessment of a criterion stands as given;
 * - failures make it Does Not Support when they are on more than half the pages checked,
 *   Partially Supports otherwise. A failure is an error that is open, confirmed or accepted (an
 *   accepted failure is still a failure: the remarks say it was accepted and why), or a
 *   needs-review finding a person confirmed. A false positive, and a needs-review finding a
 *   person passed, is no failure;
 * - Supports only where a check of the criterion ran on every page checked and nothing of it is
 *   open (no failure, no finding awaiting review, not "not evaluated" anywhere);
 * - everything else is Not Evaluated: criteria no check covers, criteria whose checks could not
 *   run somewhere, criteria whose only findings await a person's review.
 */
import { criteria } from '../regulations/index.js';
import type { PageReport } from '../scan/types.js';
import { pagePrints } from './fingerprint.js';
import { statusOf, type MarkIndex } from './marks.js';

export type Conformance = 'Supports' | 'Partially Supports' | 'Does Not Support' | 'Not Applicable' | 'Not Evaluated';

export interface ReviewerAssessment {
  conformance: Conformance;
  remarks: string;
}

export interface AcrRow {
  criterion: string;
  title: string;
  level: 'A' | 'AA';
  en301549: string | null;
  conformance: Conformance;
  remarks: string;
}

export interface AcrInput {
  pages: readonly PageReport[];
  /** The criteria the scan's checks test at all (coverage.ts). */
  covered: ReadonlySet<string>;
  /** A reviewer's per-criterion assessments, by criterion id. */
  reviews?: Readonly<Record<string, ReviewerAssessment>>;
  /** Reviewers' marks of findings, by fingerprint (marks.ts), and the time their expiry is judged at. */
  marks?: MarkIndex;
  now?: string;
}

/** The VPAT 2.5 conformance terms, in the order a summary counts them. */
export const CONFORMANCE_TERMS: readonly Conformance[] = ['Supports', 'Partially Supports', 'Does Not Support', 'Not Applicable', 'Not Evaluated'];

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function conformanceTable({ pages, covered, reviews = {}, marks = {}, now = new Date().toISOString() }: AcrInput): AcrRow[] {
  const checked = pages.filter((p) => !p.error);
  const errorPages = new Map<string, Set<string>>();
  const errors = new Map<string, number>();
  const accepted = new Map<string, string[]>();
  const dismissed = new Map<string, number>();
  const toReview = new Map<string, number>();
  const notEvaluated = new Set<string>();
  const add = (map: Map<string, number>, c: string) => map.set(c, (map.get(c) ?? 0) + 1);
  for (const page of checked) {
    const prints = pagePrints(page);
    for (const [i, issue] of page.issues.entries()) {
      const status = statusOf(marks[prints[i]!], issue.type, now);
      for (const c of issue.wcagCriteria.length ? issue.wcagCriteria : [issue.wcagCriterion ?? '']) {
        if (!c) continue;
        if (status === 'false_positive' || status === 'review_passed') add(dismissed, c);
        else if (issue.type === 'error' || status === 'confirmed' || status === 'accepted') {
          add(errors, c);
          errorPages.set(c, (errorPages.get(c) ?? new Set()).add(page.url));
          if (status === 'accepted') accepted.set(c, [...(accepted.get(c) ?? []), marks[prints[i]!]!.reason ?? '']);
        } else add(toReview, c);
      }
    }
    for (const n of page.notEvaluated ?? []) for (const c of n.wcagCriteria) notEvaluated.add(c);
  }
  /** What reviewers' marks did to the criterion's findings, said after its remarks. */
  const marked = (id: string) => {
    const parts: string[] = [];
    const a = accepted.get(id);
    if (a?.length) parts.push(`${plural(a.length, 'failure')} accepted by the organization (${[...new Set(a)].join('; ')})`);
    const d = dismissed.get(id) ?? 0;
    if (d) parts.push(`${plural(d, 'finding')} dismissed by a reviewer as no failure`);
    return parts.length ? ` ${parts.join('; ')}.` : '';
  };
  return criteria
    .filter((c) => (c.level === 'A' || c.level === 'AA') && !c.removedIn)
    .map((c): AcrRow => {
      const row = { criterion: c.id, title: c.title, level: c.level as 'A' | 'AA', en301549: c.en301549 ?? null };
      const review = reviews[c.id];
      if (review) return { ...row, conformance: review.conformance, remarks: review.remarks };
      const failing = errorPages.get(c.id)?.size ?? 0;
      if (failing > 0) {
        const spread = `${plural(errors.get(c.id)!, 'failure')} on ${failing} of ${plural(checked.length, 'page')} checked`;
        return { ...row, conformance: failing * 2 > checked.length ? 'Does Not Support' : 'Partially Supports', remarks: marked(c.id) ? `${spread};${marked(c.id).replace(/\.$/, '')}` : spread };
      }
      if (!covered.has(c.id)) return { ...row, conformance: 'Not Evaluated', remarks: 'No automated check covers this criterion, and no reviewer has assessed it.' };
      if (checked.length === 0) return { ...row, conformance: 'Not Evaluated', remarks: 'No page could be checked.' };
      if (notEvaluated.has(c.id)) return { ...row, conformance: 'Not Evaluated', remarks: 'Its checks could not run on every page (see the report\'s not-evaluated list).' };
      const pending = toReview.get(c.id) ?? 0;
      if (pending > 0) return { ...row, conformance: 'Not Evaluated', remarks: `${plural(pending, 'finding')} ${pending === 1 ? 'awaits' : 'await'} a person's review.${marked(c.id)}` };
      return { ...row, conformance: 'Supports', remarks: `Tested automatically on ${plural(checked.length, 'page')}, with no open failure; automated checks cover part of the criterion.${marked(c.id)}` };
    });
}
