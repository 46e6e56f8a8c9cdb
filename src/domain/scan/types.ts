/**
 * The scan engine's vocabulary. The report shapes are the dashboard contract's
 * (specs/schemas/resources/*.json); the assertions at the bottom keep them in step
 * with the types generated from those schemas.
 */
import type { components } from '../../../generated/types/dashboard.js';

type Schemas = components['schemas'];
type Contrast = Schemas['contrast'];

export type WcagStandard = 'WCAG2A' | 'WCAG2AA' | 'WCAG2AAA';
export type IssueType = 'error' | 'warning' | 'notice';
export type Impact = 'minor' | 'moderate' | 'serious' | 'critical';
export type EngineName = 'chromium' | 'jsdom';

/** One finding on one element (issue.json); the engine always fills wcagCriteria and helpUrl. */
export interface Issue {
  code: string;
  wcagCriterion: string | null;
  wcagCriteria: string[];
  /** The EN 301 549 V3.2.1 clause requiring wcagCriterion (absent from reports made before it was recorded). */
  en301549?: string | null;
  type: IssueType;
  impact: Impact | null;
  message: string;
  selector: string;
  context: string;
  helpUrl: string;
  /** What a heuristic check beyond axe observed (those findings are warnings: needs review). */
  evidence?: string | null;
  /** A colour-contrast finding's colours, WCAG 2 ratio and APCA Lc. */
  contrast?: Contrast | null;
  /** The id of the element's screenshot (Chromium engine, the first failing elements of a page). */
  screenshot?: string | null;
  /** The finding's name across scans (report/fingerprint.ts); added where a report is read, never stored. */
  fingerprint?: string;
}

export type NotEvaluatedReason = 'needs a browser' | 'check failed';

/** not-evaluated.json: a rule or check neither passed nor failed on a page, and why. */
export interface NotEvaluated {
  code: string;
  wcagCriteria: string[];
  reason: NotEvaluatedReason;
  detail?: string | null;
}

/** page-report.json: `error` is set (and issues empty) when the page could not be scanned. */
export interface PageReport {
  url: string;
  title: string | null;
  issueCount: number;
  error?: string | null;
  notEvaluated?: NotEvaluated[];
  issues: Issue[];
}

export interface ByLevel {
  error: number;
  warning: number;
  notice: number;
}

export interface ReportSummary {
  /** Every page the scan visited, failed ones included (matches the progress count). */
  pagesScanned: number;
  pagesFailed: number;
  totalIssues: number;
  byLevel: ByLevel;
  byCriterion: Record<string, number>;
  /** Rules and checks not evaluated, with the number of pages each was not evaluated on. */
  notEvaluated: (Omit<NotEvaluated, 'detail'> & { pages: number })[];
  /** Screenshots taken but not kept (the org's quota, the store's free space), and why. */
  screenshotsSkipped?: { count: number; reason: string };
}

export interface Report {
  engine?: EngineName;
  summary: ReportSummary;
  pages: PageReport[];
}

/** One text colour on one background colour, as painted (#rrggbb, lower-case), and how many elements use it. */
export interface ColourPairStat {
  fg: string;
  bg: string;
  /** WCAG "large scale" text: at least 24px, or at least 18.66px (14pt) and bold. */
  large: boolean;
  count: number;
}

/** One font use: first family (lower-case, unquoted), resolved size and boldness, and how many elements use it. */
export interface FontStat {
  family: string;
  sizePx: number;
  bold: boolean;
  count: number;
}

/**
 * A page's style statistics, gathered from jsdom's computed styles (cascade without layout) for
 * brand scoring. "Text elements" are visible elements with a non-whitespace text node of their own.
 */
export interface StyleStats {
  /** Text colour on background colour pairs of the text elements, counted; the 200 most frequent. */
  colourPairs: ColourPairStat[];
  /** Fonts of the text elements, counted; the 200 most frequent. */
  fonts: FontStat[];
  /** Class name -> number of elements carrying it (every element, hidden ones too). */
  classes: Record<string, number>;
  /** Custom property (--name) -> number of declarations found in <style> sheets and style attributes. */
  customProperties: Record<string, number>;
  /** Class name -> number of elements carrying it that have at least one accessibility issue. */
  classesWithIssues: Record<string, number>;
  /** Text elements analysed (at most 5000). */
  textElements: number;
  /** Text elements past the cap: counted, not analysed (only the hidden attribute and aria-hidden are checked). */
  skippedTextElements: number;
}

/** What checking one HTML document yields. */
export interface CheckedPage {
  url: string;
  title: string | null;
  issues: Issue[];
  /** Rules and checks that could not be decided on this page (never counted as passed). */
  notEvaluated: NotEvaluated[];
  /** Absolute hrefs of the document's <a href>, for the crawler. */
  links: string[];
  /** Colours, fonts, classes and custom properties in use, for brand scoring (absent when not asked for). */
  style?: StyleStats;
  /** Chromium: screenshots of failing elements, when asked for. */
  screenshots?: ElementShot[];
}

// Compile-time contract checks: each engine type must be assignable to its schema type.
type Assignable<T extends U, U> = T;
export type ContractChecks = [
  Assignable<Issue, Schemas['issue']>,
  Assignable<PageReport, Schemas['page-report']>,
  Assignable<ByLevel, Schemas['by-level']>,
  Assignable<Report, Schemas['report']>,
  Assignable<WcagStandard, Schemas['wcag-standard']>,
  Assignable<Schemas['wcag-standard'], WcagStandard>,
  Assignable<IssueType, Schemas['issue-type']>,
  Assignable<NotEvaluated, Schemas['not-evaluated']>,
  Assignable<EngineName, Schemas['scan-engine']>,
  Assignable<Schemas['scan-engine'], EngineName>,
];

export interface ShotOptions {
  /** Shots this page may take. */
  max: number;
  /**
   * Asked before each shot with the rules its element fails: whether the scan still wants a picture
   * of one of them (and, when it does, counted against them). Absent: every element may be shot.
   */
  claim?: (codes: readonly string[]) => boolean;
  maxWidth: number;
  format: 'webp' | 'png';
  quality: number;
}

/** One image, and the issues (indexes into the page's issues) it shows. */
export interface ElementShot {
  issues: number[];
  mime: 'image/webp' | 'image/png';
  width: number;
  height: number;
  bytes: Buffer;
}
