/**
 * Each fixture page's findings on the jsdom engine, checked in a worker exactly as the server does.
 * jsdom has no layout and no canvas, so axe-core cannot measure contrast: color-contrast (and, for
 * AAA, color-contrast-enhanced) is listed as not evaluated ("needs a browser"), never as an issue
 * pinned to the first heading, and never as passed.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage } from '../../../src/domain/scan/check-page.js';
import { createCheckPool } from '../../../src/compute/check-pool.js';
import type { CheckPool } from '../../../src/domain/scan/check-pool.js';
import type { CheckedPage, WcagStandard } from '../../../src/domain/scan/types.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/site/${name}`, import.meta.url), 'utf8');
const BASE = 'https://fixture.example/';

let pool: CheckPool;
beforeAll(() => { pool = createCheckPool(2); });
afterAll(async () => { await pool.close(); });

const check = (name: string, standard: WcagStandard = 'WCAG2AA') => pool.check(fixture(name), new URL(name, BASE).href, standard);

/** "type:code:criteria@selector", sorted: the exact findings of a page. */
function findings(page: CheckedPage): string[] {
  return page.issues.map((i) => `${i.type}:${i.code}:${i.wcagCriteria.join('+')}@${i.selector}`).sort();
}

const CONTRAST_REVIEW = 'warning:color-contrast:1.4.3@h1';
const notEvaluated = (page: CheckedPage) => page.notEvaluated.map((n) => n.code);

describe('fixture pages under WCAG2AA', () => {
  it('index.html: an image without alt', async () => {
    const page = await check('index.html');
    expect(findings(page)).toEqual(['error:image-alt:1.1.1@img']);
    expect(findings(page)).not.toContain(CONTRAST_REVIEW);
    expect(page.notEvaluated).toContainEqual({ code: 'color-contrast', wcagCriteria: ['1.4.3'], reason: 'needs a browser', detail: expect.stringMatching(/browser/) });
    const imageAlt = page.issues.find((i) => i.code === 'image-alt')!;
    expect(imageAlt).toEqual({
      code: 'image-alt',
      wcagCriterion: '1.1.1',
      wcagCriteria: ['1.1.1'],
      en301549: '9.1.1.1',
      type: 'error',
      impact: 'critical',
      message: expect.stringMatching(/^Images must have alternative text: element does not have an alt attribute, at img \(<img src="\/logo\.png">\); see https:\/\/dequeuniversity\.com\/rules\/axe\/4\.\d+\/image-alt$/),
      selector: 'img',
      context: '<img src="/logo.png">',
      helpUrl: expect.stringMatching(/^https:\/\/dequeuniversity\.com\/rules\/axe\/4\.\d+\/image-alt$/),
    });
    expect(page.title).toBe('Fixture home');
  });

  it('index.html: links resolved against the page URL, http(s) only', async () => {
    const page = await check('index.html');
    expect(page.links).toEqual([
      `${BASE}form.html`, `${BASE}links.html#top`, `${BASE}nolang.html`, `${BASE}contrast.html?theme=light`, `${BASE}form.html#name`, `${BASE}brochure.pdf`,
    ]);
  });

  it('form.html: unlabeled input and select (axe-core 4.x tags both 4.1.2 only)', async () => {
    expect(findings(await check('form.html'))).toEqual(['error:label:4.1.2@#name', 'error:select-name:4.1.2@#topic']);
  });

  it('links.html: an empty link (2.4.4 and 4.1.2)', async () => {
    const page = await check('links.html');
    expect(findings(page)).toEqual([
      'error:link-name:2.4.4+4.1.2@a[href="/x"]',
      // Two "Read more" links to different pages in one context (2.4.4, a check beyond axe).
      'warning:pactum-link-purpose:2.4.4@p:nth-of-type(1) > a',
      'warning:pactum-link-purpose:2.4.4@p:nth-of-type(2) > a',
    ]);
    expect(page.issues.find((i) => i.code === 'pactum-link-purpose')).toMatchObject({
      evidence: expect.stringMatching(/links named "Read more" in main lead to \/form\.html, \/nolang\.html/),
      helpUrl: 'https://www.w3.org/WAI/WCAG22/Understanding/link-purpose-in-context.html',
    });
    expect(page.issues.find((i) => i.code === 'link-name')).toMatchObject({ wcagCriterion: '2.4.4', impact: 'serious', context: '<a href="/x"></a>' });
  });

  it('nolang.html: no lang on <html>; the context is cut to 300 characters', async () => {
    const page = await check('nolang.html');
    expect(findings(page)).toEqual(['error:html-has-lang:3.1.1@html']);
    const context = page.issues.find((i) => i.code === 'html-has-lang')!.context;
    expect(context.length).toBeLessThanOrEqual(300);
    expect(context.startsWith('<html><head>')).toBe(true);
  });

  it('contrast.html: low contrast is not evaluated without a browser (never passed)', async () => {
    const page = await check('contrast.html');
    expect(findings(page)).toEqual([]);
    expect(notEvaluated(page)).toEqual(expect.arrayContaining(['color-contrast', 'link-in-text-block', 'pactum-focus-visible', 'pactum-keyboard-trap', 'pactum-reflow']));
  });

  it('clean.html: no issues; what jsdom cannot decide is listed', async () => {
    const page = await check('clean.html');
    expect(findings(page)).toEqual([]);
    expect(page.notEvaluated.every((n) => n.reason === 'needs a browser')).toBe(true);
  });

  it('a page with an SVG link is checked, and its link followed', async () => {
    const html = '<!doctype html><html lang="en"><title>SVG</title><main><h1>SVG</h1><svg><a href="/next.html"><text>Next</text></a></svg><svg><a xlink:href="/old.html"><text>Old</text></a></svg><img src="a.png"></main></html>';
    const page = await check('clean.html').then(() => pool.check(html, BASE, 'WCAG2AA'));
    expect(findings(page)).toContain('error:image-alt:1.1.1@img');
    expect(page.links).toEqual([`${BASE}next.html`, `${BASE}old.html`]);
  });

  it('a page with scripts says their content was not checked', async () => {
    const page = await pool.check('<!doctype html><html lang="en"><title>S</title><div id="app"></div><script>app.innerHTML = "<img src=x>"</script></html>', BASE, 'WCAG2AA');
    expect(page.notEvaluated).toContainEqual(expect.objectContaining({ code: 'scripted-content', reason: 'needs a browser' }));
  });
});

describe('the standard filters rules', () => {
  it('WCAG2A drops AA rules such as color-contrast, and AA checks beyond axe', async () => {
    const page = await check('index.html', 'WCAG2A');
    expect(findings(page)).toEqual(['error:image-alt:1.1.1@img']);
    expect(notEvaluated(page)).not.toContain('color-contrast');
    expect(notEvaluated(page)).not.toContain('pactum-focus-visible');
    expect(notEvaluated(page)).toContain('pactum-keyboard-trap');
    expect(findings(await check('clean.html', 'WCAG2A'))).toEqual([]);
  });

  it('identical-links-same-purpose (2.4.9, AAA) appears for WCAG2AAA only', async () => {
    const aa = await check('links.html', 'WCAG2AA');
    const aaa = await check('links.html', 'WCAG2AAA');
    expect(aa.issues.map((i) => i.code)).not.toContain('identical-links-same-purpose');
    expect(aaa.issues.filter((i) => i.code === 'identical-links-same-purpose')).toEqual([
      expect.objectContaining({ type: 'warning', wcagCriterion: '2.4.9', impact: 'minor' }),
    ]);
    expect(findings(aaa)).toEqual([
      'error:link-name:2.4.4+4.1.2@a[href="/x"]',
      'warning:identical-links-same-purpose:2.4.9@a[href$="form.html"]',
      'warning:pactum-link-purpose:2.4.4@p:nth-of-type(1) > a',
      'warning:pactum-link-purpose:2.4.4@p:nth-of-type(2) > a',
    ]);
    expect(notEvaluated(aaa)).toContain('color-contrast-enhanced');
  });

  it('never reports best-practice rules', async () => {
    // A page with no <main> or <h1> fails best-practice rules (landmark-one-main, page-has-heading-one).
    const page = await pool.check('<!doctype html><html lang="en"><title>t</title><div>text</div></html>', BASE, 'WCAG2AAA');
    expect(page.issues.map((i) => i.code)).not.toContain('landmark-one-main');
    expect(page.issues.map((i) => i.code)).not.toContain('page-has-heading-one');
    expect(page.issues.every((i) => i.wcagCriterion !== null)).toBe(true);
  });
});

describe('checkPage in-process', () => {
  it('gives the same findings as the worker and runs no page scripts', async () => {
    const html = fixture('form.html').replace('</body>', '<script>document.title = "changed"; document.body.innerHTML = "";</script></body>');
    const page = await checkPage(html, `${BASE}form.html`, 'WCAG2AA');
    expect(page.title).toBe('Fixture form');
    expect(findings(page)).toEqual(findings(await check('form.html')));
  });
});
