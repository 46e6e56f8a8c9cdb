/**
 * The brand score's rules, one at a time, on hand-made style statistics. Every expected number is
 * worked out in the comment next to it; contrast ratios are WCAG 2's (L1 + 0.05) / (L2 + 0.05).
 */
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import {
  brandBreakdown, colourSubScore, componentsSubScore, cssVariableUsage, isNearColour, scoreBrand, typographySubScore,
  type BrandGuideline, type BrandPage, type BrandScore,
} from '../../../src/domain/brand/index.js';
import { contrastRatio, parseColour } from '../../../src/domain/fix/colour.js';
import type { ColourPairStat, FontStat, StyleStats } from '../../../src/domain/scan/types.js';
import { loadBundledSpec, toDefs, type JsonObject } from '../../../src/spec/documents.js';

const META = { scanId: 'scn_01jdq3v8k2m5n7p9r1s3t5v7x9', siteUrl: 'https://www.example.com/', computedAt: '2026-11-20T09:31:05.000Z' };

/** brand-score.json from the bundled dashboard spec: every score these tests make must match it. */
const validateScore = (() => {
  const components = ((loadBundledSpec('dashboard').components as JsonObject).schemas ?? {}) as JsonObject;
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $defs: toDefs(components) as JsonObject }, 'spec');
  return ajv.getSchema('spec#/$defs/brand-score')!;
})();

function score(guideline: BrandGuideline | null, pages: BrandPage[]): BrandScore {
  const result = scoreBrand(guideline, pages, META);
  expect(validateScore(result), JSON.stringify(validateScore.errors)).toBe(true);
  return result;
}

function page(style: Partial<StyleStats>): BrandPage {
  return {
    style: { colourPairs: [], fonts: [], classes: {}, customProperties: {}, classesWithIssues: {}, textElements: 0, skippedTextElements: 0, ...style },
    issues: [],
  };
}

const pair = (fg: string, bg: string, count: number, large = false): ColourPairStat => ({ fg, bg, large, count });
const font = (family: string, sizePx: number, count: number, bold = false): FontStat => ({ family, sizePx, bold, count });

const guideline = (g: Partial<BrandGuideline>): BrandGuideline => ({ colors: [], fonts: [], componentTokens: [], ...g });
const INK = { name: 'Ink', value: '#000000' };
const BLUE = { name: 'Brand blue', value: '#0b5fff' };

// Premises of the colour cases: black on #5a5a5a is 3.04:1 (large passes, normal fails), black on white 21:1.
const GREY_5A = '#5a5a5a';

describe('colour: share of brand-colour pairs meeting SC 1.4.3', () => {
  it('rests on these contrast ratios', () => {
    expect(contrastRatio('#000000', GREY_5A)).toBeCloseTo(3.045, 3); // L(#5a5a5a) = 0.10224
    expect(contrastRatio('#000000', '#ffffff')).toBe(21);
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
  });

  it('4.5:1 for normal text, 3:1 for large, weighted by count; pairs without a brand colour do not count', () => {
    const pages = [
      page({ colourPairs: [pair('#000000', GREY_5A, 2, true), pair('#000000', GREY_5A, 2, false)] }), // 2 pass (large), 2 fail
      page({ colourPairs: [pair('#000000', '#ffffff', 1), pair('#777777', '#ffffff', 5)] }), // 1 pass; #777 on white has no brand colour
    ];
    // (2 + 1) / (2 + 2 + 1) = 60 %
    expect(colourSubScore([INK.value], pages)).toEqual({ kind: 'scored', value: 60, passed: 3, total: 5 });
  });

  it('a brand colour as background counts too', () => {
    // #767676 on brand white is 4.54:1 (passes); #888888 on brand white 3.54:1 (fails) -> 1 of 2
    const pages = [page({ colourPairs: [pair('#767676', '#ffffff', 1), pair('#888888', '#ffffff', 1)] })];
    expect(colourSubScore(['#ffffff'], pages)).toMatchObject({ value: 50 });
  });

  it('matches brand colours within a Euclidean distance of 8 on 0-255 channels', () => {
    const blue = parseColour(BLUE.value)!;
    expect(isNearColour(blue, parseColour('#135fff')!)).toBe(true); // red +8: distance 8
    expect(isNearColour(blue, parseColour('#105aff')!)).toBe(true); // (+5, -5, 0): 7.07
    expect(isNearColour(blue, parseColour('#145fff')!)).toBe(false); // red +9
    expect(isNearColour(blue, parseColour('#1065fa')!)).toBe(false); // (+5, +6, -5): 9.27
    // #135fff on white is 5.11:1 (passes); #145fff is not brand blue, so its failing pair is left out: 1 of 1.
    const pages = [page({ colourPairs: [pair('#135fff', '#ffffff', 1), pair('#145fff', '#777777', 1)] })];
    expect(colourSubScore([BLUE.value], pages)).toEqual({ kind: 'scored', value: 100, passed: 1, total: 1 });
  });

  it('is unscorable (no-branded-issues) when no pair involves a brand colour', () => {
    const pages = [page({ colourPairs: [pair('#777777', '#ffffff', 3)] })];
    expect(colourSubScore([INK.value], pages)).toEqual({ kind: 'unscorable', reason: 'no-branded-issues' });
    expect(colourSubScore([], pages)).toEqual({ kind: 'unscorable', reason: 'no-branded-issues' });
  });
});

describe('typography: share of text in a brand font at its minimum size', () => {
  const fonts = [{ family: "'Inter', sans-serif", role: 'body' as const, minSizePx: 14 }, { family: 'Merriweather' }];

  it('matches families case-insensitively, without quotes or generic fallbacks, and applies minSizePx', () => {
    const pages = [
      page({ fonts: [font('inter', 16, 3), font('inter', 13, 1), font('"Inter"', 14, 1)] }), // 3 pass, 13px < 14 fails, 14px passes
      page({ fonts: [font('MERRIWEATHER', 10, 1, true), font('sans-serif', 16, 2), font('georgia', 20, 3)] }), // no minimum: passes; generic and other: fail
    ];
    // (3 + 1 + 1) / (3 + 1 + 1 + 1 + 2 + 3) = 5 / 11 = 45.4545...
    const sub = typographySubScore(fonts, pages);
    expect(sub).toMatchObject({ kind: 'scored', passed: 5, total: 11 });
    expect(sub.kind === 'scored' && sub.value).toBeCloseTo(45.4545, 3);
  });

  it('a family listed twice passes with whichever entry it satisfies', () => {
    const twice = [{ family: 'Inter', role: 'heading' as const, minSizePx: 20 }, { family: 'Inter', role: 'body' as const, minSizePx: 12 }];
    const pages = [page({ fonts: [font('inter', 13, 1), font('inter', 11, 1)] })];
    expect(typographySubScore(twice, pages)).toMatchObject({ value: 50 });
  });

  it('a brand that only names a generic family matches that generic family', () => {
    const pages = [page({ fonts: [font('monospace', 13, 1), font('courier', 13, 1)] })];
    expect(typographySubScore([{ family: 'monospace', role: 'code' }], pages)).toMatchObject({ value: 50 });
  });

  it('is unscorable (no-typography-data) without brand fonts or without text', () => {
    expect(typographySubScore([], [page({ fonts: [font('inter', 16, 1)] })])).toEqual({ kind: 'unscorable', reason: 'no-typography-data' });
    expect(typographySubScore(fonts, [page({}), page({})])).toEqual({ kind: 'unscorable', reason: 'no-typography-data' });
    expect(typographySubScore(fonts, [])).toEqual({ kind: 'unscorable', reason: 'no-typography-data' });
  });
});

describe('components: share of brand-class elements without issues', () => {
  const tokens = [{ name: 'btn-primary', kind: 'class' as const }, { name: 'card' }, { name: '--brand-radius', kind: 'css-variable' as const }];

  it('1 - with issues / elements over class tokens (kind class, or no kind), summed over pages', () => {
    const pages = [
      page({ classes: { 'btn-primary': 4, card: 2, other: 10 }, classesWithIssues: { 'btn-primary': 1, other: 5 } }),
      page({ classes: { 'btn-primary': 1, card: 3 }, classesWithIssues: { card: 3 } }),
    ];
    // elements 4 + 2 + 1 + 3 = 10, with issues 1 + 3 = 4: 6 / 10 = 60 %
    expect(componentsSubScore(tokens, pages)).toEqual({ kind: 'scored', value: 60, passed: 6, total: 10 });
  });

  it('accepts ".class" spellings, ignores repeated tokens, never counts more issue elements than elements', () => {
    const pages = [page({ classes: { btn: 2 }, classesWithIssues: { btn: 5 } }), page({ classes: { btn: 2 } })];
    // page 1: 2 elements, min(5, 2) = 2 with issues; page 2: 2 elements, none: 2 / 4 = 50 %
    expect(componentsSubScore([{ name: '.btn' }, { name: 'btn', kind: 'class' }], pages)).toMatchObject({ value: 50, total: 4 });
  });

  it('css-variable tokens are reported as used or not and never move the score', () => {
    const pages = [page({ classes: { 'btn-primary': 2 }, customProperties: { '--brand-radius': 3 } })];
    expect(cssVariableUsage([...tokens, { name: 'brand-gap', kind: 'css-variable' }], pages)).toEqual([
      { name: '--brand-radius', declarations: 3 },
      { name: '--brand-gap', declarations: 0 },
    ]);
    const withoutVariables = componentsSubScore(tokens.slice(0, 2), pages);
    expect(componentsSubScore(tokens, pages)).toEqual(withoutVariables);
    expect(withoutVariables).toMatchObject({ value: 100 });
  });

  it('is unscorable (no-component-tokens) without tokens, with css-variable tokens only, or when no class token occurs', () => {
    const pages = [page({ classes: { other: 3, constructor: 0 }, customProperties: { '--brand-radius': 1 } })];
    const reason = { kind: 'unscorable', reason: 'no-component-tokens' };
    expect(componentsSubScore([], pages)).toEqual(reason);
    expect(componentsSubScore([tokens[2]!], pages)).toEqual(reason);
    expect(componentsSubScore(tokens, pages)).toEqual(reason);
    expect(componentsSubScore([{ name: 'constructor' }, { name: 'toString' }], [page({})])).toEqual(reason); // own keys only
  });
});

describe('scoreBrand: weights 0.5 / 0.3 / 0.2, renormalised over what could be computed', () => {
  const fullGuideline = guideline({
    colors: [INK],
    fonts: [{ family: 'Inter', minSizePx: 14 }, { family: 'Merriweather' }],
    componentTokens: [{ name: 'btn-primary', kind: 'class' }],
  });
  const colourPairs = [pair('#000000', GREY_5A, 2, true), pair('#000000', GREY_5A, 2), pair('#000000', '#ffffff', 1)]; // 60
  const fonts = [font('inter', 16, 5), font('inter', 12, 2), font('arial', 16, 4)]; // 5 / 11 = 45.4545...
  const classes = { 'btn-primary': 4 };
  const classesWithIssues = { 'btn-primary': 1 }; // 75

  it('all three sub-scores: overall = 0.5 c + 0.3 t + 0.2 k, coverage 1', () => {
    // 0.5 * 60 + 0.3 * 45.4545 + 0.2 * 75 = 30 + 13.6364 + 15 = 58.6364 -> 58.6
    expect(score(fullGuideline, [page({ colourPairs, fonts, classes, classesWithIssues })])).toEqual({
      kind: 'scored', ...META, overall: 58.6, color: 60, typography: 45.5, components: 75, coverage: 1,
    });
  });

  it('colour unscorable: (0.3 t + 0.2 k) / 0.5, coverage 0.5', () => {
    // (0.3 * 45.4545 + 0.2 * 75) / 0.5 = (13.6364 + 15) / 0.5 = 57.2727 -> 57.3
    expect(score(fullGuideline, [page({ colourPairs: [pair('#777777', '#ffffff', 1)], fonts, classes, classesWithIssues })])).toEqual({
      kind: 'scored', ...META, overall: 57.3, color: null, typography: 45.5, components: 75, coverage: 0.5,
    });
  });

  it('typography unscorable (no brand fonts): (0.5 c + 0.2 k) / 0.7, coverage 0.7', () => {
    // (30 + 15) / 0.7 = 64.2857 -> 64.3
    expect(score({ ...fullGuideline, fonts: [] }, [page({ colourPairs, fonts, classes, classesWithIssues })])).toMatchObject({
      kind: 'scored', overall: 64.3, color: 60, typography: null, components: 75, coverage: 0.7,
    });
  });

  it('components unscorable: (0.5 c + 0.3 t) / 0.8, coverage 0.8', () => {
    // (30 + 13.6364) / 0.8 = 54.5455 -> 54.5
    expect(score(fullGuideline, [page({ colourPairs, fonts })])).toMatchObject({
      kind: 'scored', overall: 54.5, color: 60, typography: 45.5, components: null, coverage: 0.8,
    });
  });

  it('two unscorable: the remaining sub-score is the overall score', () => {
    expect(score(fullGuideline, [page({ classes, classesWithIssues })])).toEqual({
      kind: 'scored', ...META, overall: 75, color: null, typography: null, components: 75, coverage: 0.2,
    });
    expect(score(fullGuideline, [page({ fonts })])).toMatchObject({ overall: 45.5, typography: 45.5, coverage: 0.3 });
    expect(score(fullGuideline, [page({ colourPairs })])).toMatchObject({ overall: 60, color: 60, coverage: 0.5 });
  });

  it('rounds to one decimal, from the unrounded sub-scores', () => {
    // colour 2 / 3 = 66.667 -> 66.7; typography 1 / 3 = 33.333 -> 33.3; overall (0.5 * 66.667 + 0.3 * 33.333) / 0.8 = 54.1667 -> 54.2
    const pages = [page({ colourPairs: [pair('#000000', '#ffffff', 2), pair('#000000', GREY_5A, 1)], fonts: [font('inter', 16, 1), font('arial', 16, 2)] })];
    expect(score(fullGuideline, pages)).toMatchObject({ overall: 54.2, color: 66.7, typography: 33.3, coverage: 0.8 });
  });

  it('unscorable: no guideline, an empty guideline, or no sub-score computable', () => {
    const pages = [page({ colourPairs, fonts, classes })];
    expect(score(null, pages)).toEqual({ kind: 'unscorable', ...META, reason: 'no-guideline' });
    expect(score(guideline({}), pages)).toEqual({ kind: 'unscorable', ...META, reason: 'empty-guideline' });
    expect(score(guideline({ updatedAt: META.computedAt }), [])).toMatchObject({ reason: 'empty-guideline' });
    expect(score(fullGuideline, [])).toEqual({ kind: 'unscorable', ...META, reason: 'all-subs-unscorable' });
    expect(score(guideline({ colors: [{ name: 'Pink', value: '#ff00ff' }] }), pages)).toMatchObject({ reason: 'all-subs-unscorable' });
  });

  it('the breakdown says why each sub-score is missing', () => {
    const breakdown = brandBreakdown({ ...fullGuideline, componentTokens: [{ name: '--brand-radius', kind: 'css-variable' }] }, [page({ fonts })]);
    expect(breakdown).toEqual({
      color: { kind: 'unscorable', reason: 'no-branded-issues' },
      typography: { kind: 'scored', value: (5 / 11) * 100, passed: 5, total: 11 },
      components: { kind: 'unscorable', reason: 'no-component-tokens' },
      cssVariables: [{ name: '--brand-radius', declarations: 0 }],
    });
  });

  it('is deterministic and leaves its inputs alone', () => {
    const pages = [page({ colourPairs, fonts, classes, classesWithIssues })];
    const before = JSON.stringify([fullGuideline, pages]);
    expect(scoreBrand(fullGuideline, pages, META)).toEqual(scoreBrand(fullGuideline, pages, META));
    expect(JSON.stringify([fullGuideline, pages])).toBe(before);
  });

  it('matches the schema example: 0.5 * 75 + 0.3 * 100 + 0.2 * 75 = 82.5', () => {
    const pages = [page({
      colourPairs: [pair('#000000', '#ffffff', 3), pair('#000000', GREY_5A, 1)], // 75
      fonts: [font('inter', 16, 2)], // 100
      classes: { 'btn-primary': 4 }, classesWithIssues: { 'btn-primary': 1 }, // 75
    })];
    expect(score(fullGuideline, pages)).toEqual({ kind: 'scored', ...META, overall: 82.5, color: 75, typography: 100, components: 75, coverage: 1 });
  });
});
