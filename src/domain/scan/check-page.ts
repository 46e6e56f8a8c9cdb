/**
 * The jsdom engine's check of one HTML document: axe-core inside jsdom, plus the checks beyond axe
 * that need no browser. This is CPU-heavy and blocks the thread it runs on for seconds on big
 * pages: the server calls it through the worker pool (pool.ts), never directly.
 *
 * jsdom has no layout: what it cannot decide is reported as not evaluated ("needs a browser"),
 * never as passed (not-evaluated.ts).
 */
import axe from 'axe-core';
import { JSDOM, VirtualConsole } from 'jsdom';
import { axeRunOptions, correctedAnswer, erroredRules, issuesOf, pageFactsOf } from './axe-results.js';
import { browserOnly, checksFor, issueOfFinding, withoutDuplicates } from './checks/catalogue.js';
import { domFindings, SURVEY_LIMITS } from './checks/dom-findings.js';
import { surveyDom } from './checks/page-functions.js';
import { blindRules, JSDOM_BLIND_RULES, SCRIPTED_CONTENT, uniqueByCode } from './not-evaluated.js';
import type { CheckedPage, Issue, NotEvaluated, StyleStats, WcagStandard } from './types.js';
import { collectStyleStats, emptyStyleStats, type StyleWindow } from './style-stats.js';
import { criteriaFromTags, tagsForStandard } from './wcag.js';

/** axe-core's source, read once per thread (module load) and evaluated into each page's window. */
const AXE_SOURCE: string = axe.source;

type AxeWindow = { axe: typeof axe };

export interface CheckOptions {
  /** Gather brand-scoring style statistics too (default true). */
  styles?: boolean;
}

export async function checkPage(html: string, url: string, standard: WcagStandard, options: CheckOptions = {}): Promise<CheckedPage> {
  // No page scripts run and no subresources load: only the markup as served is checked.
  const dom = new JSDOM(html, { url, runScripts: 'outside-only', virtualConsole: new VirtualConsole() });
  try {
    const { window } = dom;
    addStandIns(window);
    window.eval(AXE_SOURCE);
    const pageAxe = (window as unknown as AxeWindow).axe;
    const results = correctedAnswer(await pageAxe.run(window.document, axeRunOptions(standard, 'jsdom')), pageFactsOf(window.document), 'jsdom');
    const blind = blindRules(pageAxe.getRules(tagsForStandard(standard)));
    const trusted = (list: axe.Result[]) => list.filter((rule) => !(rule.id in JSDOM_BLIND_RULES));
    const objects = undecidedObjects(window.document, results.violations);
    const axeIssues = [...issuesOf(trusted(results.violations), 'error'), ...issuesOf(trusted(results.incomplete), 'warning')];

    const notEvaluated: NotEvaluated[] = [...blind, ...objects, ...results.notEvaluated, ...erroredRules(trusted([...results.violations, ...results.incomplete]), 'needs a browser'), ...browserOnly(standard)];
    const survey = surveyDom(window.document, SURVEY_LIMITS);
    if (survey.scripted) notEvaluated.push(SCRIPTED_CONTENT);
    const { findings: all, failures } = domFindings(survey);
    notEvaluated.push(...failures);
    const wanted = new Set(checksFor(standard).map((c) => c.id));
    const findings = all.filter((f) => wanted.has(f.check));
    const issues = [...axeIssues, ...withoutDuplicates(axeIssues, findings.map(issueOfFinding))];
    return {
      url,
      title: survey.title,
      issues,
      notEvaluated: uniqueByCode(notEvaluated),
      links: survey.links,
      ...(options.styles === false ? {} : { style: styleStatsOf(window, issues) }),
    };
  } finally {
    dom.window.close();
  }
}

/**
 * An <object> with fallback content shows either what it loads or that content, and jsdom loads
 * nothing: whether it needs a name of its own is not known. Such objects are taken out of axe's
 * object-alt violations (in place) and reported as not evaluated.
 */
function undecidedObjects(document: Document, violations: axe.Result[]): NotEvaluated[] {
  const rule = violations.find((r) => r.id === 'object-alt');
  if (!rule) return [];
  const hasFallback = (node: axe.NodeResult) => {
    const selector = node.target[0];
    const el = typeof selector === 'string' ? document.querySelector(selector) : null;
    return el !== null && (el.firstElementChild !== null || (el.textContent ?? '').trim() !== '');
  };
  const undecided = rule.nodes.filter(hasFallback);
  if (undecided.length === 0) return [];
  rule.nodes = rule.nodes.filter((node) => !hasFallback(node));
  if (rule.nodes.length === 0) violations.splice(violations.indexOf(rule), 1);
  return [{ code: 'object-alt', wcagCriteria: criteriaFromTags(rule.tags), reason: 'needs a browser', detail: 'Whether an <object> with fallback content shows what it loads or that content needs a browser: jsdom loads nothing.' }];
}

/**
 * What a browser would answer where jsdom has nothing: no element at any point and no boxes for
 * any range. With these axe decides aria-hidden-focus and object-alt instead of throwing; what
 * still needs layout is in JSDOM_BLIND_RULES.
 */
function addStandIns(window: JSDOM['window']): void {
  const document = window.document as Document & { elementFromPoint?: unknown; elementsFromPoint?: unknown };
  document.elementFromPoint = () => null;
  document.elementsFromPoint = () => [];
  const range = window.Range.prototype;
  range.getClientRects = () => Object.assign([], { item: () => null });
  range.getBoundingClientRect = () => ({ x: 0, y: 0, width: 0, height: 0, top: 0, left: 0, right: 0, bottom: 0, toJSON: () => ({}) });
}

/**
 * Runs after axe: it needs the issues, and reuses the computed styles axe already cached. The
 * statistics only feed brand scoring, so a failure there leaves them empty rather than failing the check.
 */
function styleStatsOf(window: StyleWindow, issues: readonly Issue[]): StyleStats {
  try {
    return collectStyleStats(window, issues);
  } catch {
    return emptyStyleStats();
  }
}

/** Brand-scoring statistics of markup as served, without axe (the Chromium engine asks for these). */
export function styleStatsOfHtml(html: string, url: string, issues: readonly Issue[]): StyleStats {
  const dom = new JSDOM(html, { url, runScripts: undefined, virtualConsole: new VirtualConsole() });
  try {
    return styleStatsOf(dom.window, issues);
  } finally {
    dom.window.close();
  }
}
