/**
 * From HTML to brand score: fixture pages checked in the real worker pool, their style statistics
 * scored against a guideline. The numbers are worked out from the pages by hand below.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandBreakdown, scoreBrand, type BrandGuideline } from '../../../src/domain/brand/index.js';
import { contrastRatio } from '../../../src/domain/fix/colour.js';
import { createCheckPool } from '../../../src/compute/check-pool.js';
import type { CheckPool } from '../../../src/domain/scan/check-pool.js';
import type { CheckedPage } from '../../../src/domain/scan/types.js';
import { BRAND_PAGE } from '../scan/brand-fixture.js';

const META = { scanId: 'scn_brand_e2e', siteUrl: 'https://brand.example/', computedAt: '2026-11-20T09:31:05.000Z' };

const GUIDELINE: BrandGuideline = {
  colors: [
    { name: 'Brand blue', value: '#0b5fff', role: 'primary' },
    { name: 'Ink', value: '#1a1a1a', role: 'text' },
    { name: 'Paper', value: '#ffffff', role: 'background' },
  ],
  fonts: [{ family: 'Inter', role: 'body', minSizePx: 14 }, { family: 'Merriweather', role: 'heading' }],
  componentTokens: [
    { name: 'btn-primary', kind: 'class' },
    { name: 'btn-ghost' },
    { name: '--brand-radius', kind: 'css-variable', value: '6px' },
    { name: '--brand-shadow', kind: 'css-variable' },
  ],
  updatedAt: '2026-11-20T09:30:00.000Z',
};

let pool: CheckPool;
let brandPage: CheckedPage & { style: NonNullable<CheckedPage['style']> };
let contrastPage: typeof brandPage;

beforeAll(async () => {
  pool = createCheckPool(2);
  const contrastHtml = readFileSync(new URL('../../fixtures/site/contrast.html', import.meta.url), 'utf8');
  const withStyle = (page: CheckedPage) => ({ ...page, style: page.style! });
  [brandPage, contrastPage] = (await Promise.all([
    pool.check(BRAND_PAGE, 'https://brand.example/', 'WCAG2AA'),
    pool.check(contrastHtml, 'https://brand.example/contrast.html', 'WCAG2AA'),
  ])).map(withStyle) as [typeof brandPage, typeof brandPage];
});
afterAll(async () => { await pool.close(); });

describe('brand score of checked pages', () => {
  it('the brand fixture page alone', () => {
    // Colour, pairs involving brand blue, ink or paper (all 7 text elements):
    //   #1a1a1a on #ffffff x2  17.4:1  pass     #ffffff on #0b5fff x2  5.13:1 pass
    //   #0a5ffe on #eeeeee x1  4.44:1  fail (#0a5ffe is brand blue within the tolerance; normal text needs 4.5)
    //   #0b5fff on #85afff x1  2.34:1  fail (large text needs 3)     #767676 on #ffffff x1  4.54:1 pass
    //   5 / 7 = 71.43
    // Typography: Inter 16px x2, Inter 16px bold x2, Merriweather 32px x1 pass; Inter 12px (< 14) and Comic Sans fail: 5 / 7 = 71.43
    // Components: btn-primary on 3 elements (the img without alt has an issue), btn-ghost on 2 (the empty link has one): 3 / 5 = 60
    // Overall: 0.5 * 71.43 + 0.3 * 71.43 + 0.2 * 60 = 69.14
    expect(scoreBrand(GUIDELINE, [brandPage], META)).toEqual({
      kind: 'scored', ...META, overall: 69.1, color: 71.4, typography: 71.4, components: 60, coverage: 1,
    });
  });

  it('rests on these contrast ratios', () => {
    expect(contrastRatio('#1a1a1a', '#ffffff')).toBeCloseTo(17.4, 1);
    expect(contrastRatio('#ffffff', '#0b5fff')).toBeCloseTo(5.13, 2);
    expect(contrastRatio('#0a5ffe', '#eeeeee')).toBeCloseTo(4.435, 3);
    expect(contrastRatio('#0b5fff', '#85afff')).toBeCloseTo(2.34, 2);
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
  });

  it('two pages: counts are summed before the shares are taken', () => {
    // contrast.html adds 4 text elements on brand white, in the default serif: black h1 (21:1) and the
    // #0000ee link (9.4:1) pass, #bbbbbb (1.9:1) and #cccccc (1.6:1) fail; its one class is not a token.
    // Colour (5 + 2) / (7 + 4) = 63.64; typography 5 / 11 = 45.45; components 60 (unchanged)
    // Overall 0.5 * 63.64 + 0.3 * 45.45 + 0.2 * 60 = 57.45
    expect(scoreBrand(GUIDELINE, [brandPage, contrastPage], META)).toEqual({
      kind: 'scored', ...META, overall: 57.5, color: 63.6, typography: 45.5, components: 60, coverage: 1,
    });
  });

  it('css-variable tokens: --brand-radius is declared once, --brand-shadow nowhere', () => {
    expect(brandBreakdown(GUIDELINE, [brandPage, contrastPage]).cssVariables).toEqual([
      { name: '--brand-radius', declarations: 1 },
      { name: '--brand-shadow', declarations: 0 },
    ]);
  });

  it('survives a round trip through JSON, as stored pages do', () => {
    const stored = JSON.parse(JSON.stringify([brandPage, contrastPage])) as (typeof brandPage)[];
    expect(scoreBrand(GUIDELINE, stored, META)).toEqual(scoreBrand(GUIDELINE, [brandPage, contrastPage], META));
  });

  it('a page without brand colours or classes: only typography is scored, and none of its text is in a brand font', () => {
    expect(scoreBrand({ ...GUIDELINE, colors: [{ name: 'Pink', value: '#ff00ff' }], fonts: [{ family: 'Lobster' }] }, [contrastPage], META)).toEqual({
      kind: 'scored', ...META, overall: 0, color: null, typography: 0, components: null, coverage: 0.3,
    });
    expect(scoreBrand({ ...GUIDELINE, colors: [{ name: 'Pink', value: '#ff00ff' }], fonts: [] }, [contrastPage], META))
      .toEqual({ kind: 'unscorable', ...META, reason: 'all-subs-unscorable' });
  });
});
