import { JSDOM, VirtualConsole } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { navigationTarget } from '../../../src/domain/fix/recipes/keyboard.js';
import { draft, expectAxeFixes, inPage, parse } from './axe-helpers.js';

const fix = (html: string) => draft('2.1.1', html, { issueMessage: 'Element is not keyboard accessible' });

/** Presses a key on the element matching `selector` in a page where inline handlers run. */
function clicksAfterKey(html: string, selector: string, key: string): number {
  const dom = new JSDOM(inPage(html), { runScripts: 'dangerously', virtualConsole: new VirtualConsole() });
  const el = dom.window.document.querySelector(selector)!;
  el.dispatchEvent(new dom.window.KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
  const clicks = (dom.window as unknown as { clicks?: number }).clicks ?? 0;
  dom.window.close();
  return clicks;
}

describe('2.1.1 Keyboard', () => {
  it('turns a clickable div into a button, keeping classes, handler and content', async () => {
    const html = '<div class="btn btn-primary" onclick="buy()">Buy <b>now</b></div>';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<button type="button" class="btn btn-primary" onclick="buy()">Buy <b>now</b></button>');
    expect(result.effort).toBe('medium');
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('turns role="button" without tabindex into a real button', () => {
    const result = fix('<span role="button" class="menu-toggle">Menu</span>');
    expect(result.fixedHtml).toBe('<button type="button" class="menu-toggle">Menu</button>');
  });

  it('turns an element that only navigates into a link', async () => {
    const html = '<span class="nav" onclick="location.href=\'/contact\'">Contact</span>';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<a class="nav" href="/contact">Contact</a>');
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('gives an anchor without href its URL when the handler only navigates', () => {
    expect(fix('<a onclick="window.location = \'/help\'; return false;">Help</a>').fixedHtml).toBe('<a href="/help">Help</a>');
    expect(navigationTarget("location.assign('/x')")).toBe('/x');
    expect(navigationTarget('track(); go()')).toBeNull();
  });

  it('turns an anchor without href that runs an action into a button', () => {
    expect(fix('<a class="link" onclick="share()">Share</a>').fixedHtml).toBe('<button type="button" class="link" onclick="share()">Share</button>');
  });

  it('names an icon-only control it converts, from its icon class', async () => {
    const html = '<span class="icon-close" onclick="closeDialog()"></span>';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<button type="button" class="icon-close" onclick="closeDialog()" aria-label="Close"></button>');
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('wraps a clickable image in a button that takes over the handler', async () => {
    const html = '<img src="/zoom.png" alt="Zoom in" onclick="zoom()">';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<button type="button" onclick="zoom()"><img src="/zoom.png" alt="Zoom in"></button>');
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('puts a button inside a clickable list item instead of breaking the list', async () => {
    const html = '<ul><li onclick="pick(1)">One</li><li onclick="pick(2)">Two</li></ul>';
    const result = fix(html);
    expect(result.fixedHtml).toBe('<ul><li><button type="button" onclick="pick(1)">One</button></li><li><button type="button" onclick="pick(2)">Two</button></li></ul>');
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('makes a complex clickable card focusable with a role and an Enter/Space handler that clicks', async () => {
    const html = '<div class="card" onclick="window.clicks=(window.clicks||0)+1"><h3>Plan A</h3><p>For small teams.</p></div>';
    const result = fix(html);
    const card = parse(result.fixedHtml).querySelector('.card')!;
    expect(card.getAttribute('tabindex')).toBe('0');
    expect(card.getAttribute('role')).toBe('button');
    expect(card.getAttribute('onkeydown')).toContain('this.click()');
    expect(clicksAfterKey(html, '.card', 'Enter')).toBe(0);
    expect(clicksAfterKey(result.fixedHtml, '.card', 'Enter')).toBe(1);
    expect(clicksAfterKey(result.fixedHtml, '.card', ' ')).toBe(1);
    expect(clicksAfterKey(result.fixedHtml, '.card', 'a')).toBe(0);
    await expectAxeFixes(html, result.fixedHtml, []);
  });

  it('keeps an existing key handler and replaces tabindex="-1"', () => {
    const card = parse(fix('<div role="checkbox" aria-checked="false" tabindex="-1" onkeyup="toggle(event)">Agree</div>').fixedHtml).querySelector('div')!;
    expect(card.getAttribute('tabindex')).toBe('0');
    expect(card.getAttribute('role')).toBe('checkbox');
    expect(card.hasAttribute('onkeydown')).toBe(false);
  });

  it('leaves native controls and children of controls alone', () => {
    const html = '<button onclick="a()">A</button><a href="/b" onclick="track()"><span onclick="x()">B</span></a>';
    const result = fix(html);
    expect(result.fixedHtml).toBe(html);
    expect(result.effort).toBe('low');
  });
});
