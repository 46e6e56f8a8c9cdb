import { describe, expect, it } from 'vitest';
import { draft, expectAxeFixes, parse } from './axe-helpers.js';

const fix = (html: string) => draft('1.1.1', html, { issueMessage: 'Images must have alternative text' });

describe('1.1.1 Non-text Content', () => {
  it('adds an alt placeholder to an informative image and changes nothing else', async () => {
    const html = '<img src="/hero.jpg" class="hero" width="800">';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<img src="/hero.jpg" class="hero" width="800" alt="TODO: describe the image">');
    expect(result.placeholders).toEqual(['TODO: describe the image']);
    expect(result.effort).toBe('low');
    await expectAxeFixes(html, result.fixedHtml, ['image-alt']);
  });

  it('gives decorative images alt="" (role, aria-hidden, spacer file names and classes)', async () => {
    const html = [
      '<img src="/img/spacer.gif" width="1" height="1">',
      '<img src="/photo.jpg" role="presentation">',
      '<img src="/ornament.png" aria-hidden="true">',
      '<img src="/a.png" class="divider-line">',
    ].join('\n');
    const result = fix(html);
    const imgs = Array.from(parse(result.fixedHtml).querySelectorAll('img'));
    expect(imgs.map((i) => i.getAttribute('alt'))).toEqual(['', '', '', '']);
    expect(result.placeholders).toEqual([]);
    expect(result.effort).toBe('high'); // four elements
    await expectAxeFixes(html, result.fixedHtml, ['image-alt']);
  });

  it('uses the link-target placeholder for an image that is a link\'s only content', async () => {
    const html = '<a href="/cart"><img src="/cart.png"></a>';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<a href="/cart"><img src="/cart.png" alt="TODO: describe the link target"></a>');
    await expectAxeFixes(html, result.fixedHtml, ['image-alt', 'link-name']);
  });

  it('keeps the original markup style: quotes, self-closing slash, surroundings', () => {
    const html = "<figure>\n  <img src='/chart.png' />\n  <figcaption>Sales 2024</figcaption>\n</figure>";
    expect(fix(html).fixedHtml).toBe("<figure>\n  <img src='/chart.png' alt=\"TODO: describe the image\" />\n  <figcaption>Sales 2024</figcaption>\n</figure>");
  });

  it('names an image button after the action its file name suggests', async () => {
    const html = '<form action="/search"><input type="text" aria-label="Query"><input type="image" src="/icons/search.png"></form>';
    const result = fix(html);
    expect(parse(result.fixedHtml).querySelector('input[type=image]')!.getAttribute('alt')).toBe('Search');
    await expectAxeFixes(html, result.fixedHtml, ['input-image-alt']);
  });

  it('adds a placeholder to an image button whose purpose it cannot guess', async () => {
    const html = '<input type="image" src="/btn-17.png">';
    const result = fix(html);
    expect(result.placeholders).toEqual(['TODO: describe what the button does']);
    await expectAxeFixes(html, result.fixedHtml, ['input-image-alt']);
  });

  it('adds alt text to image-map areas', async () => {
    const html = '<img src="/map.png" usemap="#m" alt="Office map"><map name="m"><area shape="rect" coords="0,0,10,10" href="/north"><area shape="rect" coords="10,10,20,20" href="/south" title="South office"></map>';
    const result = fix(html);
    const areas = Array.from(parse(result.fixedHtml).querySelectorAll('area'));
    expect(areas.map((a) => a.getAttribute('alt'))).toEqual(['TODO: describe the link target', 'South office']);
    await expectAxeFixes(html, result.fixedHtml, ['area-alt']);
  });

  it('gives an SVG with role="img" a name', async () => {
    const html = '<svg role="img" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4"/></svg>';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<svg role="img" viewBox="0 0 10 10" aria-label="TODO: describe the graphic"><circle cx="5" cy="5" r="4"/></svg>');
    await expectAxeFixes(html, result.fixedHtml, ['svg-img-alt']);
  });

  it('fills an empty <title> in an SVG and adds role="img"', () => {
    const html = '<svg viewBox="0 0 10 10"><title></title><path d="M0 0h10v10z"/></svg>';
    const doc = parse(fix(html).fixedHtml);
    const svg = doc.querySelector('svg')!;
    expect(svg.getAttribute('role')).toBe('img');
    expect(svg.querySelector('title')!.textContent).toBe('TODO: describe the graphic');
  });

  it('hides a decorative SVG next to text inside a button', async () => {
    const html = '<button><svg viewBox="0 0 8 8"><path d="M0 0h8v8z"/></svg> Save</button>';
    const result = fix(html);
    expect(parse(result.fixedHtml).querySelector('svg')!.getAttribute('aria-hidden')).toBe('true');
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('names other role="img" elements', async () => {
    const html = '<div role="img" class="rating" style="width:80px;height:16px"></div>';
    const result = fix(html);
    await expectAxeFixes(html, result.fixedHtml, ['role-img-alt']);
  });

  it('leaves images that already have alt text alone', () => {
    const html = '<img src="/a.png" alt="A red bicycle">';
    const result = fix(html);
    expect(result.fixedHtml).toBe(html);
    expect(result.placeholders).toEqual([]);
    expect(result.explanation).toMatch(/No image/);
  });

  it('fixes images inside a whole document and returns the whole document', () => {
    const html = '<!DOCTYPE html>\n<html lang="en">\n<head><title>Shop</title></head>\n<body>\n  <img src="/a.png">\n</body>\n</html>\n';
    const result = fix(html);
    expect(result.fixedHtml).toBe(html.replace('<img src="/a.png">', '<img src="/a.png" alt="TODO: describe the image">'));
  });
});
