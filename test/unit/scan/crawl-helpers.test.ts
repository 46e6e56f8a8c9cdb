import { describe, expect, it } from 'vitest';
import { canonicalPageKey, crawlableUrl, normalizePageUrl } from '../../../src/domain/scan/crawl-url.js';
import { parseSitemap } from '../../../src/domain/scan/sitemap.js';
import { digest, summarize } from '../../../src/domain/scan/summary.js';
import type { Issue, PageReport } from '../../../src/domain/scan/types.js';

describe('normalizePageUrl', () => {
  it('resolves relative links, drops fragments and keeps queries', () => {
    expect(normalizePageUrl('../b.html?x=1#frag', 'https://Example.com:443/a/c.html')).toBe('https://example.com/b.html?x=1');
    expect(normalizePageUrl('#top', 'https://example.com/page')).toBe('https://example.com/page');
  });

  it.each(['mailto:a@example.com', 'tel:+123', 'javascript:void(0)', 'data:text/html,hi', 'ftp://example.com/'])('skips %s', (href) => {
    expect(normalizePageUrl(href, 'https://example.com/')).toBeNull();
  });
});

describe('crawlableUrl', () => {
  const origin = 'https://example.com';
  it('keeps same-origin pages', () => {
    expect(crawlableUrl('/about', origin, 'https://example.com/')).toBe('https://example.com/about');
    expect(crawlableUrl('/page.html', origin, 'https://example.com/')).toBe('https://example.com/page.html');
    expect(crawlableUrl('/v1.2/docs', origin, 'https://example.com/')).toBe('https://example.com/v1.2/docs');
  });

  it('skips other origins (scheme, host or port)', () => {
    expect(crawlableUrl('http://example.com/', origin)).toBeNull();
    expect(crawlableUrl('https://www.example.com/', origin)).toBeNull();
    expect(crawlableUrl('https://example.com:8443/', origin)).toBeNull();
  });

  it.each(['/f.pdf', '/a.JPG', '/b.png', '/c.zip', '/d.docx', '/e.mp4'])('skips the file %s', (path) => {
    expect(crawlableUrl(path, origin, 'https://example.com/')).toBeNull();
  });
});

describe('parseSitemap', () => {
  it('reads a urlset, decoding entities and CDATA', () => {
    const xml = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc> https://example.com/a?x=1&amp;y=2 </loc></url>
      <url><loc><![CDATA[https://example.com/b]]></loc><lastmod>2024-01-01</lastmod></url></urlset>`;
    expect(parseSitemap(xml)).toEqual({ kind: 'urlset', locations: ['https://example.com/a?x=1&y=2', 'https://example.com/b'] });
  });

  it('recognises a sitemap index, namespaced or not', () => {
    const xml = '<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>https://example.com/s1.xml</sm:loc></sm:sitemap></sm:sitemapindex>';
    expect(parseSitemap(xml)).toEqual({ kind: 'index', locations: ['https://example.com/s1.xml'] });
  });
});

describe('summarize', () => {
  const issue = (code: string, type: Issue['type'], criteria: string[]): Issue => ({
    code, type, wcagCriterion: criteria[0] ?? null, wcagCriteria: criteria, impact: 'serious', message: code, selector: 'x', context: '<x>', helpUrl: 'https://example.com',
  });
  it('counts levels, first criteria and failed pages', () => {
    const pages: PageReport[] = [
      { url: 'https://e.com/', title: 'A', issueCount: 3, issues: [issue('image-alt', 'error', ['1.1.1']), issue('link-name', 'error', ['2.4.4', '4.1.2']), issue('color-contrast', 'warning', ['1.4.3'])] },
      { url: 'https://e.com/x', title: null, issueCount: 0, error: 'HTTP 404', issues: [] },
    ];
    expect(summarize(pages)).toEqual({
      pagesScanned: 2, pagesFailed: 1, totalIssues: 3,
      byLevel: { error: 2, warning: 1, notice: 0 },
      byCriterion: { '1.1.1': 1, '2.4.4': 1, '1.4.3': 1 },
      notEvaluated: [],
    });
  });

  it('counts what was not evaluated, by the number of pages', () => {
    const ne = { code: 'color-contrast', wcagCriteria: ['1.4.3'], reason: 'needs a browser' as const, detail: 'x' };
    const pages: PageReport[] = [
      { url: 'https://e.com/', title: 'A', issueCount: 0, notEvaluated: [ne], issues: [] },
      { url: 'https://e.com/b', title: 'B', issueCount: 0, notEvaluated: [ne, { ...ne, code: 'pactum-reflow', wcagCriteria: ['1.4.10'] }], issues: [] },
    ];
    expect(summarize(pages).notEvaluated).toEqual([
      { code: 'color-contrast', wcagCriteria: ['1.4.3'], reason: 'needs a browser', pages: 2 },
      { code: 'pactum-reflow', wcagCriteria: ['1.4.10'], reason: 'needs a browser', pages: 1 },
    ]);
  });
});

describe('digest', () => {
  const issue = (code: string, type: Issue['type'], selector: string): Issue => ({
    code, type, wcagCriterion: '1.1.1', wcagCriteria: ['1.1.1'], impact: type === 'error' ? 'critical' : 'minor', message: `Help of ${code}: why, at ${selector}; see u`, selector, context: `<${selector}>`, helpUrl: `https://h/${code}`,
  });
  it('groups issues by rule with counts and lists pages worst first, unchecked pages first of all', () => {
    const pages: PageReport[] = [
      { url: 'https://e.com/a', title: 'A', issueCount: 1, issues: [issue('image-alt', 'error', 'img')] },
      { url: 'https://e.com/b', title: 'B', issueCount: 4, issues: [issue('image-alt', 'error', 'img'), issue('image-alt', 'error', 'img2'), issue('label', 'error', 'input'), issue('image-alt', 'warning', 'img3')] },
      { url: 'https://e.com/c', title: null, issueCount: 0, error: 'HTTP 500', issues: [] },
      { url: 'https://e.com/d', title: 'D', issueCount: 1, issues: [issue('label', 'warning', 'input')] },
    ];
    const d = digest({ engine: 'chromium', summary: summarize(pages), pages }, 2);
    expect(d.rules).toEqual([
      { code: 'image-alt', type: 'error', wcagCriteria: ['1.1.1'], impact: 'critical', help: 'Help of image-alt', helpUrl: 'https://h/image-alt', issues: 3, pages: 2,
        examples: [{ pageUrl: 'https://e.com/a', selector: 'img', context: '<img>' }, { pageUrl: 'https://e.com/b', selector: 'img', context: '<img>' }, { pageUrl: 'https://e.com/b', selector: 'img2', context: '<img2>' }] },
      expect.objectContaining({ code: 'label', type: 'error', issues: 1, pages: 1 }), // ties: errors before warnings
    ]);
    expect(d.rulesTotal).toBe(4);
    expect(d.pages.map((p) => p.url)).toEqual(['https://e.com/c', 'https://e.com/b']);
    expect(d.pages[1]).toEqual({ url: 'https://e.com/b', title: 'B', issueCount: 4, byLevel: { error: 3, warning: 1, notice: 0 }, notEvaluated: 0, error: null });
    expect(d.pagesTotal).toBe(4);
    expect(d.engine).toBe('chromium');
  });
});

describe('canonicalPageKey', () => {
  it('makes /, /index.html, trailing slashes, fragments and tracking parameters one page', () => {
    const key = (u: string) => canonicalPageKey(u);
    expect(key('https://e.com/index.html')).toBe(key('https://e.com/'));
    expect(key('https://e.com/docs/')).toBe(key('https://e.com/docs'));
    expect(key('https://e.com/docs/index.php#top')).toBe(key('https://e.com/docs'));
    expect(key('https://e.com/p?utm_source=news&utm_medium=mail&id=3&fbclid=x')).toBe(key('https://e.com/p?id=3'));
    expect(key('https://e.com/p?b=2&a=1')).toBe(key('https://e.com/p?a=1&b=2'));
    expect(key('https://e.com/p?id=3')).not.toBe(key('https://e.com/p?id=4'));
    expect(key('mailto:a@e.com')).toBeNull();
  });
});
