/**
 * Reviewers' marks and what they make of findings: where each finding stands (open, confirmed,
 * false positive, accepted, review passed), the findings of a scan listed with their marks, and a
 * rescan compared with its baseline (fixed, still present, new). Pure: the compute pool runs the
 * parts that grow with a report.
 */
import type { components } from '../../../generated/types/dashboard.js';
import { countByLevel } from '../scan/summary.js';
import type { Issue, IssueType } from '../scan/types.js';
import { pagePrints, stablePage } from './fingerprint.js';

type S = components['schemas'];
export type FindingMark = S['finding-mark'];
export type FindingStatus = S['finding-status'];
export type Finding = S['finding'];
export type MarkKind = NonNullable<FindingMark['mark']>;

/** A mark as stored (table finding_marks), the columns the findings need. */
export interface StoredMark {
  fingerprint: string;
  mark: MarkKind | null;
  reason: string | null;
  expires_at: string | null;
  marked_by: string | null;
  marked_at: string | null;
  review_outcome: 'pass' | 'fail' | null;
  review_note: string | null;
  reviewed_by: string | null;
  reviewed_at: string | null;
}

/** Marks by fingerprint, as handed to the compute pool. */
export type MarkIndex = Record<string, StoredMark>;

/** Whether an accepted mark's expiry has passed at `now` (ISO timestamps compare as text). */
const lapsed = (m: StoredMark, now: string) => m.mark === 'accepted' && m.expires_at !== null && m.expires_at <= now;

export function toFindingMark(m: StoredMark, now: string): FindingMark {
  return {
    fingerprint: m.fingerprint, mark: m.mark, reason: m.reason, expiresAt: m.expires_at, expired: lapsed(m, now), markedBy: m.marked_by, markedAt: m.marked_at,
    review: m.review_outcome ? { outcome: m.review_outcome, note: m.review_note ?? '', reviewedBy: m.reviewed_by ?? '', reviewedAt: m.reviewed_at ?? '' } : null,
  };
}

/**
 * Where a finding stands: a mark decides first (an accepted one only until its expiry), then the
 * review outcome of a needs-review finding; with neither it is open.
 */
export function statusOf(m: StoredMark | undefined, type: IssueType, now: string): FindingStatus {
  if (m?.mark === 'false_positive') return 'false_positive';
  if (m?.mark === 'accepted' && !lapsed(m, now)) return 'accepted';
  if (m?.mark === 'confirmed') return 'confirmed';
  if (m?.review_outcome && type === 'warning') return m.review_outcome === 'pass' ? 'review_passed' : 'confirmed';
  return 'open';
}

/** Still to fix: open or confirmed. The others were dismissed by a person. */
export const isOpen = (status: FindingStatus) => status === 'open' || status === 'confirmed';

/** Not a failure, as a person decided: what exports leave out unless asked. */
export const isDismissedAsNoFailure = (status: FindingStatus) => status === 'false_positive' || status === 'review_passed';

export interface FindingPage {
  url: string;
  issues: Issue[];
}

/** Each finding of the pages, in page order, with its fingerprint and where it stands. */
export function* findingsOf(pages: Iterable<FindingPage>, marks: MarkIndex, now: string): Generator<Finding> {
  for (const page of pages) {
    const prints = pagePrints(page);
    for (const [i, issue] of page.issues.entries()) {
      const fingerprint = prints[i]!;
      const m = marks[fingerprint];
      yield { fingerprint, status: statusOf(m, issue.type, now), issue: { ...issue, pageUrl: page.url, fingerprint }, mark: m ? toFindingMark(m, now) : null };
    }
  }
}

/**
 * The findings of these pages a person dismissed (false positive, accepted until its expiry,
 * review passed: not open), counted by level: what a run's open findings leave out of its totals.
 */
export function dismissedByLevel(pages: Iterable<FindingPage>, marks: MarkIndex, now: string): ReturnType<typeof countByLevel> {
  const dismissed: Issue[] = [];
  for (const f of findingsOf(pages, marks, now)) if (!isOpen(f.status)) dismissed.push(f.issue as Issue);
  return countByLevel(dismissed);
}

export interface FindingFilter {
  status?: FindingStatus;
  type?: IssueType;
  page?: string;
  fingerprint?: string;
}

export type FindingCounts = Record<FindingStatus, number>;

const noCounts = (): FindingCounts => ({ open: 0, confirmed: 0, false_positive: 0, accepted: 0, review_passed: 0 });

/** dashboard_list_findings: the matches from `start`, at most `limit`, how many match, and every finding counted by status. */
export function listFindings(pages: Iterable<FindingPage>, marks: MarkIndex, now: string, filter: FindingFilter, start: number, limit: number): { total: number; counts: FindingCounts; findings: Finding[] } {
  const counts = noCounts();
  const findings: Finding[] = [];
  let total = 0;
  for (const f of findingsOf(pages, marks, now)) {
    counts[f.status]++;
    if (filter.status && f.status !== filter.status) continue;
    if (filter.type && f.issue.type !== filter.type) continue;
    if (filter.page && f.issue.pageUrl !== filter.page) continue;
    if (filter.fingerprint && f.fingerprint !== filter.fingerprint) continue;
    if (total >= start && findings.length < limit) findings.push(f);
    total++;
  }
  return { total, counts, findings };
}

export type Verdict = 'fixed' | 'still_present' | 'new';

export interface Verified {
  fingerprint: string;
  verdict: Verdict;
  issue: Issue & { pageUrl: string; fingerprint: string };
  mark: FindingMark | null;
}

/**
 * A later scan compared with its baseline, on the pages the later scan checked (`pages` of
 * `current` without an error): a baseline finding still to fix is fixed when the later scan no
 * longer has its fingerprint, still present when it does; a finding of the later scan that the
 * baseline did not have is new. Findings a person dismissed (false positive, accepted, review
 * passed) are left out, in either scan.
 */
export function compareFindings(baseline: FindingPage[], current: (FindingPage & { error?: string | null })[], marks: MarkIndex, now: string): { findings: Verified[]; summary: { fixed: number; still_present: number; new: number; newByLevel: ReturnType<typeof countByLevel> } } {
  const checked = new Set(current.filter((p) => !p.error).map((p) => stablePage(p.url)));
  const later = [...findingsOf(current.filter((p) => !p.error), marks, now)];
  const before = [...findingsOf(baseline, marks, now)];
  const laterByPrint = new Map(later.map((f) => [f.fingerprint, f]));
  const beforePrints = new Set(before.map((f) => f.fingerprint));
  const findings: Verified[] = [];
  for (const f of before) {
    if (!isOpen(f.status) || !checked.has(stablePage(f.issue.pageUrl!))) continue;
    // A finding still present is shown as the later scan reports it.
    const still = laterByPrint.get(f.fingerprint);
    findings.push({ fingerprint: f.fingerprint, verdict: still ? 'still_present' : 'fixed', issue: (still ?? f).issue as Verified['issue'], mark: f.mark });
  }
  const fresh: Issue[] = [];
  for (const f of later) {
    if (beforePrints.has(f.fingerprint) || !isOpen(f.status)) continue;
    fresh.push(f.issue as Issue);
    findings.push({ fingerprint: f.fingerprint, verdict: 'new', issue: f.issue as Verified['issue'], mark: f.mark });
  }
  const count = (v: Verdict) => findings.filter((f) => f.verdict === v).length;
  return { findings, summary: { fixed: count('fixed'), still_present: count('still_present'), new: count('new'), newByLevel: countByLevel(fresh) } };
}
