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
  /** A short phrase for when several fixers ran, e.g. "2 fake headings turned into <h2>". */
  readonly headline: string;
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

/**
 * At most four sentences. One or two findings keep their full summaries; more are listed by headline.
 * Then one thing to check, and a reminder about placeholders when the check does not already mention them.
 */
export function explain(findings: readonly Finding[]): string {
  const said =
    findings.length <= 2
      ? findings.map((f) => `${f.summary.replace(/\.$/, '')}.`)
      : [`Fixed ${findings.length} kinds of problem: ${findings.map((f) => f.headline).join('; ')}.`];
  const withPlaceholders = findings.filter((f) => f.placeholders.length > 0).length;
  const checks = findings.length <= 2 ? unique(findings.flatMap((f) => (f.check === undefined ? [] : [f.check]))) : [];
  const reminder = 'Replace every "TODO:" placeholder with real text before publishing.';
  let check: string;
  if (withPlaceholders === 0) check = checks[0] ?? 'Review each change in context.';
  else if (withPlaceholders === 1 && checks.some((c) => /TODO/.test(c))) check = checks.find((c) => /TODO/.test(c))!;
  else check = `${checks.find((c) => !/TODO/.test(c)) ?? 'Review each change in context.'} ${reminder}`;
  return [...said, check].join(' ');
}

/** The shared driver of DOM-based recipes. */
export function draftWithFixers(input: FixInput, fixers: readonly Fixer[], nothingFound: string): FixResult {
  return Markup.with(input.htmlContext, (markup) => {
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
  });
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
