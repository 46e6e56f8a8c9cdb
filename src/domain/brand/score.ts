/**
 * Scores a scan against an org's brand guideline (brand-score.json), following the reference
 * product's documented rules:
 *
 * - colour (weight 0.5): of the text colour pairs that involve a brand colour (as text or as
 *   background, within COLOUR_TOLERANCE), the share, weighted by element count, that passes WCAG
 *   SC 1.4.3: 4.5:1 for normal text, 3:1 for large text.
 * - typography (weight 0.3): of all text elements, the share set in a brand font at or above that
 *   font's minSizePx (when it has one).
 * - components (weight 0.2): over the elements carrying a brand class token, the share that has no
 *   accessibility issue. css-variable tokens are only reported as used or not (brandBreakdown); they
 *   never move the score.
 * - overall = Σ wᵢ·sᵢ / Σ wᵢ over the sub-scores that could be computed; coverage = Σ wᵢ of those.
 *
 * Pure and deterministic: the same guideline, pages and meta give the same score.
 */
import type { components } from '../../../generated/types/dashboard.js';
import { contrastRatio, parseColour } from '../fix/colour.js';
import type { Issue, StyleStats } from '../scan/types.js';
import { brandColours, brandFamilyNames, className, countOf, customPropertyName, isBrandColour, normaliseFamily } from './match.js';

export type BrandGuideline = components['schemas']['brand-guideline'];
export type BrandScore = components['schemas']['brand-score'];
export type ScoredBrand = Extract<BrandScore, { kind: 'scored' }>;
export type UnscorableBrand = Extract<BrandScore, { kind: 'unscorable' }>;
export type UnscorableReason = UnscorableBrand['reason'];

/** A checked page as scoring needs it. Issues are already attributed to classes in style.classesWithIssues. */
export interface BrandPage {
  style: StyleStats;
  issues: readonly Issue[];
}

export interface BrandScoreMeta {
  scanId: string;
  siteUrl: string;
  computedAt: string;
}

export type SubScoreName = 'color' | 'typography' | 'components';

export const SUB_SCORE_WEIGHTS: Readonly<Record<SubScoreName, number>> = { color: 0.5, typography: 0.3, components: 0.2 };

/** WCAG 2 SC 1.4.3 (AA) minimum contrast. */
export const MIN_CONTRAST_NORMAL = 4.5;
export const MIN_CONTRAST_LARGE = 3;

/** A sub-score before rounding (0-100) with the weight of evidence behind it, or why there is none. */
export type SubScore =
  | { kind: 'scored'; value: number; passed: number; total: number }
  | { kind: 'unscorable'; reason: UnscorableReason };

export interface BrandBreakdown {
  color: SubScore;
  typography: SubScore;
  components: SubScore;
  /** css-variable tokens and how many declarations of each the pages hold (0: unused). */
  cssVariables: { name: string; declarations: number }[];
}

export function scoreBrand(guideline: BrandGuideline | null, pages: readonly BrandPage[], meta: BrandScoreMeta): BrandScore {
  if (guideline === null) return unscorable('no-guideline', meta);
  if (guideline.colors.length === 0 && guideline.fonts.length === 0 && guideline.componentTokens.length === 0) {
    return unscorable('empty-guideline', meta);
  }
  const breakdown = brandBreakdown(guideline, pages);
  const names: SubScoreName[] = ['color', 'typography', 'components'];
  const computed = names.filter((name) => breakdown[name].kind === 'scored');
  if (computed.length === 0) return unscorable('all-subs-unscorable', meta);

  // Renormalised over what could be computed, from the unrounded sub-scores.
  const weight = computed.reduce((sum, name) => sum + SUB_SCORE_WEIGHTS[name], 0);
  const weighted = computed.reduce((sum, name) => sum + SUB_SCORE_WEIGHTS[name] * valueOf(breakdown[name])!, 0);
  return {
    kind: 'scored',
    scanId: meta.scanId,
    siteUrl: meta.siteUrl,
    computedAt: meta.computedAt,
    overall: round1(weighted / weight),
    color: roundOrNull(valueOf(breakdown.color)),
    typography: roundOrNull(valueOf(breakdown.typography)),
    components: roundOrNull(valueOf(breakdown.components)),
    coverage: Math.round(weight * 1000) / 1000, // 0.5 + 0.3 is not exactly 0.8 in binary
  };
}

/** The three sub-scores with their evidence or reasons, and css-variable usage: what scoreBrand summarises. */
export function brandBreakdown(guideline: BrandGuideline, pages: readonly BrandPage[]): BrandBreakdown {
  return {
    color: colourSubScore(guideline.colors.map((c) => c.value), pages),
    typography: typographySubScore(guideline.fonts, pages),
    components: componentsSubScore(guideline.componentTokens, pages),
    cssVariables: cssVariableUsage(guideline.componentTokens, pages),
  };
}

/** Share of brand-colour text pairs, weighted by element count, that meets SC 1.4.3. */
export function colourSubScore(colours: readonly string[], pages: readonly BrandPage[]): SubScore {
  const brand = brandColours(colours);
  let passed = 0;
  let total = 0;
  for (const page of pages) {
    for (const pair of page.style.colourPairs) {
      const fg = parseColour(pair.fg);
      const bg = parseColour(pair.bg);
      if (fg === null || bg === null || !(isBrandColour(fg, brand) || isBrandColour(bg, brand))) continue;
      total += pair.count;
      if (contrastRatio(fg, bg) >= (pair.large ? MIN_CONTRAST_LARGE : MIN_CONTRAST_NORMAL)) passed += pair.count;
    }
  }
  return share(passed, total, 'no-branded-issues');
}

/** Share of text elements set in a brand font, at or above that font's minimum size when it has one. */
export function typographySubScore(fonts: BrandGuideline['fonts'], pages: readonly BrandPage[]): SubScore {
  if (fonts.length === 0) return { kind: 'unscorable', reason: 'no-typography-data' };
  const brand = fonts.map((font) => ({ names: brandFamilyNames(font.family), minSizePx: font.minSizePx }));
  let passed = 0;
  let total = 0;
  for (const page of pages) {
    for (const font of page.style.fonts) {
      total += font.count;
      const family = normaliseFamily(font.family);
      // The same family may be listed twice (heading and body, different minimums): any entry it satisfies will do.
      const ok = brand.some((b) => b.names.includes(family) && (b.minSizePx === undefined || font.sizePx >= b.minSizePx));
      if (ok) passed += font.count;
    }
  }
  return share(passed, total, 'no-typography-data');
}

/**
 * Over the elements carrying a brand class (a token of kind "class", or of no kind), the share
 * without any accessibility issue: 1 - Σ withIssues / Σ elements, weighted by element counts.
 */
export function componentsSubScore(tokens: BrandGuideline['componentTokens'], pages: readonly BrandPage[]): SubScore {
  const classes = [...new Set(tokens.filter((t) => t.kind === undefined || t.kind === 'class').map((t) => className(t.name)))];
  let elements = 0;
  let withIssues = 0;
  for (const page of pages) {
    for (const name of classes) {
      const count = countOf(page.style.classes, name);
      elements += count;
      withIssues += Math.min(countOf(page.style.classesWithIssues, name), count);
    }
  }
  return share(elements - withIssues, elements, 'no-component-tokens');
}

/** Each css-variable token with the declarations of it found over all pages. */
export function cssVariableUsage(tokens: BrandGuideline['componentTokens'], pages: readonly BrandPage[]): { name: string; declarations: number }[] {
  const names = [...new Set(tokens.filter((t) => t.kind === 'css-variable').map((t) => customPropertyName(t.name)))];
  return names.map((name) => ({ name, declarations: pages.reduce((sum, page) => sum + countOf(page.style.customProperties, name), 0) }));
}

function share(passed: number, total: number, reason: UnscorableReason): SubScore {
  return total > 0 ? { kind: 'scored', value: (passed / total) * 100, passed, total } : { kind: 'unscorable', reason };
}

function valueOf(sub: SubScore): number | null {
  return sub.kind === 'scored' ? sub.value : null;
}

/** One decimal, halves up; toPrecision first drops binary noise (57.15 * 10 is 571.4999...). */
function round1(n: number): number {
  return Math.round(Number((n * 10).toPrecision(12))) / 10;
}

function roundOrNull(n: number | null): number | null {
  return n === null ? null : round1(n);
}

function unscorable(reason: UnscorableReason, meta: BrandScoreMeta): UnscorableBrand {
  return { kind: 'unscorable', scanId: meta.scanId, siteUrl: meta.siteUrl, computedAt: meta.computedAt, reason };
}
