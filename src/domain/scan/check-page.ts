/**
 * Checks one HTML document with axe-core inside jsdom. This is CPU-heavy and blocks the thread it
 * runs on for seconds on big pages: the server calls it through the worker pool (pool.ts), never directly.
 */
import axe from 'axe-core';
import { JSDOM, VirtualConsole } from 'jsdom';
import type { CheckedPage, Impact, Issue, IssueType, StyleStats, WcagStandard } from './types.js';
import { collectStyleStats, emptyStyleStats, type StyleWindow } from './style-stats.js';
import { criteriaFromTags, tagsForStandard } from './wcag.js';

const CONTEXT_MAX = 300;

/** axe-core's source, read once per thread (module load) and evaluated into each page's window. */
const AXE_SOURCE: string = axe.source;

type AxeWindow = { axe: typeof axe };

export async function checkPage(html: string, url: string, standard: WcagStandard): Promise<CheckedPage> {
  // No page scripts run and no subresources load: only the markup as served is checked.
  const dom = new JSDOM(html, { url, runScripts: 'outside-only', virtualConsole: new VirtualConsole() });
  try {
    const { window } = dom;
    window.eval(AXE_SOURCE);
    const results = await (window as unknown as AxeWindow).axe.run(window.document, {
      runOnly: { type: 'tag', values: tagsForStandard(standard) },
      resultTypes: ['violations', 'incomplete'],
      iframes: false,
      elementRef: false,
    });
    const issues = [...issuesOf(results.violations, 'error'), ...issuesOf(results.incomplete, 'warning')];
    return {
      url,
      title: window.document.title.trim() || null,
      issues,
      links: linksOf(window.document),
      style: styleStatsOf(window, issues),
    };
  } finally {
    dom.window.close();
  }
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

/** One Issue per node: a rule failing on five images is five things to fix. */
export function issuesOf(results: readonly axe.Result[], type: IssueType): Issue[] {
  return results.flatMap((rule) => {
    const criteria = criteriaFromTags(rule.tags);
    return rule.nodes.map((node): Issue => ({
      code: rule.id,
      wcagCriterion: criteria[0] ?? null,
      wcagCriteria: criteria,
      type,
      impact: impactOf(node.impact ?? rule.impact ?? null),
      message: messageOf(rule, node),
      selector: selectorOf(node.target),
      context: truncate(node.html, CONTEXT_MAX),
      helpUrl: rule.helpUrl.replace(/\?application=axeAPI$/, ''),
    }));
  });
}

/**
 * Needs-review results (incomplete) are warnings. In jsdom, color-contrast always ends up here:
 * jsdom has no layout and no canvas, so axe cannot compute colours behind text and reports the rule
 * as errored on the page's first text element. That is a real "check this by hand" item, so it stays
 * a warning, with a message that says so; measuring contrast needs a real browser.
 */
function messageOf(rule: axe.Result, node: axe.NodeResult): string {
  if (ruleErrored(node)) {
    return rule.id.startsWith('color-contrast')
      ? `${rule.help}: contrast could not be measured without a browser's rendering; check the text colours of this page by hand.`
      : `${rule.help}: axe-core could not evaluate this rule here; check it by hand.`;
  }
  return node.failureSummary?.trim() || rule.help;
}

function ruleErrored(node: axe.NodeResult): boolean {
  return [...node.any, ...node.all, ...node.none].some((check) => check.id === 'error-occurred');
}

function impactOf(value: string | null): Impact | null {
  return value === 'minor' || value === 'moderate' || value === 'serious' || value === 'critical' ? value : null;
}

/** axe targets are one selector per frame, each possibly split at shadow roots. */
function selectorOf(target: axe.UnlabelledFrameSelector): string {
  return target.map((part) => (Array.isArray(part) ? part.join(' >>> ') : part)).join(' ');
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Absolute http(s) hrefs of <a href>, resolved against the document's base URL, without repeats. */
function linksOf(document: Document): string[] {
  const hrefs = Array.from(document.querySelectorAll('a[href]'), (a) => (a as HTMLAnchorElement).href);
  return [...new Set(hrefs.filter((href) => href.startsWith('http://') || href.startsWith('https://')))];
}
