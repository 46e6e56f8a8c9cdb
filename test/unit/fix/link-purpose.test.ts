import { describe, expect, it } from 'vitest';
import { isVagueLinkText } from '../../../src/domain/fix/recipes/link-purpose.js';
import { draft, expectAxeFixes, parse } from './axe-helpers.js';

const fix = (html: string) => draft('2.4.4', html, { issueMessage: 'Links must have discernible text' });

describe('2.4.4 Link Purpose (In Context)', () => {
  it('gives an empty link visible placeholder text', async () => {
    const html = '<a href="/pricing"></a>';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<a href="/pricing">TODO: describe the link target</a>');
    expect(result.placeholders).toEqual(['TODO: describe the link target']);
    await expectAxeFixes(html, result.fixedHtml, ['link-name']);
  });

  it('gives the only image of a link alt text', async () => {
    const html = '<a href="/"><img src="/logo.png"></a>';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<a href="/"><img src="/logo.png" alt="TODO: describe the link target"></a>');
    await expectAxeFixes(html, result.fixedHtml, ['link-name', 'image-alt']);
  });

  it('names icon links from the icon class or the site in the href', async () => {
    const html = '<a href="/search"><i class="fa fa-search"></i></a> <a href="https://www.linkedin.com/company/acme"><svg viewBox="0 0 8 8"><path d="M0 0h8v8z"/></svg></a>';
    const result = fix(html);
    const labels = Array.from(parse(result.fixedHtml).querySelectorAll('a'), (a) => a.getAttribute('aria-label'));
    expect(labels).toEqual(['Search', 'LinkedIn']);
    expect(result.placeholders).toEqual([]);
    await expectAxeFixes(html, result.fixedHtml, ['link-name']);
  });

  it('extends a vague link with the heading it belongs to, starting with the visible text', async () => {
    const html = '<article><h3>Annual report 2024</h3><p>Our year in numbers.</p><a href="/report">Read more »</a></article>';
    const result = fix(html);
    const link = parse(result.fixedHtml).querySelector('a')!;
    expect(link.getAttribute('aria-label')).toBe('Read more: Annual report 2024');
    expect(link.textContent).toBe('Read more »');
    expect(result.placeholders).toEqual([]);
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('uses a placeholder after the visible text when nothing tells the target (en, de, fr)', () => {
    for (const text of ['Click here', 'hier klicken', 'Weiterlesen', 'En savoir plus', 'cliquez ici', 'more']) {
      const html = `<p>Prices changed. <a href="/x">${text}</a></p>`;
      const result = fix(html);
      const label = parse(result.fixedHtml).querySelector('a')!.getAttribute('aria-label')!;
      expect(label.startsWith(text), label).toBe(true);
      expect(label).toContain('TODO: describe the link target');
      expect(result.placeholders).toEqual(['TODO: describe the link target']);
    }
  });

  it('leaves descriptive links alone', () => {
    const html = '<a href="/report">Read the annual report 2024</a>';
    expect(fix(html).fixedHtml).toBe(html);
  });

  it('knows vague texts in several languages', () => {
    for (const t of ['here', 'Read more…', 'mehr', 'lire la suite', 'leer más', 'lees meer', 'leggi di più']) expect(isVagueLinkText(t), t).toBe(true);
    expect(isVagueLinkText('Opening hours')).toBe(false);
  });

  it('counts several links as high effort', () => {
    const result = fix('<a href="/a"></a><a href="/b"></a><a href="/c">here</a>');
    expect(result.effort).toBe('high');
  });
});
