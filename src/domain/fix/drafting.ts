/**
 * Runs a recipe's fixers over the parsed snippet and turns what they did into a FixResult:
 * the re-serialised markup, a short explanation, the effort and the placeholders.
 */
import { Markup } from './markup.js';
import type { Effort, FixInput, FixResult } from './model.js';

/** What one fixer changed. */
export interface Finding {
  /** How many elements (or structures) were fixed. */
  readonly count: number;
  /** Elements were replaced or regrouped, not just given attributes. */
  readonly restructured: boolean;
  /** One sentence: what was wrong and what changed. */
  readonly summary: string;
  /** One sentence: what a human must still check. */
  readonly check?: string;
  readonly placeholders: readonly string[];
}

/** Finds and fixes one kind of problem in the document; null when there was none. */
export type Fixer = (markup: Markup, input: FixInput) => Finding | null;

export function effortFor(findings: readonly Finding[]): Effort {
  const elements = findings.reduce((n, f) => n + f.count, 0);
  if (elements >= 3) return 'high';
  if (findings.some((f) => f.restructured)) return findings.length > 1 ? 'high' : 'medium';
  return 'low';
}

export function unique(values: Iterable<string>): string[] {
  return Array.from(new Set(values));
}

/** At most four sentences: up to three summaries (merged when more) and one thing to check. */
export function explain(findings: readonly Finding[]): string {
  const summaries = findings.map((f) => f.summary.replace(/\.$/, ''));
  const said =
    summaries.length <= 3
      ? summaries.map((s) => `${s}.`)
      : [`Fixed ${summaries.length} problems: ${summaries.map((s) => s.charAt(0).toLowerCase() + s.slice(1)).join('; ')}.`];
  const checks = unique(findings.flatMap((f) => (f.check === undefined ? [] : [f.check])));
  const placeholders = findings.some((f) => f.placeholders.length > 0);
  let check = checks[0] ?? '';
  if (placeholders && !/TODO/.test(check)) check = `${check} Replace every "TODO:" placeholder with real text before publishing.`.trim();
  return [...said, check].filter((s) => s !== '').join(' ');
}

/** The shared driver of DOM-based recipes. */
export function draftWithFixers(input: FixInput, fixers: readonly Fixer[], nothingFound: string): FixResult {
  const markup = Markup.parse(input.htmlContext);
  const findings: Finding[] = [];
  for (const fixer of fixers) {
    const finding = fixer(markup, input);
    if (finding !== null) findings.push(finding);
  }
  if (findings.length === 0) {
    return { fixedHtml: input.htmlContext, explanation: nothingFound, effort: 'low', placeholders: [] };
  }
  return {
    fixedHtml: markup.serialize(),
    explanation: explain(findings),
    effort: effortFor(findings),
    placeholders: unique(findings.flatMap((f) => f.placeholders)),
  };
}

/**
 * Picks the fixers the scanner's message points at (e.g. "headings" for a heading issue);
 * when the message names none of them, every fixer runs.
 */
export function fixersFor<K extends string>(
  message: string,
  families: ReadonlyArray<{ readonly key: K; readonly matches: RegExp; readonly fixers: readonly Fixer[] }>,
): Fixer[] {
  const named = families.filter((f) => f.matches.test(message));
  return (named.length > 0 ? named : families).flatMap((f) => f.fixers);
}
