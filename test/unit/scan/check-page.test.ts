/**
 * Each fixture page's findings, checked in a worker exactly as the server does. jsdom has no layout
 * and no canvas, so axe-core cannot measure contrast: color-contrast (and, for AAA,
 * color-contrast-enhanced) comes back as "needs review" (a warning) on the first text element of
 * every page with text, contrast.html included. A real browser is needed to fail it for certain.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage } from '../../../src/domain/scan/check-page.js';
import { createCheckPool, type CheckPool } from '../../../src/domain/scan/pool.js';
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

describe('fixture pages under WCAG2AA', () => {
  it('index.html: an image without alt', async () => {
    const page = await check('index.html');
    expect(findings(page)).toEqual(['error:image-alt:1.1.1@img', CONTRAST_REVIEW]);
    const imageAlt = page.issues.find((i) => i.code === 'image-alt')!;
    expect(imageAlt).toEqual({
      code: 'image-alt',
      wcagCriterion: '1.1.1',
      wcagCriteria: ['1.1.1'],
      type: 'error',
      impact: 'critical',
      message: expect.stringMatching(/^Fix any of the following:\n {2}Element does not have an alt attribute/),
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
    expect(findings(await check('form.html'))).toEqual(['error:label:4.1.2@#name', 'error:select-name:4.1.2@#topic', CONTRAST_REVIEW]);
  });

  it('links.html: an empty link (2.4.4 and 4.1.2)', async () => {
    const page = await check('links.html');
    expect(findings(page)).toEqual(['error:link-name:2.4.4+4.1.2@a[href="/x"]', 'warning:color-contrast:1.4.3@#top']);
    expect(page.issues.find((i) => i.code === 'link-name')).toMatchObject({ wcagCriterion: '2.4.4', impact: 'serious', context: '<a href="/x"></a>' });
  });

  it('nolang.html: no lang on <html>; the context is cut to 300 characters', async () => {
    const page = await check('nolang.html');
    expect(findings(page)).toEqual(['error:html-has-lang:3.1.1@html', CONTRAST_REVIEW]);
    const context = page.issues.find((i) => i.code === 'html-has-lang')!.context;
    expect(context.length).toBeLessThanOrEqual(300);
    expect(context.startsWith('<html><head>')).toBe(true);
  });

  it('contrast.html: low contrast is only "needs review" without a browser', async () => {
    const page = await check('contrast.html');
    expect(findings(page)).toEqual([CONTRAST_REVIEW]);
    expect(page.issues[0]).toMatchObject({ type: 'warning', impact: 'serious', message: expect.stringMatching(/could not be measured without a browser/) });
  });

  it('clean.html: no errors, only the contrast review', async () => {
    expect(findings(await check('clean.html'))).toEqual([CONTRAST_REVIEW]);
  });
});

describe('the standard filters rules', () => {
  it('WCAG2A drops AA rules such as color-contrast', async () => {
    expect(findings(await check('index.html', 'WCAG2A'))).toEqual(['error:image-alt:1.1.1@img']);
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
      'warning:color-contrast-enhanced:1.4.6@#top',
      'warning:color-contrast:1.4.3@#top',
      'warning:identical-links-same-purpose:2.4.9@a[href$="form.html"]',
    ]);
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
