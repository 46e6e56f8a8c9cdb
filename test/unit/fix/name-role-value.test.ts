import { describe, expect, it } from 'vitest';
import { draft, expectAxeFixes, parse } from './axe-helpers.js';

const fix = (html: string, issueMessage = '') => draft('4.1.2', html, { issueMessage });

describe('4.1.2 Name, Role, Value', () => {
  it('names an icon-only button from its icon class and hides the icon', async () => {
    const html = '<button class="search-toggle"><i class="fa fa-search"></i></button>';
    const result = fix(html, 'Buttons must have discernible text');
    expect(result.fixedHtml).toBe('<button class="search-toggle" aria-label="Search"><i class="fa fa-search" aria-hidden="true"></i></button>');
    expect(result.placeholders).toEqual([]);
    await expectAxeFixes(html, result.fixedHtml, ['button-name']);
  });

  it('recognises close and menu icons, including SVG sprites', async () => {
    const html = '<button class="close"><svg><use href="#icon-x-mark"></use></svg></button><button><svg class="icon"><use href="/sprite.svg#menu"></use></svg></button>';
    const result = fix(html);
    const labels = Array.from(parse(result.fixedHtml).querySelectorAll('button'), (b) => b.getAttribute('aria-label'));
    expect(labels).toEqual(['Close', 'Menu']);
    await expectAxeFixes(html, result.fixedHtml, ['button-name']);
  });

  it('uses placeholders when it cannot guess, for buttons and links', async () => {
    const html = '<button class="x1"></button><a href="/p/17"><span class="c"></span></a>';
    const result = fix(html);
    expect(result.placeholders).toEqual(['TODO: describe the button action', 'TODO: describe the link target']);
    await expectAxeFixes(html, result.fixedHtml, ['button-name', 'link-name']);
  });

  it('adds required states to custom controls, reading initial values from classes', async () => {
    const html = [
      '<div role="checkbox" tabindex="0" class="chk is-checked">Agree</div>',
      '<span role="switch" tabindex="0">Dark mode</span>',
      '<div role="tablist"><button role="tab" class="active">One</button><button role="tab">Two</button></div>',
      '<div role="heading">Section</div>',
    ].join('');
    const result = fix(html, 'Required ARIA attributes must be provided');
    const doc = parse(result.fixedHtml);
    expect(doc.querySelector('[role=checkbox]')!.getAttribute('aria-checked')).toBe('true');
    expect(doc.querySelector('[role=switch]')!.getAttribute('aria-checked')).toBe('false');
    expect(Array.from(doc.querySelectorAll('[role=tab]'), (t) => t.getAttribute('aria-selected'))).toEqual(['true', 'false']);
    expect(doc.querySelector('[role=heading]')!.getAttribute('aria-level')).toBe('2');
    expect(result.effort).toBe('high');
    await expectAxeFixes(html, result.fixedHtml, ['aria-required-attr']);
  });

  it('adds aria-valuenow to a slider and aria-expanded to a combobox', async () => {
    const html = '<div role="slider" tabindex="0" aria-label="Volume" aria-valuemin="0" aria-valuemax="10" data-value="4"></div><input role="combobox" aria-label="City">';
    const result = fix(html, 'aria-required-attr');
    const doc = parse(result.fixedHtml);
    expect(doc.querySelector('[role=slider]')!.getAttribute('aria-valuenow')).toBe('4');
    expect(doc.querySelector('input')!.getAttribute('aria-expanded')).toBe('false');
    await expectAxeFixes(html, result.fixedHtml, ['aria-required-attr']);
  });

  it('adds aria-expanded to disclosure toggles from the state of what they control', () => {
    const html = '<button class="navbar-toggler" aria-controls="nav">Menu</button><nav id="nav" hidden></nav><button class="accordion-toggle is-open">FAQ</button>';
    const doc = parse(fix(html, 'state').fixedHtml);
    const [menu, faq] = Array.from(doc.querySelectorAll('button'));
    expect(menu!.getAttribute('aria-expanded')).toBe('false');
    expect(faq!.getAttribute('aria-expanded')).toBe('true');
  });

  it('titles iframes', async () => {
    const html = '<iframe src="https://www.youtube.com/embed/xyz" width="560" height="315"></iframe>';
    const result = fix(html, 'Frames must have an accessible name');
    expect(result.fixedHtml).toBe('<iframe src="https://www.youtube.com/embed/xyz" width="560" height="315" title="TODO: describe the frame content"></iframe>');
    expect(result.placeholders).toEqual(['TODO: describe the frame content']);
    await expectAxeFixes(html, result.fixedHtml, ['frame-title']);
  });

  it('labels fields that have no accessible name at all', async () => {
    const html = '<select name="size"><option>S</option><option>M</option></select>';
    const result = fix(html, 'Select element must have an accessible name');
    expect(result.fixedHtml).toBe('<label for="size">Size</label> <select name="size" id="size"><option>S</option><option>M</option></select>');
    await expectAxeFixes(html, result.fixedHtml, ['select-name']);
  });

  it('only runs the fixer the message points at', () => {
    const html = '<iframe src="/a"></iframe><button></button>';
    const doc = parse(fix(html, 'Frames must have an accessible name').fixedHtml);
    expect(doc.querySelector('iframe')!.getAttribute('title')).not.toBeNull();
    expect(doc.querySelector('button')!.hasAttribute('aria-label')).toBe(false);
  });
});
