/**
 * The checks beyond axe-core: WCAG criteria axe does not test, made with what a real browser
 * shows (keyboard, focus, playback, layout at other sizes) or with a closer reading of the DOM
 * (media alternatives, link names, the language of the text). Each is a heuristic, so its
 * findings are warnings (needs review) that carry the evidence.
 */
import type { Impact, Issue, NotEvaluated, WcagStandard } from '../types.js';
import { sentence, truncate } from '../axe-results.js';

/** A check as the catalogue writes it: its id is its key there. */
interface CheckEntry {
  criteria: string[];
  /**
   * The W3C ACT rules (their ids) this check implements: the ACT implementation report
   * (scripts/act-report.ts) reads its procedures from here, as it reads axe-core's from its actIds.
   */
  actRules: string[];
  /** The lowest WCAG level among its criteria: a check runs when the standard includes it. */
  level: 'A' | 'AA' | 'AAA';
  /** What it asks for, in one line (the "help" of a rule group). */
  help: string;
  helpUrl: string;
  impact: Impact;
  /** Needs a real browser (keyboard, rendering, playback, layout); jsdom reports it as not evaluated. */
  needsBrowser: boolean;
  /** Why jsdom cannot make it. */
  browserReason?: string;
}

const understanding = (slug: string) => `https://www.w3.org/WAI/WCAG22/Understanding/${slug}.html`;

const ENTRIES = {
  'pactum-keyboard-trap': {
    actRules: ['80af7b'], criteria: ['2.1.2'], level: 'A', impact: 'critical', needsBrowser: true,
    help: 'Keyboard focus must be able to leave every component', helpUrl: understanding('no-keyboard-trap'),
    browserReason: 'Tabbing through the page needs a browser with a keyboard and the page\'s scripts.',
  },
  'pactum-focus-visible': {
    actRules: ['oj04fd'], criteria: ['2.4.7'], level: 'AA', impact: 'serious', needsBrowser: true,
    help: 'The element with keyboard focus must show it', helpUrl: understanding('focus-visible'),
    browserReason: 'Whether focus changes the rendering needs a browser\'s styles as painted.',
  },
  'pactum-media-alternative': {
    actRules: [], criteria: ['1.2.1', '1.2.2'], level: 'A', impact: 'serious', needsBrowser: false,
    help: 'Audio and video need captions or a text alternative', helpUrl: understanding('audio-only-and-video-only-prerecorded'),
  },
  'pactum-autoplay-audio': {
    actRules: ['80f0bf', 'aaa1bf', '4c31df'], criteria: ['1.4.2'], level: 'A', impact: 'serious', needsBrowser: true,
    help: 'Sound that plays by itself for more than 3 seconds needs a way to pause or mute it', helpUrl: understanding('audio-control'),
    browserReason: 'Whether sound plays, and for how long, needs media playback.',
  },
  'pactum-language': {
    actRules: ['ucwvc8'], criteria: ['3.1.1'], level: 'A', impact: 'serious', needsBrowser: false,
    help: 'The page\'s language attribute must match the language of its text', helpUrl: understanding('language-of-page'),
  },
  'pactum-language-of-parts': {
    actRules: ['off6ek'], criteria: ['3.1.2'], level: 'AA', impact: 'serious', needsBrowser: false,
    help: 'A passage in another language must say so with a lang attribute that matches its text', helpUrl: understanding('language-of-parts'),
  },
  'pactum-reflow': {
    actRules: ['59br37'], criteria: ['1.4.10', '1.4.4'], level: 'AA', impact: 'serious', needsBrowser: true,
    help: 'Content must reflow at 320 CSS pixels and stay readable at 200% zoom, without clipped text', helpUrl: understanding('reflow'),
    browserReason: 'Reflow and zoom need layout at other viewport sizes.',
  },
  'pactum-link-purpose': {
    actRules: ['fd3a94', '5effbb'], criteria: ['2.4.4'], level: 'A', impact: 'moderate', needsBrowser: false,
    help: 'Links with the same name in the same context must lead to the same place', helpUrl: understanding('link-purpose-in-context'),
  },
  'pactum-link-text': {
    actRules: ['5effbb', 'aizyf1'], criteria: ['2.4.4', '2.4.9'], level: 'A', impact: 'moderate', needsBrowser: false,
    help: 'A link\'s text, with its context, must say where the link leads', helpUrl: understanding('link-purpose-in-context'),
  },
  'pactum-link-text-alone': {
    actRules: ['aizyf1'], criteria: ['2.4.9'], level: 'AAA', impact: 'minor', needsBrowser: false,
    help: 'A link\'s text alone must say where the link leads', helpUrl: understanding('link-purpose-link-only'),
  },
  'pactum-audio-alternative': {
    actRules: ['e7aa44'], criteria: ['1.2.1'], level: 'A', impact: 'serious', needsBrowser: true,
    help: 'Audio a person can play needs a text alternative that conveys all of it', helpUrl: understanding('audio-only-and-video-only-prerecorded'),
    browserReason: 'Whether audio loads, and whether a person can start it, needs media playback and layout.',
  },
  'pactum-video-alternative': {
    actRules: ['f51b46', 'c5a4ea', '1ec09b', '1a02b0'], criteria: ['1.2.3', '1.2.2', '1.2.5', '1.2.8'], level: 'A', impact: 'serious', needsBrowser: true,
    help: 'Video with sound needs an audio description or a transcript of what it shows, and captions', helpUrl: understanding('audio-description-or-media-alternative-prerecorded'),
    browserReason: 'Whether a video is visible and makes sound needs media playback and layout.',
  },
  'pactum-video-only-alternative': {
    actRules: ['c3232f'], criteria: ['1.2.1'], level: 'A', impact: 'serious', needsBrowser: true,
    help: 'Video without sound needs a transcript or an audio track that conveys what it shows', helpUrl: understanding('audio-only-and-video-only-prerecorded'),
    browserReason: 'Whether a video is visible and silent needs media playback and layout.',
  },
  'pactum-device-motion': {
    actRules: ['7677a9'], criteria: ['2.5.4'], level: 'A', impact: 'serious', needsBrowser: true,
    help: 'What device motion does must also be possible with a control', helpUrl: understanding('motion-actuation'),
    browserReason: 'What device motion changes needs the page\'s scripts running and motion events fired at them.',
  },
  'pactum-motion-disable': {
    actRules: ['c249d5'], criteria: ['2.5.4'], level: 'A', impact: 'serious', needsBrowser: true,
    help: 'Responding to device motion must be possible to turn off', helpUrl: understanding('motion-actuation'),
    browserReason: 'What device motion changes needs the page\'s scripts running and motion events fired at them.',
  },
  'pactum-aria-references': {
    actRules: ['in6db8'], criteria: ['1.3.1'], level: 'A', impact: 'serious', needsBrowser: false,
    help: 'The aria-controls of an expanded combobox or a scrollbar must name an element that exists', helpUrl: understanding('info-and-relationships'),
  },
  'pactum-orientation': {
    actRules: ['b33eff'], criteria: ['1.3.4'], level: 'AA', impact: 'serious', needsBrowser: true,
    help: 'Content must not be locked to portrait or landscape by rotating it in one orientation', helpUrl: understanding('orientation'),
    browserReason: 'Whether the page turns with the orientation needs layout at a portrait and a landscape viewport.',
  },
  'pactum-auto-update': {
    actRules: ['efbfc7'], criteria: ['2.2.2'], level: 'A', impact: 'serious', needsBrowser: true,
    help: 'Text that changes by itself must be possible to pause, stop or hide', helpUrl: understanding('pause-stop-hide'),
    browserReason: 'Whether text changes by itself needs the page\'s scripts running for a while.',
  },
} satisfies Record<`pactum-${string}`, CheckEntry>;

export type CheckId = keyof typeof ENTRIES;

export interface CheckInfo extends Readonly<CheckEntry> {
  id: CheckId;
}

/** Every check, with its id (its key in the catalogue). */
export const CHECKS: Readonly<Record<CheckId, CheckInfo>> = Object.fromEntries(
  (Object.entries(ENTRIES) as [CheckId, CheckEntry][]).map(([id, entry]) => [id, { id, ...entry }]),
) as Record<CheckId, CheckInfo>;

/**
 * ACT rules that axe-core rules pactum runs implement, beyond those axe-core lists in its own
 * actIds (axe names none for these).
 */
export const AXE_RULE_ACT_RULES: Readonly<Record<string, string[]>> = {
  'summary-name': ['2t702h'],
};

/** The checks a standard includes (WCAG2A: level A ones only; level AAA ones only at WCAG2AAA). */
export function checksFor(standard: WcagStandard): CheckInfo[] {
  const rank = { A: 1, AA: 2, AAA: 3 } as const;
  const upTo = standard === 'WCAG2A' ? 1 : standard === 'WCAG2AA' ? 2 : 3;
  return Object.values(CHECKS).filter((check) => rank[check.level] <= upTo);
}

/** A check's finding as it comes out of the page: the element, what was seen, and which criterion. */
export interface RawFinding {
  check: CheckId;
  criterion: string;
  selector: string;
  html: string;
  /** What is wrong, in a few words ("focus cannot leave div#dialog"). */
  what: string;
  evidence: string;
}

export function issueOfFinding(finding: RawFinding): Issue {
  const info = CHECKS[finding.check];
  const criteria = [finding.criterion, ...info.criteria.filter((c) => c !== finding.criterion)];
  return {
    code: info.id,
    wcagCriterion: finding.criterion,
    wcagCriteria: criteria,
    type: 'warning',
    impact: info.impact,
    message: sentence({ help: info.help, why: finding.what, selector: finding.selector, html: finding.html, helpUrl: info.helpUrl, review: true }),
    selector: finding.selector,
    context: truncate(finding.html, 300),
    helpUrl: info.helpUrl,
    evidence: finding.evidence,
  };
}

/**
 * Our findings on an element axe already reported under the same criterion are dropped: one
 * thing to fix is listed once, with axe's wording (its rule page is the better help).
 */
export function withoutDuplicates(axeIssues: readonly Issue[], ours: readonly Issue[]): Issue[] {
  const seen = new Set(axeIssues.flatMap((i) => i.wcagCriteria.map((c) => `${i.selector}|${c}`)));
  return ours.filter((issue) => !seen.has(`${issue.selector}|${issue.wcagCriterion}`));
}

export function browserOnly(standard: WcagStandard): NotEvaluated[] {
  return checksFor(standard)
    .filter((check) => check.needsBrowser)
    .map((check) => ({ code: check.id, wcagCriteria: check.criteria, reason: 'needs a browser', detail: check.browserReason ?? null }));
}

export function checkFailed(check: CheckId, err: unknown): NotEvaluated {
  return { code: check, wcagCriteria: CHECKS[check].criteria, reason: 'check failed', detail: err instanceof Error ? err.message.split('\n')[0]! : String(err) };
}
