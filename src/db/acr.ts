/**
 * Reviewers' assessments of WCAG criteria for a scan's Accessibility Conformance Report, as
 * stored: one row per org, scan and criterion with the assessment as it stands now. The history
 * of each change is the audit trail's (one row per tools/call).
 */
import type { Conformance, ReviewerAssessment } from '../domain/report/acr.js';
import type { Db } from './knex.js';

export interface AssessmentRow {
  org_id: string;
  scan_id: string;
  criterion: string;
  conformance: Conformance;
  remarks: string;
  author: string;
  assessed_at: string;
}

/** Sets (or replaces) the assessment of one criterion of one scan. */
export async function writeAssessment(db: Db, row: AssessmentRow): Promise<AssessmentRow> {
  await db('acr_assessments').insert(row).onConflict(['org_id', 'scan_id', 'criterion']).merge(['conformance', 'remarks', 'author', 'assessed_at']);
  return row;
}

/** Takes an assessment off; whether there was one. */
export async function deleteAssessment(db: Db, key: Pick<AssessmentRow, 'org_id' | 'scan_id' | 'criterion'>): Promise<boolean> {
  return (await db('acr_assessments').where(key).delete()) > 0;
}

/** The scan's assessments in its org, by criterion. */
export async function assessmentsOf(db: Db, orgId: string, scanId: string): Promise<Record<string, ReviewerAssessment & { author: string; assessedAt: string }>> {
  const rows = await db<AssessmentRow>('acr_assessments').where({ org_id: orgId, scan_id: scanId });
  return Object.fromEntries(rows.map((r) => [r.criterion, { conformance: r.conformance, remarks: r.remarks, author: r.author, assessedAt: r.assessed_at }]));
}
