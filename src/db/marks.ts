/**
 * Reviewers' marks as stored: one row per finding (org and fingerprint) with where it stands now.
 * The history of each change is the audit trail's (one row per tools/call).
 */
import type { MarkIndex, StoredMark } from '../domain/report/marks.js';
import type { Db } from './knex.js';

export interface MarkRow extends StoredMark {
  org_id: string;
  page_url: string;
  code: string;
  selector: string;
  scan_id: string;
}

/** Where the finding was last marked: its page (canonical), rule, element, and the scan. */
export type MarkSubject = Pick<MarkRow, 'org_id' | 'fingerprint' | 'page_url' | 'code' | 'selector' | 'scan_id'>;

const COLUMNS = ['fingerprint', 'mark', 'reason', 'expires_at', 'marked_by', 'marked_at', 'review_outcome', 'review_note', 'reviewed_by', 'reviewed_at'] as const;

/** Sets (or creates) the row's mark or review columns; the other columns stay as they were. */
export async function writeMark(db: Db, subject: MarkSubject, change: Partial<Omit<StoredMark, 'fingerprint'>>): Promise<StoredMark> {
  const empty = { mark: null, reason: null, expires_at: null, marked_by: null, marked_at: null, review_outcome: null, review_note: null, reviewed_by: null, reviewed_at: null };
  await db('finding_marks')
    .insert({ ...empty, ...subject, ...change })
    .onConflict(['org_id', 'fingerprint'])
    .merge(['page_url', 'code', 'selector', 'scan_id', ...Object.keys(change)]);
  return await db<MarkRow>('finding_marks').where({ org_id: subject.org_id, fingerprint: subject.fingerprint }).first(...COLUMNS);
}

/** A page URL's bound values a statement: well under SQLite's 999 variables. */
const CHUNK = 500;

/** The org's marks of findings on these pages (canonical URLs), by fingerprint. */
export async function marksOnPages(db: Db, orgId: string, pageKeys: readonly string[]): Promise<MarkIndex> {
  const index: MarkIndex = {};
  const unique = [...new Set(pageKeys)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const rows = await db<MarkRow>('finding_marks').where({ org_id: orgId }).whereIn('page_url', unique.slice(i, i + CHUNK)).select(...COLUMNS);
    for (const row of rows) index[row.fingerprint] = row;
  }
  return index;
}
