/**
 * axe-core's side of a check, shared by both engines: the options every run uses (so the Chromium
 * engine's findings equal axe's own run with them), and axe's results turned into Issues whose
 * message is one readable sentence.
 */
import type axe from 'axe-core';
import type { Issue, IssueType, Impact, NotEvaluated, WcagStandard } from './types.js';
import { criteriaFromTags, tagsForStandard } from './wcag.js';

const CONTEXT_MAX = 300;
const SNIPPET_MAX = 80;

/**
 * label-content-name-mismatch (2.5.3) is tagged "experimental", which axe leaves out of a tag
 * selection unless it is enabled by name; it is a WCAG A criterion real pages fail, so it runs.
 */
const ALSO_ENABLED = ['label-content-name-mismatch'] as const;

export type AxeEnvironment = 'browser' | 'jsdom';

export function axeRunOptions(standard: WcagStandard, environment: AxeEnvironment): axe.RunOptions {
  const options: axe.RunOptions = {
    runOnly: { type: 'tag', values: tagsForStandard(standard) },
    rules: Object.fromEntries(ALSO_ENABLED.map((id) => [id, { enabled: true }])),
    resultTypes: ['violations', 'incomplete'],
    elementRef: false,
  };
  if (environment === 'jsdom') {
    // jsdom loads no frames and no media: axe would wait its full media timeout (~10 s) on
    // <audio autoplay>/<video autoplay> for metadata that never comes.
    options.iframes = false;
    options.preload = false;
  }
  return options;
}

/** One Issue per node: a rule failing on five images is five things to fix. Errored nodes are left out (see erroredRules). */
export function issuesOf(results: readonly axe.Result[], type: IssueType): Issue[] {
  return results.flatMap((rule) => {
    const criteria = criteriaFromTags(rule.tags);
    const helpUrl = rule.helpUrl.replace(/\?application=axeAPI$/, '');
    return rule.nodes.filter((node) => !nodeErrored(node)).map((node): Issue => {
      const selector = selectorOf(node.target);
      return {
        code: rule.id,
        wcagCriterion: criteria[0] ?? null,
        wcagCriteria: criteria,
        type,
        impact: impactOf(node.impact ?? rule.impact ?? null),
        message: sentence({ help: rule.help, why: reasonOf(node), selector, html: node.html, helpUrl, review: type === 'warning' }),
        selector,
        context: truncate(node.html, CONTEXT_MAX),
        helpUrl,
      };
    });
  });
}

/**
 * Rules axe could not evaluate (its "error-occurred" check): reported as not evaluated, never as
 * an issue pinned to whatever element axe happened to be on when it gave up.
 */
export function erroredRules(results: readonly axe.Result[], reason: NotEvaluated['reason']): NotEvaluated[] {
  return results
    .filter((rule) => rule.nodes.some(nodeErrored))
    .map((rule) => {
      const message = rule.nodes.flatMap((n) => [...n.any, ...n.all, ...n.none]).find((c) => c.id === 'error-occurred')?.message;
      return { code: rule.id, wcagCriteria: criteriaFromTags(rule.tags), reason, detail: oneLine(`axe-core could not evaluate "${rule.help}"${message ? `: ${message}` : ''}`) };
    });
}

function nodeErrored(node: axe.NodeResult): boolean {
  return [...node.any, ...node.all, ...node.none].some((check) => check.id === 'error-occurred');
}

/**
 * The first failing check's own words ("Element does not have an alt attribute"): checks that all
 * had to pass (all, none) come first; of "any" checks every one failed, and the first is the usual fix.
 */
function reasonOf(node: axe.NodeResult): string | null {
  const checks = [...node.all, ...node.none, ...node.any];
  return checks.map((check) => check.message?.trim()).find((message) => message) ?? null;
}

export interface SentenceParts {
  help: string;
  why: string | null;
  selector: string;
  html: string;
  helpUrl: string;
  review: boolean;
}

/** "Images must have alternative text: element does not have an alt attribute, at img (<img src="/logo.png">); see https://…" */
export function sentence({ help, why, selector, html, helpUrl, review }: SentenceParts): string {
  // axe's check messages can hold two sentences ("… font weight: normal). Expected contrast ratio of 4.5:1"): one, joined by a semicolon.
  const reason = why ? trimDot(why).split(/\.\s+(?=[A-Z])/).map(lowerFirst).join('; ') : null;
  const what = reason ? `${trimDot(help)}: ${reason}` : trimDot(help);
  const where = `at ${selector} (${truncate(oneLine(html), SNIPPET_MAX)})`;
  return oneLine(`${review ? 'Needs review: ' : ''}${what}, ${where}; see ${helpUrl}`);
}

function impactOf(value: string | null): Impact | null {
  return value === 'minor' || value === 'moderate' || value === 'serious' || value === 'critical' ? value : null;
}

/** axe targets are one selector per frame, each possibly split at shadow roots. */
function selectorOf(target: axe.UnlabelledFrameSelector): string {
  return target.map((part) => (Array.isArray(part) ? part.join(' >>> ') : part)).join(' ');
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function trimDot(text: string): string {
  return text.trim().replace(/\.$/, '');
}

/** Lower-cases a leading capital unless it starts an acronym or a name ("ARIA", "Element's" stays readable either way). */
function lowerFirst(text: string): string {
  return /^[A-Z][a-z]/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text;
}
