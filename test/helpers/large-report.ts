/**
 * A finished scan with as many issues as a test needs, written straight into the database as a
 * scan stores it (a crawl of that size would take minutes): pages of issues of a dozen rules with
 * markup, selectors and messages of the lengths axe-core writes, some pages that could not be
 * checked, some rules not evaluated.
 */
import type { Db } from '../../src/db/knex.js';
import { newId } from '../../src/ground/ids.js';

export interface LargeReport {
  scanId: string;
  totalIssues: number;
  pages: number;
}

const RULES = [
  { code: 'image-alt', criterion: '1.1.1', type: 'error', impact: 'critical', help: 'Images must have alternative text' },
  { code: 'color-contrast', criterion: '1.4.3', type: 'error', impact: 'serious', help: 'Elements must meet minimum color contrast ratio thresholds' },
  { code: 'link-name', criterion: '2.4.4', type: 'error', impact: 'serious', help: 'Links must have discernible text' },
  { code: 'label', criterion: '4.1.2', type: 'error', impact: 'critical', help: 'Form elements must have labels' },
  { code: 'button-name', criterion: '4.1.2', type: 'error', impact: 'critical', help: 'Buttons must have discernible text' },
  { code: 'heading-order', criterion: '1.3.1', type: 'warning', impact: 'moderate', help: 'Heading levels should only increase by one' },
  { code: 'region', criterion: '1.3.1', type: 'warning', impact: 'moderate', help: 'All page content should be contained by landmarks' },
  { code: 'list', criterion: '1.3.1', type: 'error', impact: 'serious', help: 'Lists must only directly contain li elements' },
  { code: 'duplicate-id-aria', criterion: '4.1.2', type: 'error', impact: 'critical', help: 'IDs used in ARIA and labels must be unique' },
  { code: 'pactum-link-purpose', criterion: '2.4.4', type: 'warning', impact: 'minor', help: 'Links must say where they lead' },
  { code: 'target-size', criterion: '2.5.8', type: 'notice', impact: null, help: 'Touch targets must be large enough' },
  { code: 'frame-title', criterion: '4.1.2', type: 'error', impact: 'serious', help: 'Frames must have an accessible name' },
] as const;

function issueOf(page: number, n: number) {
  const rule = RULES[(page * 7 + n) % RULES.length]!;
  const selector = `main > section:nth-child(${page % 9 + 1}) > div.card-grid > article:nth-child(${n + 1}) > a.card-link`;
  const html = `<a class="card-link" href="/catalogue/item-${page}-${n}?ref=listing&amp;page=${page}"><img src="/media/thumbs/${page}/${n}.jpg" width="320" height="240"></a>`;
  const contrast = rule.code === 'color-contrast' ? 'element has insufficient color contrast of 2.51 (foreground color: #999999, background color: #ffffff, font size: 9.0pt (12px), font weight: normal); expected contrast ratio of 4.5:1' : 'Element does not have an alt attribute; aria-label attribute does not exist or is empty';
  return {
    code: rule.code, wcagCriterion: rule.criterion, wcagCriteria: [rule.criterion], type: rule.type, impact: rule.impact,
    message: `${rule.help}: ${contrast}, at ${selector} (${html.slice(0, 60)}); see https://dequeuniversity.com/rules/axe/4.14/${rule.code}`,
    selector, context: html, helpUrl: `https://dequeuniversity.com/rules/axe/4.14/${rule.code}`,
  };
}

/**
 * A completed scan of `pages` pages of `issuesPerPage` issues each (`bigPage`: one more page of
 * that many), every `failEvery`th page one that could not be checked, in the org `orgId`.
 */
export async function seedLargeReport(db: Db, orgId: string, opts: { pages: number; issuesPerPage: number; bigPage?: number; failEvery?: number }): Promise<LargeReport> {
  const now = new Date().toISOString();
  const siteUrl = `https://large-${newId('site').slice(-8).toLowerCase()}.example/`;
  const siteId = newId('site');
  await db('sites').insert({ id: siteId, org_id: orgId, url: siteUrl, created_at: now });
  const scanId = newId('scn');
  const counts = Array.from({ length: opts.pages }, (_, p) => (opts.failEvery && p % opts.failEvery === opts.failEvery - 1 ? 0 : opts.issuesPerPage));
  if (opts.bigPage) counts.push(opts.bigPage);
  const failed = counts.filter((c, p) => c === 0 && p < opts.pages).length;
  const total = counts.reduce((a, b) => a + b, 0);
  const summary = { pagesScanned: counts.length, pagesFailed: failed, totalIssues: total, byLevel: { error: 0, warning: 0, notice: 0 }, byCriterion: {}, notEvaluated: [{ code: 'video-caption', wcagCriteria: ['1.2.2'], reason: 'needs a browser', pages: counts.length }] };
  await db('scans').insert({
    id: scanId, org_id: orgId, site_id: siteId, site_url: siteUrl, standard: 'WCAG2AA', scan_mode: 'site', max_pages: 1000, concurrency: 1,
    jurisdictions: '[]', status: failed ? 'completed_with_errors' : 'completed', pages_scanned: counts.length, total_pages: counts.length, total_issues: total,
    summary: JSON.stringify(summary), error: null, attempts: 1, engine: 'jsdom', created_at: now, started_at: now, finished_at: now, last_updated: now,
  });
  const rows = counts.map((count, seq) => {
    const isFailed = count === 0 && seq < opts.pages;
    return {
      scan_id: scanId, seq, url: `${siteUrl}catalogue/page-${seq}`, title: isFailed ? null : `Catalogue page ${seq}`, issue_count: count,
      error: isFailed ? `${siteUrl}catalogue/page-${seq} answered HTTP 500` : null,
      issues: JSON.stringify(Array.from({ length: count }, (_, n) => issueOf(seq, n))), style: null,
      not_evaluated: JSON.stringify(isFailed ? [] : [{ code: 'video-caption', wcagCriteria: ['1.2.2'], reason: 'needs a browser' }]),
    };
  });
  for (let i = 0; i < rows.length; i += 20) await db('scan_pages').insert(rows.slice(i, i + 20));
  return { scanId, totalIssues: total, pages: counts.length };
}
