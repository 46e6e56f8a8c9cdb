import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScanFetchError, type FetchOptions } from '../../../src/domain/scan/fetch-page.js';
import { createCheckPool } from '../../../src/compute/check-pool.js';
import type { CheckPool } from '../../../src/domain/scan/check-pool.js';
import { createJsdomEngine } from '../../../src/domain/scan/jsdom-engine.js';
import type { ScanEngine } from '../../../src/domain/scan/engine.js';
import { scanSite, type ScanEvents, type ScanInput } from '../../../src/domain/scan/scan-site.js';
import type { PageReport } from '../../../src/domain/scan/types.js';
import { startFixtureServer, type FixtureServer } from './fixture-server.js';

let site: FixtureServer;
let pool: CheckPool;
let engine: ScanEngine;
beforeAll(async () => {
  site = await startFixtureServer();
  pool = createCheckPool(2);
  engine = createJsdomEngine(pool);
});
afterAll(async () => {
  await pool.close();
  await site.close();
});

const fetchOptions: FetchOptions = { allowPrivateNetworks: true, timeoutMs: 5_000 };

/** Records every event, in order. */
function recorder() {
  const log: Array<{ found: number } | { done: PageReport }> = [];
  const events: ScanEvents = {
    onPagesFound: (total) => { log.push({ found: total }); },
    onPageDone: (page) => { log.push({ done: page }); },
  };
  const found = () => log.flatMap((e) => ('found' in e ? [e.found] : []));
  const done = () => log.flatMap((e) => ('done' in e ? [e.done] : []));
  return { log, events, found, done };
}

const input = (overrides: Partial<ScanInput> = {}): ScanInput => ({
  siteUrl: site.url('/'), mode: 'site', maxPages: 50, concurrency: 2, standard: 'WCAG2AA', ...overrides,
});

/** "path: codes", for the exact findings of each page. */
function byPath(pages: readonly PageReport[]): Record<string, string> {
  return Object.fromEntries(pages.map((p) => [
    new URL(p.url).pathname + new URL(p.url).search,
    p.error ? `failed: ${p.error}` : p.issues.map((i) => `${i.type}:${i.code}:${i.wcagCriterion}`).sort().join(' '),
  ]));
}

describe('scanSite, whole site', () => {
  it('crawls links and the sitemap, reporting each page’s exact findings', async () => {
    const rec = recorder();
    const report = await scanSite(input(), { fetch: fetchOptions, engine }, rec.events);
    // jsdom cannot measure contrast: it is listed as not evaluated on every page, never as an issue.
    const purpose = 'warning:pactum-link-purpose:2.4.4';
    expect(byPath(report.pages)).toEqual({
      '/': 'error:image-alt:1.1.1',
      '/clean.html': '', // reachable only through sitemap.xml → sitemap-pages.xml
      '/form.html': 'error:label:4.1.2 error:select-name:4.1.2',
      '/links.html': `error:link-name:2.4.4 ${purpose} ${purpose}`,
      '/nolang.html': 'error:html-has-lang:3.1.1',
      '/contrast.html?theme=light': '',
      '/x': `failed: ${site.url('/x')} answered HTTP 404 (the page does not exist).`,
    });
    // Breadth first: the site URL, the sitemap's pages, then links in the order found.
    expect(report.pages.map((p) => p.url)).toEqual([
      site.url('/'), site.url('/clean.html'), site.url('/form.html'), site.url('/links.html'),
      site.url('/nolang.html'), site.url('/contrast.html?theme=light'), site.url('/x'),
    ]);
    expect(report.summary).toMatchObject({
      pagesScanned: 7,
      pagesFailed: 1,
      totalIssues: 7,
      byLevel: { error: 5, warning: 2, notice: 0 },
      byCriterion: { '1.1.1': 1, '2.4.4': 3, '3.1.1': 1, '4.1.2': 2 },
    });
    expect(report.summary.notEvaluated).toContainEqual({ code: 'color-contrast', wcagCriteria: ['1.4.3'], reason: 'needs a browser', pages: 6 });
    expect(report.engine).toBe('jsdom');
    expect(report.pages.find((p) => p.url.endsWith('/x'))).toEqual({ url: site.url('/x'), title: null, issueCount: 0, error: expect.any(String), notEvaluated: [], issues: [] });
    expect(report.pages[0]).toMatchObject({ title: 'Fixture home', issueCount: 1 });

    // No fragments, no duplicates, no mailto: or .pdf, nothing off-site.
    const pageRequests = site.requests.filter((r) => !r.includes('sitemap'));
    expect(new Set(pageRequests).size).toBe(pageRequests.length);
    expect(pageRequests.some((r) => r.includes('brochure.pdf'))).toBe(false);
  });

  it('raises progress page by page: totals never shrink, one onPageDone per page', async () => {
    const rec = recorder();
    const report = await scanSite(input({ concurrency: 3 }), { fetch: fetchOptions, engine }, rec.events);
    const found = rec.found();
    expect(found[0]).toBe(2); // the site URL and the sitemap's clean.html
    expect(found.at(-1)).toBe(7);
    expect(found.every((n, i) => i === 0 || n > found[i - 1]!)).toBe(true); // only reported when it grows
    const done = rec.done();
    expect(done).toHaveLength(7);
    expect(new Set(done.map((p) => p.url)).size).toBe(7);
    expect(new Set(done.map((p) => p.url))).toEqual(new Set(report.pages.map((p) => p.url)));
    // Whenever a page is done, the announced total covers every page done so far.
    let total = 0;
    let finished = 0;
    for (const event of rec.log) {
      if ('found' in event) total = event.found;
      else expect(++finished).toBeLessThanOrEqual(total);
    }
  });

  it('never scans more than maxPages', async () => {
    const rec = recorder();
    const report = await scanSite(input({ maxPages: 3 }), { fetch: fetchOptions, engine }, rec.events);
    expect(report.pages.map((p) => new URL(p.url).pathname)).toEqual(['/', '/clean.html', '/form.html']);
    expect(report.summary.pagesScanned).toBe(3);
    expect(Math.max(...rec.found())).toBe(3);
    expect(rec.done()).toHaveLength(3);
  });

  it('scans only the given page in single mode', async () => {
    const rec = recorder();
    const report = await scanSite(input({ mode: 'single', siteUrl: site.url('/form.html') }), { fetch: fetchOptions, engine }, rec.events);
    expect(report.pages.map((p) => p.url)).toEqual([site.url('/form.html')]);
    expect(rec.found()).toEqual([1]);
    expect(report.summary).toMatchObject({ pagesScanned: 1, pagesFailed: 0, totalIssues: 2, byLevel: { error: 2, warning: 0, notice: 0 } });
  });

  it('follows the site URL’s redirect and crawls the origin it lands on', async () => {
    const report = await scanSite(input({ siteUrl: site.url('/redirect?to=%2Flinks.html'), maxPages: 2 }), { fetch: fetchOptions, engine }, recorder().events);
    expect(report.pages.map((p) => p.url)).toEqual([site.url('/links.html'), site.url('/')]);
  });
});

describe('scanSite, one page under many addresses', () => {
  it('scans /, /index.html, trailing slashes, fragments, tracking parameters and same-content copies once', async () => {
    const { createServer } = await import('node:http');
    const home = '<!doctype html><html lang="en"><title>Home</title><main><h1>Home</h1>'
      + '<a href="/index.html">i</a> <a href="/?utm_source=news&utm_medium=mail">u</a> <a href="/#top">f</a> <a href="/docs/">d</a> <a href="/docs">d2</a>'
      + '<a href="/docs/index.html?fbclid=1">d3</a> <a href="/copy">c</a> <a href="/other">o</a></main></html>';
    const docs = '<!doctype html><html lang="en"><title>Docs</title><main><h1>Docs</h1></main></html>';
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(req.url ?? '');
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const body = path === '/' || path === '/index.html' ? home : path.startsWith('/docs') ? docs : path === '/copy' ? home : path === '/other' ? docs.replace('Docs', 'Other') : null;
      res.writeHead(body ? 200 : 404, { 'content-type': 'text/html' }).end(body ?? 'no');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const rec = recorder();
      const report = await scanSite(input({ siteUrl: `${origin}/`, concurrency: 1 }), { fetch: fetchOptions, engine }, rec.events);
      expect(report.pages.map((p) => new URL(p.url).pathname)).toEqual(['/', '/docs/', '/other']);
      expect(report.summary.pagesScanned).toBe(3);
      expect(rec.found().at(-1)).toBe(3); // /copy was planned, then dropped as a copy of /
      expect(requests).toContain('/copy');
      expect(requests.filter((r) => r.startsWith('/index.html') || r.startsWith('/?') || r.startsWith('/docs/index'))).toEqual([]);
    } finally {
      server.close();
    }
  });
});

describe('scanSite, refusals and failures', () => {
  it('refuses the fixture server on 127.0.0.1 unless private networks are allowed', async () => {
    const rec = recorder();
    const err = await scanSite(input(), { fetch: { ...fetchOptions, allowPrivateNetworks: false }, engine }, rec.events).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScanFetchError);
    expect(err).toMatchObject({ code: 'blocked-address' });
    expect(rec.log).toEqual([]);
    // ...and scans it when they are.
    const allowed = await scanSite(input({ mode: 'single' }), { fetch: { ...fetchOptions, allowPrivateNetworks: true }, engine }, recorder().events);
    expect(allowed.summary).toMatchObject({ pagesScanned: 1, pagesFailed: 0 });
  });

  it('throws when the site URL itself cannot be fetched', async () => {
    await expect(scanSite(input({ siteUrl: site.url('/brochure.pdf') }), { fetch: fetchOptions, engine }, recorder().events))
      .rejects.toMatchObject({ code: 'not-html' });
    await expect(scanSite(input({ siteUrl: site.url('/missing.html') }), { fetch: fetchOptions, engine }, recorder().events))
      .rejects.toMatchObject({ code: 'http-status', status: 404 });
  });

  it('stops on abort and rejects with the reason', async () => {
    const controller = new AbortController();
    const rec = recorder();
    const events: ScanEvents = {
      onPagesFound: rec.events.onPagesFound,
      onPageDone: (page) => { void rec.events.onPageDone(page); controller.abort(new Error('cancelled by the user')); },
    };
    await expect(scanSite(input({ concurrency: 1 }), { fetch: fetchOptions, engine, signal: controller.signal }, events)).rejects.toThrow('cancelled by the user');
    expect(rec.done()).toHaveLength(1);
  });

  it('fails the scan when a listener fails (e.g. the database is gone)', async () => {
    let calls = 0;
    const events: ScanEvents = { onPagesFound: () => undefined, onPageDone: () => { calls++; return Promise.reject(new Error('disk full')); } };
    await expect(scanSite(input({ concurrency: 3 }), { fetch: fetchOptions, engine }, events)).rejects.toThrow('disk full');
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // pages still in flight must stay silent
    expect(calls).toBe(1);
  });
});
