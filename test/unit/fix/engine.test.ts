import { describe, expect, it } from 'vitest';
import { blockStructureProblems, serializeBlockAttributes } from '../../../src/domain/fix/block-editor.js';
import { draftFix, SUPPORTED_CRITERIA, UnsupportedCriterionError, type FixInput } from '../../../src/domain/fix/index.js';
import { sentences } from './axe-helpers.js';

/** One realistic finding per supported criterion. */
const FINDINGS: readonly FixInput[] = [
  { criterionId: '1.1.1', issueMessage: 'Images must have alternative text', htmlContext: '<img src="/hero.jpg">', platform: 'html' },
  { criterionId: '1.3.1', issueMessage: 'Content structure', htmlContext: '<p><b>Our services</b></p>\n<p>• Web design</p>\n<p>• Hosting</p>\n<p>Call us.</p>', platform: 'html' },
  { criterionId: '1.4.3', issueMessage: 'Elements must meet minimum color contrast ratio thresholds', htmlContext: '<a class="btn" href="/buy">Buy</a>', cssContext: '.btn { color: #777; background-color: #fff }', platform: 'html' },
  { criterionId: '1.4.6', issueMessage: 'Enhanced contrast', htmlContext: '<p style="color:#767676">Small print</p>', platform: 'html' },
  { criterionId: '1.4.11', issueMessage: 'Non-text contrast', htmlContext: '<input class="f" name="q">', cssContext: '.f { border: 1px solid #ddd }', platform: 'html' },
  { criterionId: '2.1.1', issueMessage: 'Not keyboard accessible', htmlContext: '<div class="btn" onclick="buy()">Buy</div>', platform: 'html' },
  { criterionId: '2.4.2', issueMessage: 'Documents must have <title>', htmlContext: '<!doctype html><html lang="en"><head></head><body><h1>Shop</h1></body></html>', platform: 'html' },
  { criterionId: '2.4.4', issueMessage: 'Link purpose', htmlContext: '<div class="card"><h3>Annual report</h3><a class="btn" href="/report">Read more</a></div>', platform: 'html' },
  { criterionId: '3.1.1', issueMessage: '<html> element must have a lang attribute', htmlContext: '<html class="no-js">', platform: 'html' },
  { criterionId: '3.3.2', issueMessage: 'Form elements must have labels', htmlContext: '<input type="text" name="first_name">', platform: 'html' },
  { criterionId: '4.1.2', issueMessage: 'Buttons must have discernible text', htmlContext: '<button><i class="icon-menu"></i></button>', platform: 'html' },
];

describe('draftFix', () => {
  it('supports exactly the criteria with a recipe, in WCAG order', () => {
    expect(SUPPORTED_CRITERIA).toEqual(['1.1.1', '1.3.1', '1.4.3', '1.4.6', '1.4.11', '2.1.1', '2.4.2', '2.4.4', '3.1.1', '3.3.2', '4.1.2']);
    expect(FINDINGS.map((f) => f.criterionId)).toEqual(SUPPORTED_CRITERIA);
  });

  it('throws UnsupportedCriterionError for criteria without a recipe', () => {
    const input: FixInput = { criterionId: '2.5.8', issueMessage: 'Target size', htmlContext: '<a href="/">x</a>', platform: 'html' };
    expect(() => draftFix(input)).toThrow(UnsupportedCriterionError);
    expect(() => draftFix(input)).toThrow(/2\.5\.8/);
    expect(() => draftFix({ ...input, criterionId: 'nonsense' })).toThrow(UnsupportedCriterionError);
  });

  it('accepts the criterion with its name or a prefix', () => {
    const base = FINDINGS[0]!;
    expect(draftFix({ ...base, criterionId: '1.1.1 Non-text Content' })).toEqual(draftFix(base));
    expect(draftFix({ ...base, criterionId: 'WCAG 1.1.1' })).toEqual(draftFix(base));
  });

  it.each(FINDINGS)('is deterministic and well-formed for $criterionId', (input) => {
    const first = draftFix(input);
    const second = draftFix(structuredClone(input));
    expect(second).toEqual(first);
    expect(`${first.fixedHtml}${first.fixedCss ?? ''}`).not.toBe(`${input.htmlContext}${input.cssContext ?? ''}`);
    expect(['low', 'medium', 'high']).toContain(first.effort);
    const count = sentences(first.explanation);
    expect(count, first.explanation).toBeGreaterThanOrEqual(1);
    expect(count, first.explanation).toBeLessThanOrEqual(4);
    for (const placeholder of first.placeholders) {
      expect(placeholder.startsWith('TODO: ')).toBe(true);
      expect(`${first.fixedHtml}${first.fixedCss ?? ''}`).toContain(placeholder);
    }
  });

  it('returns fixedCss only for contrast fixes, with both ratios in the explanation', () => {
    for (const input of FINDINGS) {
      const result = draftFix(input);
      const contrast = input.criterionId.startsWith('1.4.');
      expect(result.fixedCss !== undefined, input.criterionId).toBe(contrast);
      if (contrast) expect(result.explanation).toMatch(/\d+\.\d\d:1.*\d+\.\d\d:1/);
    }
  });

  it('matches the example in the fix-draft contract', () => {
    const result = draftFix(FINDINGS[0]!);
    expect(result).toEqual({
      fixedHtml: '<img src="/hero.jpg" alt="TODO: describe the image">',
      explanation: expect.stringContaining('alt'),
      effort: 'low',
      placeholders: ['TODO: describe the image'],
    });
  });
});

describe('cms-block-editor platform', () => {
  const forBlocks = (input: FixInput) => draftFix({ ...input, platform: 'cms-block-editor' });

  it.each(FINDINGS)('produces balanced block delimiters for $criterionId', (input) => {
    const result = forBlocks(input);
    expect(blockStructureProblems(result.fixedHtml)).toEqual([]);
    expect(forBlocks(input)).toEqual(result);
  });

  it('wraps an image in an image block with its alt in the attributes', () => {
    expect(forBlocks(FINDINGS[0]!).fixedHtml).toBe(
      '<!-- wp:image {"alt":"TODO: describe the image"} --><figure class="wp-block-image"><img src="/hero.jpg" alt="TODO: describe the image"/></figure><!-- /wp:image -->',
    );
  });

  it('uses heading, list, list-item and paragraph blocks', () => {
    const html = forBlocks(FINDINGS[1]!).fixedHtml;
    expect(html).toBe(
      [
        '<!-- wp:heading {"level":2} --><h2 class="wp-block-heading">Our services</h2><!-- /wp:heading -->',
        '<!-- wp:list --><ul class="wp-block-list"><!-- wp:list-item --><li>Web design</li><!-- /wp:list-item --><!-- wp:list-item --><li>Hosting</li><!-- /wp:list-item --></ul><!-- /wp:list -->',
        '<!-- wp:paragraph --><p>Call us.</p><!-- /wp:paragraph -->',
      ].join('\n\n'),
    );
  });

  it('uses buttons blocks for button-styled links, inside a group for a card', () => {
    const html = forBlocks(FINDINGS[7]!).fixedHtml;
    expect(html).toContain('<!-- wp:group {"className":"card"} --><div class="wp-block-group card">');
    expect(html).toContain(
      '<!-- wp:buttons --><div class="wp-block-buttons"><!-- wp:button --><div class="wp-block-button"><a class="wp-block-button__link wp-element-button" href="/report" aria-label="Read more: Annual report">Read more</a></div><!-- /wp:button --></div><!-- /wp:buttons -->',
    );
  });

  it('keeps scripted controls and form fields in Custom HTML blocks', () => {
    expect(forBlocks(FINDINGS[5]!).fixedHtml).toBe('<!-- wp:html --><button type="button" class="btn" onclick="buy()">Buy</button><!-- /wp:html -->');
    expect(forBlocks(FINDINGS[9]!).fixedHtml).toMatch(/^<!-- wp:html --><label for="first-name">First name<\/label> <input [^>]+><!-- \/wp:html -->$/);
  });

  it('uses table and ordered list blocks', () => {
    const table = forBlocks({ criterionId: '1.3.1', issueMessage: 'table', htmlContext: '<table><tr><td>Name</td><td>Age</td></tr><tr><td>Ann</td><td>31</td></tr></table>', platform: 'html' });
    expect(table.fixedHtml).toMatch(/^<!-- wp:table --><figure class="wp-block-table"><table>.*<th scope="col">Name<\/th>.*<\/table><\/figure><!-- \/wp:table -->$/);
    const list = forBlocks({ criterionId: '1.3.1', issueMessage: 'list', htmlContext: '<p>2. Two<br>3. Three</p>', platform: 'html' });
    expect(list.fixedHtml).toBe('<!-- wp:list {"ordered":true,"start":2} --><ol start="2" class="wp-block-list"><!-- wp:list-item --><li>Two</li><!-- /wp:list-item --><!-- wp:list-item --><li>Three</li><!-- /wp:list-item --></ol><!-- /wp:list -->');
  });

  it('keeps blocks the input already had', () => {
    const input: FixInput = {
      criterionId: '1.1.1',
      issueMessage: 'Images must have alternative text',
      htmlContext: '<!-- wp:image {"id":12,"alt":""} --><figure class="wp-block-image"><img src="/a.jpg" class="wp-image-12"/></figure><!-- /wp:image -->',
      platform: 'cms-block-editor',
    };
    const html = draftFix(input).fixedHtml;
    expect(html).toBe('<!-- wp:image {"id":12,"alt":"TODO: describe the image"} --><figure class="wp-block-image"><img src="/a.jpg" class="wp-image-12" alt="TODO: describe the image"/></figure><!-- /wp:image -->');
    expect(blockStructureProblems(html)).toEqual([]);
  });

  it('explains where page-level fixes go in WordPress and keeps the fixed document', () => {
    const result = forBlocks(FINDINGS[8]!);
    expect(result.fixedHtml).toContain('lang="en"');
    expect(result.explanation).toMatch(/Site Language/);
    expect(forBlocks(FINDINGS[6]!).explanation).toMatch(/title-tag/);
  });

  it('escapes block attributes the way Gutenberg does, and detects broken nesting', () => {
    expect(serializeBlockAttributes({ alt: 'a "b" <c> -- & d' })).toBe('{"alt":"a \\u0022b\\u0022 \\u003cc\\u003e \\u002d\\u002d \\u0026 d"}');
    expect(blockStructureProblems('<!-- wp:list --><!-- wp:list-item --><!-- /wp:list --><!-- /wp:list-item -->')).not.toEqual([]);
    expect(blockStructureProblems('<!-- wp:paragraph --><p>x</p>')).toEqual(['<!-- wp:paragraph --> is never closed']);
    expect(blockStructureProblems('<!-- wp:group --><!-- wp:spacer /--><!-- /wp:group -->')).toEqual([]);
  });
});
