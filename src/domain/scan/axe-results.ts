/**
 * axe-core's side of a check, shared by both engines: the options every run uses (so the Chromium
 * engine's findings equal axe's own run with them), and axe's results turned into Issues whose
 * message is one readable sentence.
 */
import type axe from 'axe-core';
import type { Issue, IssueType, Impact, NotEvaluated, WcagStandard } from './types.js';
import { contrastOf } from './contrast.js';
import { en301549Clause } from './en301549.js';
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

/** The part of axe's answer pactum reports: what failed and what needs review. */
export interface AxeAnswer {
  violations: axe.Result[];
  incomplete: axe.Result[];
}

/** Facts of the page that axe does not weigh and the corrections need; pageFactsOf() gathers them inside the page. */
export interface PageFacts {
  /** The content attribute of each <meta http-equiv="refresh" content> of the document, in document order. */
  refreshContents: string[];
}

/**
 * Runs inside the page (Chromium through pageCall, jsdom on its document): self-contained, as
 * the functions of checks/page-functions.ts are.
 */
export function pageFactsOf(doc: Document): PageFacts {
  const metas = Array.from(doc.querySelectorAll('meta[http-equiv][content]'));
  return { refreshContents: metas.filter((m) => (m.getAttribute('http-equiv') ?? '').toLowerCase() === 'refresh').map((m) => m.getAttribute('content') ?? '') };
}

/**
 * Where pactum's answer differs from axe-core's own, on purpose: axe is wrong there with respect to
 * the W3C ACT rule it implements, or the engine cannot see what axe's answer depends on. Every
 * other finding is axe's own, element for element (the corpus test holds both engines to that).
 */
export interface AxeCorrection {
  rules: readonly string[];
  /** The environments it applies in. */
  environments: readonly AxeEnvironment[];
  what: string;
  why: string;
}

export const AXE_CORRECTIONS = {
  firstMetaRefresh: {
    rules: ['meta-refresh', 'meta-refresh-no-exceptions'],
    environments: ['browser', 'jsdom'],
    what: 'Only the first <meta http-equiv="refresh"> whose content parses is judged; findings on the others are dropped.',
    why: 'A browser acts on the first meta refresh whose content attribute parses (the HTML standard\'s shared declarative refresh steps) and ignores every later one; axe judges each element alone.',
  },
  videoSoundUnknown: {
    rules: ['video-caption'],
    environments: ['jsdom'],
    what: 'A video axe would fail or flag for review is reported as not evaluated ("needs a browser") instead.',
    why: 'Captions are required of video with sound, and whether a video has sound needs media playback, which jsdom does not have.',
  },
} as const satisfies Record<string, AxeCorrection>;

/**
 * axe's answer with AXE_CORRECTIONS applied, and the rules it leaves not evaluated. The answer is
 * not changed in place.
 */
export function correctedAnswer(answer: AxeAnswer, facts: PageFacts, environment: AxeEnvironment): AxeAnswer & { notEvaluated: NotEvaluated[] } {
  const notEvaluated: NotEvaluated[] = [];
  const firstRefresh = facts.refreshContents.find((content) => refreshOf(content) !== null);
  const correct = (rule: axe.Result): axe.Result | null => {
    if (applies(AXE_CORRECTIONS.firstMetaRefresh, rule.id, environment)) {
      const nodes = onlyFirstRefresh(rule.nodes, firstRefresh);
      return nodes.length > 0 ? { ...rule, nodes } : null;
    }
    if (applies(AXE_CORRECTIONS.videoSoundUnknown, rule.id, environment)) {
      const { why } = AXE_CORRECTIONS.videoSoundUnknown;
      if (rule.nodes.length > 0) notEvaluated.push({ code: rule.id, wcagCriteria: criteriaFromTags(rule.tags), reason: 'needs a browser', detail: `${rule.nodes.length} video element(s) without captions: ${why}` });
      return null;
    }
    return rule;
  };
  const corrected = (rules: readonly axe.Result[]) => rules.map(correct).filter((rule): rule is axe.Result => rule !== null);
  return { violations: corrected(answer.violations), incomplete: corrected(answer.incomplete), notEvaluated };
}

function applies(correction: AxeCorrection, ruleId: string, environment: AxeEnvironment): boolean {
  return correction.rules.includes(ruleId) && correction.environments.includes(environment);
}

/**
 * The node of the meta refresh the browser acts on, if axe reported it: the first node whose
 * content is that element's (an earlier element with the same content would have been the first
 * to parse). A node whose content cannot be read from its source (cut short) keeps axe's finding.
 */
function onlyFirstRefresh(nodes: readonly axe.NodeResult[], firstRefresh: string | undefined): axe.NodeResult[] {
  let kept = false;
  return nodes.filter((node) => {
    const content = contentOf(node.html);
    if (content === null) return true;
    if (kept || content !== firstRefresh) return false;
    kept = true;
    return true;
  });
}

/** The content attribute of an element's serialized source (serializers quote with " and escape &, ", <, >, nbsp). */
function contentOf(html: string): string | null {
  const value = /^<meta\b[^>]*\scontent="([^"]*)"/i.exec(html)?.[1];
  if (value === undefined) return null;
  const entities: Record<string, string> = { amp: '&', quot: '"', lt: '<', gt: '>', nbsp: '\u00a0' };
  return value.replace(/&(amp|quot|lt|gt|nbsp);/g, (_, name: string) => entities[name]!);
}

const ASCII_WHITESPACE = /[\t\n\f\r ]/;

/**
 * The delay in seconds of a meta refresh's content, as the HTML standard's shared declarative
 * refresh steps parse it, or null when they give up (the browser then ignores the element). The
 * URL part is not resolved: a URL that fails to parse is taken as valid.
 */
export function refreshOf(content: string): number | null {
  let at = 0;
  const skipWhitespace = () => { while (at < content.length && ASCII_WHITESPACE.test(content[at]!)) at++; };
  if (content === '') return null;
  skipWhitespace();
  const digits = /^[0-9]*/.exec(content.slice(at))![0];
  at += digits.length;
  if (digits === '' && content[at] !== '.') return null;
  at += /^[0-9.]*/.exec(content.slice(at))![0].length;
  if (at < content.length) {
    if (!ASCII_WHITESPACE.test(content[at]!) && content[at] !== ';' && content[at] !== ',') return null;
  }
  return digits === '' ? 0 : Number(digits);
}

/** One Issue per node: a rule failing on five images is five things to fix. Errored nodes are left out (see erroredRules). */
export function issuesOf(results: readonly axe.Result[], type: IssueType): Issue[] {
  return results.flatMap((rule) => {
    const criteria = criteriaFromTags(rule.tags);
    const helpUrl = rule.helpUrl.replace(/\?application=axeAPI$/, '');
    return rule.nodes.filter((node) => !nodeErrored(node)).map((node): Issue => {
      const selector = selectorOf(node.target);
      const message = sentence({ help: rule.help, why: reasonOf(node), selector, html: node.html, helpUrl, review: type === 'warning' });
      const contrast = contrastOf({ code: rule.id, message });
      return {
        code: rule.id,
        wcagCriterion: criteria[0] ?? null,
        wcagCriteria: criteria,
        en301549: en301549Clause(criteria[0]),
        type,
        impact: impactOf(node.impact ?? rule.impact ?? null),
        message,
        selector,
        context: truncate(node.html, CONTEXT_MAX),
        helpUrl,
        ...(contrast ? { contrast } : {}),
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
