/**
 * The conformance table of an Accessibility Conformance Report (VPAT 2.5 INT: WCAG 2.2 levels A
 * and AA, each with its EN 301 549 clause), derived from a scan's findings and a reviewer's
 * assessments, never assumed:
 * - a reviewer's assessment of a criterion stands as given;
 * - confirmed failures (errors) make it Does Not Support when they are on more than half the
 *   pages checked, Partially Supports otherwise;
 * - Supports only where a check of the criterion ran on every page checked and nothing of it is
 *   open (no error, no finding awaiting review, not "not evaluated" anywhere);
 * - everything else is Not Evaluated: criteria no check covers, criteria whose checks could not
 *   run somewhere, criteria whose only findings await a person's review.
 */
import { criteria } from '../regulations/index.js';
import type { PageReport } from '../scan/types.js';

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
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function conformanceTable({ pages, covered, reviews = {} }: AcrInput): AcrRow[] {
  const checked = pages.filter((p) => !p.error);
  const errorPages = new Map<string, Set<string>>();
  const errors = new Map<string, number>();
  const toReview = new Map<string, number>();
  const notEvaluated = new Set<string>();
  for (const page of checked) {
    for (const issue of page.issues) {
      for (const c of issue.wcagCriteria.length ? issue.wcagCriteria : [issue.wcagCriterion ?? '']) {
        if (!c) continue;
        if (issue.type === 'error') {
          errors.set(c, (errors.get(c) ?? 0) + 1);
          errorPages.set(c, (errorPages.get(c) ?? new Set()).add(page.url));
        } else {
          toReview.set(c, (toReview.get(c) ?? 0) + 1);
        }
      }
    }
    for (const n of page.notEvaluated ?? []) for (const c of n.wcagCriteria) notEvaluated.add(c);
  }
  return criteria
    .filter((c) => (c.level === 'A' || c.level === 'AA') && !c.removedIn)
    .map((c): AcrRow => {
      const row = { criterion: c.id, title: c.title, level: c.level as 'A' | 'AA', en301549: c.en301549 ?? null };
      const review = reviews[c.id];
      if (review) return { ...row, conformance: review.conformance, remarks: review.remarks };
      const failing = errorPages.get(c.id)?.size ?? 0;
      if (failing > 0) {
        const spread = `${plural(errors.get(c.id)!, 'confirmed failure')} on ${failing} of ${plural(checked.length, 'page')} checked`;
        return { ...row, conformance: failing * 2 > checked.length ? 'Does Not Support' : 'Partially Supports', remarks: spread };
      }
      if (!covered.has(c.id)) return { ...row, conformance: 'Not Evaluated', remarks: 'No automated check covers this criterion, and no reviewer has assessed it.' };
      if (checked.length === 0) return { ...row, conformance: 'Not Evaluated', remarks: 'No page could be checked.' };
      if (notEvaluated.has(c.id)) return { ...row, conformance: 'Not Evaluated', remarks: 'Its checks could not run on every page (see the report\'s not-evaluated list).' };
      const pending = toReview.get(c.id) ?? 0;
      if (pending > 0) return { ...row, conformance: 'Not Evaluated', remarks: `${plural(pending, 'finding')} ${pending === 1 ? 'awaits' : 'await'} a person's review.` };
      return { ...row, conformance: 'Supports', remarks: `Tested automatically on ${plural(checked.length, 'page')}, with no open failure; automated checks cover part of the criterion.` };
    });
}
