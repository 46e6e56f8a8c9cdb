/**
 * Worker-thread task module of the compute pool (compute.ts): the work behind tools and scans
 * whose cost grows with its input. Stored pages come as their rows (JSON text), so the parsing
 * happens here as well; only the answer is copied back to the event loop: small, or for an export
 * one run of pages' text (REPORT_READ_BATCH_ISSUES issues' worth).
 *
 * Everything a task needs, the fix engine's jsdom too, loads with this module, before the thread
 * takes its first task: a task's time limit then measures the task, not the thread's start-up.
 */
import { workerTask } from './worker-task.js';
import { scoreBrand, type BrandGuideline, type BrandScore, type BrandScoreMeta, type StyleStats } from '../domain/brand/index.js';
import { draftFix, FixBudgetError, SUPPORTED_CRITERIA, UnsupportedCriterionError, type FixBudget, type FixInput, type FixResult, type MarkupSize } from '../domain/fix/index.js';
import { draftPatch, type DraftSides } from '../domain/fix/patch.js';
import { queryIssues, type IssueFilter, type IssueMatch } from '../domain/scan/issue-query.js';
import { digest, type ReportDigest } from '../domain/scan/summary.js';
import type { EngineName, Issue, PageReport, Report } from '../domain/scan/types.js';
import { toPageReport, type PageRow } from '../db/scans.js';
import { buildReportView, viewPart, type Marks, type ReportView, type ReportViewInput, type ViewPart } from '../domain/report/view-model.js';
import { withFingerprints } from '../domain/report/fingerprint.js';
import { compareFindings, dismissedByLevel, findingsOf, isOpen, listFindings, type FindingCounts, type FindingFilter, type MarkIndex, type Finding, type Verified } from '../domain/report/marks.js';
import { exportPages, type ExportFormat, type ExportPass, type ExportState } from '../domain/report/exports.js';
import axe from 'axe-core';
import { acrDocument, type AcrDocument, type AcrFacts } from '../domain/report/acr-document.js';
import type { ReviewerAssessment } from '../domain/report/acr.js';
import { coveredCriteria } from '../domain/scan/coverage.js';

/** A page row as stored, without the columns the tasks do not read. */
export type StoredPage = Pick<PageRow, 'url' | 'title' | 'issue_count' | 'error' | 'issues' | 'not_evaluated'>;

export type ComputeTask =
  /** A deterministic fix draft and its diff against the snippet, once the snippet is measured within the budget. */
  | { kind: 'fix'; input: FixInput; budget: FixBudget }
  /** The diff of a draft made elsewhere (the llm service). */
  | { kind: 'fix-diff'; sides: DraftSides }
  /** The digest view of a stored report. */
  | { kind: 'digest'; engine: EngineName | null; summary: string; pages: StoredPage[]; top: number }
  /** The report model of a finished scan (view app, the report page), its issues listed up to maxIssues. */
  | { kind: 'report-view'; report: StoredReport; maxIssues: number; marks?: Marks }
  /** What a run of a report's pages (from position firstIndex) adds to its model, listing at most `quota` issues. */
  | { kind: 'report-view-part'; pages: StoredPage[]; firstIndex: number; quota: number; marks?: Marks }
  /** A run of a report's pages written as SARIF, JUnit XML or CSV (or counted for JUnit's totals), and what carries over to the next. */
  | { kind: 'report-export-pages'; format: ExportFormat; pass: ExportPass; pages: StoredPage[]; state: ExportState; finishedAt: string | null }
  /** A page of dashboard_query_issues. */
  | { kind: 'query-issues'; pages: Pick<StoredPage, 'url' | 'issues'>[]; filter: IssueFilter; start: number; limit: number }
  /** A completed scan's brand score (pages without style statistics already left out). */
  | { kind: 'brand-score'; guideline: BrandGuideline | null; pages: { issues: string; style: string }[]; meta: BrandScoreMeta }
  /** A page of dashboard_list_findings: the scan's findings with where each stands after `marks` at `now`. */
  | { kind: 'findings'; pages: Pick<StoredPage, 'url' | 'issues'>[]; marks: MarkIndex; now: string; filter: FindingFilter; start: number; limit: number }
  /** The pages (in order) with a finding still to fix (open or confirmed). */
  | { kind: 'pages-with-open-findings'; pages: Pick<StoredPage, 'url' | 'issues'>[]; marks: MarkIndex; now: string }
  /** The findings of these pages a person dismissed, by level (the trend's open findings leave them out). */
  | { kind: 'dismissed-by-level'; pages: Pick<StoredPage, 'url' | 'issues'>[]; marks: MarkIndex; now: string }
  /** A later scan's findings compared with its baseline's (dashboard_verify_fixes). */
  | { kind: 'compare-findings'; baseline: Pick<StoredPage, 'url' | 'issues'>[]; current: Pick<StoredPage, 'url' | 'issues' | 'error'>[]; marks: MarkIndex; now: string }
  /** Which of these scans have an issue of the criterion. */
  | { kind: 'scans-with-criterion'; scans: { scanId: string; issues: string[] }[]; criterion: string }
  /** A scan's Accessibility Conformance Report: its pages, the org's marks and the reviewers' assessments (axe-core's version and the criteria covered are this thread's). */
  | { kind: 'acr'; facts: Omit<AcrFacts, 'versions'> & { versions: Omit<AcrFacts['versions'], 'axeCore'> }; pages: StoredPage[]; reviews: Record<string, ReviewerAssessment>; marks: MarkIndex; now: string };

/** A finished scan as stored: its row's facts, its summary and its pages (JSON text). */
export interface StoredReport {
  scan: ReportViewInput['scan'];
  summary: string;
  pages: StoredPage[];
  brandScore: number | null;
}

export type FixOutcome =
  | { kind: 'drafted'; draft: FixResult; diff: string }
  | { kind: 'unsupported'; supported: readonly string[] }
  /** The snippet is over the budget: which limit, the limit, and what was found. */
  | { kind: 'over-budget'; limit: keyof MarkupSize; max: number; found: number };

export interface ComputeOutputs {
  fix: FixOutcome;
  'fix-diff': string;
  digest: ReportDigest;
  'report-view': ReportView;
  'report-view-part': ViewPart;
  'report-export-pages': { chunks: string[]; state: ExportState };
  'query-issues': { total: number; issues: IssueMatch[] };
  'brand-score': BrandScore;
  'scans-with-criterion': string[];
  'pages-with-open-findings': string[];
  'dismissed-by-level': ReturnType<typeof dismissedByLevel>;
  findings: { total: number; counts: FindingCounts; findings: Finding[] };
  'compare-findings': ReturnType<typeof compareFindings> & { findings: Verified[] };
  acr: AcrDocument;
}

export type ComputeKind = ComputeTask['kind'];
export type ComputeOutput<K extends ComputeKind> = ComputeOutputs[K];

function draft(input: FixInput, budget: FixBudget): FixOutcome {
  try {
    const result = draftFix(input, budget);
    return { kind: 'drafted', draft: result, diff: draftPatch({ htmlBefore: input.htmlContext, htmlAfter: result.fixedHtml, cssBefore: input.cssContext, cssAfter: result.fixedCss }) };
  } catch (err) {
    if (err instanceof UnsupportedCriterionError) return { kind: 'unsupported', supported: SUPPORTED_CRITERIA };
    if (err instanceof FixBudgetError) return { kind: 'over-budget', limit: err.limit, max: err.max, found: err.found };
    throw err;
  }
}

const issuesOf = (text: string) => JSON.parse(text) as Issue[];

const pagesOf = (rows: StoredPage[]) => rows.map((row) => toPageReport(row as PageRow)) as PageReport[];

function viewOf(report: StoredReport, maxIssues: number, marks?: Marks): ReportView {
  const pages = pagesOf(report.pages);
  const summary = { notEvaluated: [], ...JSON.parse(report.summary) } as Report['summary'];
  return buildReportView({ scan: report.scan, summary, pages, brandScore: report.brandScore, maxIssues, ...(marks ? { marks } : {}) });
}

export function runComputeTask(task: ComputeTask): ComputeOutputs[ComputeKind] {
  switch (task.kind) {
    case 'fix':
      return draft(task.input, task.budget);
    case 'fix-diff':
      return draftPatch(task.sides);
    case 'digest': {
      const pages = task.pages.map((row) => toPageReport(row as PageRow)) as PageReport[];
      const summary = { notEvaluated: [], ...JSON.parse(task.summary) } as Report['summary'];
      return digest({ ...(task.engine ? { engine: task.engine } : {}), summary, pages }, task.top);
    }
    case 'report-view':
      return viewOf(task.report, task.maxIssues, task.marks);
    case 'report-view-part':
      return viewPart(pagesOf(task.pages), task.firstIndex, task.quota, task.marks);
    case 'report-export-pages': {
      const chunks = exportPages(task.format, task.pass, pagesOf(task.pages), task.state, { finishedAt: task.finishedAt });
      return { chunks, state: task.state };
    }
    case 'query-issues':
      return queryIssues(task.pages.map((p) => ({ url: p.url, issues: withFingerprints(p.url, issuesOf(p.issues)) })), task.filter, task.start, task.limit);
    case 'brand-score':
      return scoreBrand(task.guideline, task.pages.map((p) => ({ issues: issuesOf(p.issues), style: JSON.parse(p.style) as StyleStats })), task.meta);
    case 'findings':
      return listFindings(task.pages.map((p) => ({ url: p.url, issues: issuesOf(p.issues) })), task.marks, task.now, task.filter, task.start, task.limit);
    case 'pages-with-open-findings':
      return task.pages.filter((p) => [...findingsOf([{ url: p.url, issues: issuesOf(p.issues) }], task.marks, task.now)].some((f) => isOpen(f.status))).map((p) => p.url);
    case 'dismissed-by-level':
      return dismissedByLevel(task.pages.map((p) => ({ url: p.url, issues: issuesOf(p.issues) })), task.marks, task.now);
    case 'compare-findings': {
      const parsed = (pages: Pick<StoredPage, 'url' | 'issues'>[]) => pages.map((p) => ({ url: p.url, issues: issuesOf(p.issues) }));
      return compareFindings(parsed(task.baseline), task.current.map((p) => ({ url: p.url, error: p.error, issues: issuesOf(p.issues) })), task.marks, task.now);
    }
    case 'acr': {
      const facts = { ...task.facts, versions: { ...task.facts.versions, axeCore: axe.version } };
      return acrDocument(facts, { pages: pagesOf(task.pages), covered: coveredCriteria(facts.standard), reviews: task.reviews, marks: task.marks, now: task.now });
    }
    case 'scans-with-criterion':
      // A site qualifies when an issue of its latest completed scan maps to the criterion at all.
      return task.scans
        .filter((scan) => scan.issues.some((text) => issuesOf(text).some((i) => (i.wcagCriteria ?? [i.wcagCriterion]).includes(task.criterion))))
        .map((scan) => scan.scanId);
  }
}

export default workerTask(runComputeTask);
