/**
 * What the jsdom engine cannot decide. jsdom has no layout, no painting, no keyboard, no media and
 * loads no frames, so some axe rules come back "passed" or inapplicable there without having looked:
 * those are reported as not evaluated (reason "needs a browser"), on every page, whatever axe said.
 */
import { criteriaFromTags } from './wcag.js';
import type { NotEvaluated } from './types.js';

/** axe rules jsdom cannot decide, and why. Rules outside the chosen standard are left out by the caller. */
export const JSDOM_BLIND_RULES: Readonly<Record<string, string>> = {
  'color-contrast': 'Text contrast needs the colours as painted, which only a browser\'s rendering gives.',
  'color-contrast-enhanced': 'Text contrast needs the colours as painted, which only a browser\'s rendering gives.',
  'link-in-text-block': 'Telling links from the text around them needs the colours as painted.',
  'avoid-inline-spacing': 'Text spacing set with !important needs the browser\'s computed styles.',
  'scrollable-region-focusable': 'Whether a region scrolls needs layout; without it no region overflows.',
  'frame-focusable-content': 'Frames are not loaded without a browser.',
  'no-autoplay-audio': 'Whether audio plays, and for how long, needs media playback.',
  'label-content-name-mismatch': 'The visible label needs the rendered text.',
  'target-size': 'Target sizes need layout.',
};

export const SCRIPTED_CONTENT: NotEvaluated = {
  code: 'scripted-content',
  wcagCriteria: [],
  reason: 'needs a browser',
  detail: 'The page has scripts, which jsdom does not run: content they build (shadow DOM, client-side rendering) was not checked.',
};

/** The blind rules among those the run selected (`rules`: axe's id and tags of each). */
export function blindRules(rules: readonly { ruleId: string; tags: string[] }[]): NotEvaluated[] {
  return rules
    .filter((rule) => rule.ruleId in JSDOM_BLIND_RULES)
    .map((rule) => ({ code: rule.ruleId, wcagCriteria: criteriaFromTags(rule.tags), reason: 'needs a browser', detail: JSDOM_BLIND_RULES[rule.ruleId]! }));
}

/** One entry per code (a rule can be blind and have errored too): the first wins. */
export function uniqueByCode(entries: readonly NotEvaluated[]): NotEvaluated[] {
  const seen = new Set<string>();
  return entries.filter((entry) => !seen.has(entry.code) && Boolean(seen.add(entry.code)));
}
