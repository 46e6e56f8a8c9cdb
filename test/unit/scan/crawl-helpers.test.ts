import { describe, expect, it } from 'vitest';
import { crawlableUrl, normalizePageUrl } from '../../../src/domain/scan/crawl-url.js';
import { parseSitemap } from '../../../src/domain/scan/sitemap.js';
import { summarize } from '../../../src/domain/scan/summary.js';
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
    });
  });
});
