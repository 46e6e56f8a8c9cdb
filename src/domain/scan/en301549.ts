/**
 * EN 301 549 V3.2.1 clauses of WCAG criteria, from the regulations data set (wcag-criteria.json,
 * `en301549`): chapter 9 (web content) requires WCAG 2.1's level A and AA criteria as 9.<criterion>.
 */
import criteriaData from '../regulations/data/wcag-criteria.json' with { type: 'json' };

const CLAUSES = new Map<string, string>(
  (criteriaData as { id: string; en301549: string | null }[]).flatMap((c) => (c.en301549 ? [[c.id, c.en301549] as [string, string]] : [])),
);

/** The clause of chapter 9 that requires `criterion`; null where EN 301 549 V3.2.1 does not (AAA, WCAG 2.2's additions, no criterion). */
export const en301549Clause = (criterion: string | null | undefined): string | null => (criterion ? (CLAUSES.get(criterion) ?? null) : null);
