/**
 * The report view's bundle: the MCP App resource stays within its size budget, the trims that
 * keep it there hold on the installed ext-apps and refuse one they do not recognise, and the
 * trimmed script still loads (every zod schema of ext-apps and the SDK built) and draws a report.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { JSDOM, VirtualConsole } from 'jsdom';
import { viewAssets, viewDocument } from '../../../src/report-view/document.js';
import { exportedNames, jsonSchemaStandIn, trimExtApps } from '../../../src/report-view/trim.js';
import { buildReportView } from '../../../src/domain/report/view-model.js';
import type { Issue, PageReport } from '../../../src/domain/scan/types.js';

const RESOURCE_BUDGET = 150_000;
const require = createRequire(import.meta.url);
const extAppsApp = () => readFileSync(join(dirname(require.resolve('@modelcontextprotocol/ext-apps')), 'app.js'), 'utf8');

describe('the report view bundle', () => {
  it(`keeps the resource ui://pactum/report within ${RESOURCE_BUDGET / 1000} kB`, async () => {
    const bytes = Buffer.byteLength(viewDocument(await viewAssets()));
    expect(bytes).toBeLessThanOrEqual(RESOURCE_BUDGET);
  });

  it('imports zod as a namespace in ext-apps, without its dynamic import or descriptions', () => {
    const source = extAppsApp();
    expect(source).toContain('.describe(');
    const trimmed = trimExtApps(source);
    expect(trimmed).not.toContain('.describe(');
    expect(trimmed).not.toContain('import("zod/v4")');
    expect(trimmed).not.toMatch(/import\{z as [\w$]+\}from"zod\/v4"/);
    expect(trimmed).toMatch(/import\*as [\w$]+ from"zod\/v4"/);
    // Only descriptions go: the schemas' methods and literals stay.
    expect(trimmed).toContain('"ui/initialize"');
    expect(trimmed).toContain('.passthrough()');
  });

  it('refuses an ext-apps whose shape it does not know, rather than shipping all of zod again', () => {
    expect(() => trimExtApps('import{App}from"elsewhere";')).toThrow(/no longer imports `z`/);
    expect(() => trimExtApps('import{z as Q}from"zod/v4";Q.string()')).toThrow(/no longer has await import/);
    expect(() => trimExtApps('import{z as Q}from"zod/v4";await import("zod/v4");Q.string().describe(D)')).toThrow(/form the trim does not know/);
  });

  it('stands in for zod\'s JSON Schema generation with functions that throw, keeping its factories callable', async () => {
    const names = exportedNames('export const a = 1;\nexport function b() {}\nexport const createToJSONSchemaMethod = () => 1;\nexport { b as c };');
    expect(names.sort()).toEqual(['a', 'b', 'c', 'createToJSONSchemaMethod']);
    const mod = (await import(`data:text/javascript,${encodeURIComponent(jsonSchemaStandIn(names))}`)) as Record<string, () => () => unknown>;
    expect(() => mod.a!()).toThrow(/not bundled/);
    const method = mod.createToJSONSchemaMethod!();
    expect(() => method()).toThrow(/not bundled/);
  });

  it('loads, trimmed, and draws a report: every rule, every issue, the worst page first', async () => {
    const issue = (i: number, code: string): Issue => ({
      code, wcagCriterion: '1.1.1', wcagCriteria: ['1.1.1'], type: 'error', impact: 'serious', message: `Rule ${code}: element ${i}`, selector: `#e${i}`, context: `<div id="e${i}">x</div>`, helpUrl: `https://dequeuniversity.com/rules/axe/4.14/${code}`,
    });
    const pages: PageReport[] = [
      { url: 'https://example.com/a', title: 'A', issueCount: 1, issues: [issue(0, 'image-alt')], notEvaluated: [] },
      { url: 'https://example.com/b?q=1', title: 'B', issueCount: 3, issues: [issue(1, 'image-alt'), issue(2, 'label'), issue(3, 'label')], notEvaluated: [] },
    ];
    const view = buildReportView({
      scan: { scanId: 'scn_1', siteUrl: 'https://example.com/', standard: 'WCAG2AA', status: 'completed', engine: 'chromium', finishedAt: '2026-05-01T14:03:09.000Z' },
      summary: { pagesScanned: 2, pagesFailed: 0, totalIssues: 4, byLevel: { error: 4, warning: 0, notice: 0 }, byCriterion: {}, notEvaluated: [] },
      pages, brandScore: null, maxIssues: 100,
    });
    const errors: unknown[] = [];
    const virtualConsole = new VirtualConsole();
    virtualConsole.on('jsdomError', (e) => errors.push(e));
    const dom = new JSDOM(viewDocument(await viewAssets(), { data: { view, progress: null }, csp: false }), { runScripts: 'dangerously', virtualConsole });
    const doc = dom.window.document;
    expect(errors).toEqual([]);
    expect([...doc.querySelectorAll('section.rule .rule-code')].map((e) => e.textContent).sort()).toEqual(['image-alt', 'label']);
    // Shown at once: the first group open and drawn; the closed one is drawn a moment later.
    const [open, closed] = [...doc.querySelectorAll<HTMLElement>('.rule-body')];
    expect(open!.hidden).toBe(false);
    expect(open!.querySelectorAll('button.issue')).toHaveLength(2);
    expect(closed!.hidden).toBe(true);
    expect(closed!.childElementCount).toBe(0);
    await vi.waitFor(() => expect((dom.window as unknown as { __pactumAllDrawnMs?: number }).__pactumAllDrawnMs).toBeTypeOf('number'));
    expect(closed!.querySelectorAll('button.issue')).toHaveLength(2);
    expect(closed!.hidden).toBe(true);
    expect(doc.querySelectorAll('button.issue')).toHaveLength(4);
    expect(doc.querySelector('table.pages tbody tr th')!.textContent).toMatch(/^B/);
    expect(doc.querySelector('.facts')!.textContent).toContain('on 2026-05-01 14:03 UTC.');
    const onB = [...doc.querySelectorAll<HTMLButtonElement>('button.issue')].find((b) => b.querySelector('code')!.textContent === '#e1')!;
    expect(onB.querySelector('.on')!.textContent).toBe(' on /b?q=1');
    onB.click();
    expect(onB.getAttribute('aria-expanded')).toBe('true');
    const detail = doc.getElementById(onB.getAttribute('aria-controls')!)!;
    expect(detail.hidden).toBe(false);
    expect(detail.querySelector('dd code')!.textContent).toBe('#e1');
    onB.click();
    expect(detail.hidden).toBe(true);
    // "Show issues" on a page's row leaves that page's issues only.
    doc.querySelector<HTMLButtonElement>('table.pages button[aria-label="Show issues: 1 issue on /a"]')!.click();
    const shown = [...doc.querySelectorAll('li[data-page]')].filter((li) => !(li as HTMLElement).hidden);
    expect(shown.map((li) => li.querySelector('code')!.textContent)).toEqual(['#e0']);
    dom.window.close();
  });
});
