import { describe, expect, it } from 'vitest';
import { contrastRatio, parseColour } from '../../../src/domain/fix/colour.js';
import { parseDeclarations, winningDeclaration } from '../../../src/domain/fix/css.js';
import { draft, expectAxeFixes, parse } from './axe-helpers.js';

/** The ratio the fixed CSS and inline style produce, read back independently of the engine. */
function ratioIn(css: string, property = 'color', background = 'background-color'): number {
  const decls = parseDeclarations(css);
  const fg = winningDeclaration(decls, [property])!;
  const bg = winningDeclaration(decls, [background, 'background']);
  const colourOf = (value: string) => parseColour(value.split(/\s+/).find((t) => parseColour(t) !== null)!)!;
  return contrastRatio(colourOf(fg.value), bg === null ? '#fff' : colourOf(bg.value));
}

describe('1.4.3 Contrast (Minimum)', () => {
  it('darkens #777 on white to #767676 in the rule, and says so with both ratios', () => {
    const result = draft('1.4.3', '<button class="btn">Buy</button>', { cssContext: '.btn { color: #777; background-color: #fff }' });
    expect(result.fixedCss).toBe('.btn { color: #767676; background-color: #fff }');
    expect(result.fixedHtml).toBe('<button class="btn">Buy</button>');
    expect(result.explanation).toContain('4.48:1');
    expect(result.explanation).toContain('4.54:1');
    expect(result.effort).toBe('low');
    expect(result.placeholders).toEqual([]);
  });

  it('reads bare declarations and the background shorthand', () => {
    const result = draft('1.4.3', '<p>Fine print</p>', { cssContext: 'color: #999; background: #eee' });
    expect(result.fixedCss).toMatch(/^color: #[0-9a-f]{6}; background: #eee$/);
    expect(ratioIn(result.fixedCss!)).toBeGreaterThanOrEqual(4.5);
    expect(result.explanation).toContain('2.46:1');
  });

  it('fixes an inline colour in the HTML, assumes white when no background is known, and says so', () => {
    const result = draft('1.4.3', '<p class="note" style="color: #aaa">Light text</p>');
    expect(result.fixedHtml).toBe('<p class="note" style="color: #767676">Light text</p>');
    expect(result.fixedCss).toBe('color: #767676;');
    expect(result.explanation).toMatch(/white \(#ffffff\) was assumed/);
  });

  it('uses an ancestor inline background and changes whichever colour needs the smaller step', () => {
    const html = '<div style="background:#336699"><span style="color:#555">Notice</span></div>';
    const result = draft('1.4.3', html);
    const doc = parse(result.fixedHtml);
    const bg = doc.querySelector('div')!.getAttribute('style')!.replace('background:', '');
    const fg = doc.querySelector('span')!.getAttribute('style')!.replace('color:', '');
    expect(contrastRatio(fg, bg)).toBeGreaterThanOrEqual(4.5);
  });

  it('darkens the background of a white-on-green button rather than turning the text dark', () => {
    const result = draft('1.4.3', '<a class="cta">Go</a>', { cssContext: '.cta { color: #fff; background-color: #5cb85c; font-size: 14px }' });
    expect(result.fixedCss).toMatch(/color: #fff; background-color: #(?!5cb85c)[0-9a-f]{6}/);
    expect(ratioIn(result.fixedCss!)).toBeGreaterThanOrEqual(4.5);
  });

  it('applies 3:1 to large text (24px, or 18.66px bold) and 4.5:1 otherwise', () => {
    const large = draft('1.4.3', '<p>x</p>', { cssContext: 'p { color: #949494; font-size: 24px }' });
    expect(large.fixedCss).toBe('p { color: #949494; font-size: 24px }');
    expect(large.explanation).toMatch(/already/);
    const boldSmall = draft('1.4.3', '<p>x</p>', { cssContext: 'p { color: #949494; font-size: 19px; font-weight: 700 }' });
    expect(boldSmall.explanation).toMatch(/already/);
    const normal = draft('1.4.3', '<p>x</p>', { cssContext: 'p { color: #949494; font-size: 18px; font-weight: 700 }' });
    expect(ratioIn(normal.fixedCss!)).toBeGreaterThanOrEqual(4.5);
    const heading = draft('1.4.3', '<h2>Title</h2>', { cssContext: 'h2 { color: #949494 }' });
    expect(heading.explanation).toMatch(/large text/);
  });

  it('prefers the resting state over :hover and handles translucent colours', () => {
    const result = draft('1.4.3', '<p>x</p>', { cssContext: 'p { color: rgba(0,0,0,.4) } p:hover { color: #000 }' });
    expect(result.fixedCss).toMatch(/^p \{ color: #[0-9a-f]{6} \} p:hover \{ color: #000 \}$/);
    expect(ratioIn(result.fixedCss!.split('p:hover')[0]!)).toBeGreaterThanOrEqual(4.5);
  });

  it('reports colours that already pass without changing them', () => {
    const result = draft('1.4.3', '<p>x</p>', { cssContext: 'p { color: #000; background: #fff }' });
    expect(result.fixedCss).toBe('p { color: #000; background: #fff }');
    expect(result.explanation).toContain('21.00:1');
  });

  it('says so when there is no colour to work with', () => {
    const result = draft('1.4.3', '<p>x</p>');
    expect(result.fixedHtml).toBe('<p>x</p>');
    expect(result.explanation).toMatch(/No text colour/);
  });

  it('introduces no axe violation (color-contrast itself needs layout, which jsdom lacks)', async () => {
    const html = '<p style="color:#aaa">Light</p>';
    await expectAxeFixes(html, draft('1.4.3', html).fixedHtml, []);
  });
});

describe('1.4.6 Contrast (Enhanced)', () => {
  it('requires 7:1 for normal text', () => {
    const result = draft('1.4.6', '<p>x</p>', { cssContext: 'p { color: #767676; background-color: #ffffff }' });
    expect(result.fixedCss).toBe('p { color: #595959; background-color: #ffffff }');
    expect(ratioIn(result.fixedCss!)).toBeGreaterThanOrEqual(7);
    expect(result.explanation).toContain('7:1');
  });

  it('requires 4.5:1 for large text', () => {
    const result = draft('1.4.6', '<h1>Big</h1>', { cssContext: 'h1 { color: #888 }' });
    expect(ratioIn(result.fixedCss!)).toBeGreaterThanOrEqual(4.5);
    expect(ratioIn(result.fixedCss!)).toBeLessThan(7);
  });
});

describe('1.4.11 Non-text Contrast', () => {
  it('darkens a light input border to 3:1', () => {
    const result = draft('1.4.11', '<input class="field">', { cssContext: '.field { border: 1px solid #ccc; background: #fff }' });
    expect(result.fixedCss).toMatch(/^\.field \{ border: 1px solid #[0-9a-f]{6}; background: #fff \}$/);
    const border = /solid (#[0-9a-f]{6})/.exec(result.fixedCss!)![1]!;
    expect(contrastRatio(border, '#fff')).toBeGreaterThanOrEqual(3);
    expect(result.explanation).toMatch(/border colour #cccccc .*1\.61:1/);
  });

  it('uses an inline border-color and the control colour when there is no border', () => {
    const inline = draft('1.4.11', '<button style="border-color: #ddd">OK</button>');
    const value = /border-color: (#[0-9a-f]{6})/.exec(inline.fixedHtml)![1]!;
    expect(contrastRatio(value, '#fff')).toBeGreaterThanOrEqual(3);
    const icon = draft('1.4.11', '<span class="icon"></span>', { cssContext: '.icon { color: #bbb; background-color: #fff }' });
    expect(ratioIn(icon.fixedCss!)).toBeGreaterThanOrEqual(3);
  });
});
