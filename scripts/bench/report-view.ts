/**
 * The report view's size and render time: a report of 1,000 issues (200 pages, 40 rules, contrast
 * details on a quarter of them) drawn by the view's own script in headless Chromium, as the
 * report page embeds it. Two times, the script's own measures from the model: the report shown
 * (its summary, pages and first rule group open: window.__pactumRenderMs) and every issue's row
 * drawn (the closed groups are drawn in slices between frames after that:
 * window.__pactumAllDrawnMs). Side by side, in alternating rounds,
 * the baseline: the same DOM (the view's own markup once drawn) set as one innerHTML string into
 * the same document, what a page rendered on the server costs the browser's HTML parser, without
 * the view's listeners. Goals: the resource at most 150 kB, 1,000 issues drawn in under 200 ms.
 *
 *   npx tsx scripts/bench/report-view.ts [--issues 1000] [--rounds 5]
 */
import { gzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { buildReportView } from '../../src/domain/report/view-model.js';
import type { Issue, PageReport } from '../../src/domain/scan/types.js';
import { viewAssets, viewDocument } from '../../src/report-view/document.js';
import { median, record } from './lib.js';

const { values: argv } = parseArgs({ options: { issues: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '5' } } });
const ISSUES = Number(argv.issues);
const ROUNDS = Number(argv.rounds);

function report() {
  const pages: PageReport[] = [];
  for (let p = 0; p < 200; p++) pages.push({ url: `https://www.example.com/page-${p}.html`, title: `Page ${p}`, issueCount: 0, issues: [], notEvaluated: [] });
  for (let i = 0; i < ISSUES; i++) {
    const rule = i % 40;
    const contrast = rule < 10;
    const issue: Issue = {
      code: contrast ? `color-contrast${rule ? `-${rule}` : ''}` : `rule-${rule}`, wcagCriterion: contrast ? '1.4.3' : '1.1.1', wcagCriteria: [contrast ? '1.4.3' : '1.1.1'], type: rule % 7 === 0 ? 'warning' : 'error', impact: 'serious',
      message: contrast ? `Elements must meet minimum color contrast ratio thresholds: element has insufficient color contrast of 2.${i % 10} (foreground color: #999999, background color: #ffffff, font size: 12.0pt (16px), font weight: normal); expected contrast ratio of 4.5:1, at .c${i} (<p class="c${i}">text</p>); see https://dequeuniversity.com/rules/axe/4.14/color-contrast` : `Rule ${rule} must hold: element ${i} breaks it, at #e${i} (<div id="e${i}">…</div>); see https://dequeuniversity.com/rules/axe/4.14/rule-${rule}`,
      selector: contrast ? `.c${i}` : `#e${i}`, context: contrast ? `<p class="c${i}">text</p>` : `<div id="e${i}">Some content of element ${i}</div>`, helpUrl: `https://dequeuniversity.com/rules/axe/4.14/rule-${rule}`,
    };
    const page = pages[i % pages.length]!;
    page.issues.push(issue);
    page.issueCount++;
  }
  const byLevel = { error: 0, warning: 0, notice: 0 };
  for (const p of pages) for (const i of p.issues) byLevel[i.type]++;
  const view = buildReportView({
    scan: { scanId: 'scn_bench', siteUrl: 'https://www.example.com/', standard: 'WCAG2AA', status: 'completed', engine: 'chromium', finishedAt: new Date().toISOString() },
    summary: { pagesScanned: pages.length, pagesFailed: 0, totalIssues: ISSUES, byLevel, byCriterion: {}, notEvaluated: [] },
    pages, brandScore: 81.5, maxIssues: 5000,
  });
  // The site's last 12 runs, this one last: the trend chart and its table are drawn too.
  const trend = Array.from({ length: 12 }, (_, n) => ({
    scanId: n === 11 ? 'scn_bench' : `scn_bench_${n}`, finishedAt: new Date(Date.UTC(2026, 10, 1 + n * 3)).toISOString(),
    open: { error: byLevel.error + (11 - n) * 40, warning: byLevel.warning + (n % 3) * 10, notice: byLevel.notice },
  }));
  return { ...view, trend };
}

const assets = await viewAssets();
const resource = viewDocument(assets);
const bytes = Buffer.byteLength(resource);
console.log(`report view resource (ui://pactum/report): ${(bytes / 1000).toFixed(1)} kB, ${(gzipSync(resource).length / 1000).toFixed(1)} kB gzipped (script ${(assets.script.length / 1000).toFixed(1)} kB, style ${(assets.style.length / 1000).toFixed(1)} kB)`);
const page = viewDocument(assets, { data: { view: report(), progress: null } });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--headless'] });
const times: number[] = [];
const allDrawn: number[] = [];
const baseline: number[] = [];
/** The baseline's document: the view's stylesheet and an empty main, no script. */
const bare = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>baseline</title><style>${assets.style}</style></head><body><main id="app"></main></body></html>`;
let markup = '';
try {
  for (let r = 0; r < ROUNDS; r++) {
    const tab = await browser.newPage();
    await tab.setContent(page);
    await tab.waitForSelector('section.rule');
    await tab.waitForFunction(() => (window as unknown as { __pactumAllDrawnMs?: number }).__pactumAllDrawnMs !== undefined);
    const [ms, all] = await tab.evaluate(() => {
      const w = window as unknown as { __pactumRenderMs: number; __pactumAllDrawnMs: number };
      return [w.__pactumRenderMs, w.__pactumAllDrawnMs] as const;
    });
    const issues = await tab.evaluate(() => document.querySelectorAll('button.issue').length);
    if (issues !== ISSUES) throw new Error(`the view drew ${issues} issues, not ${ISSUES}`);
    markup ||= await tab.evaluate(() => document.getElementById('app')!.innerHTML);
    times.push(ms);
    allDrawn.push(all);
    await tab.close();

    const plain = await browser.newPage();
    await plain.setContent(bare);
    baseline.push(await plain.evaluate((html) => new Promise<number>((resolve) => {
      const t0 = performance.now();
      document.getElementById('app')!.innerHTML = html;
      const ms = performance.now() - t0;
      requestAnimationFrame(() => resolve(ms));
    }), markup));
    if (await plain.evaluate(() => document.querySelectorAll('button.issue').length) !== ISSUES) throw new Error('the baseline did not draw every issue');
    await plain.close();
  }
} finally {
  await browser.close();
}
const list = (xs: number[]) => [...xs].sort((a, b) => a - b).map((t) => t.toFixed(1)).join(', ');
const viewMs = median(times);
const allMs = median(allDrawn);
const baseMs = median(baseline);
console.log(`a report of ${ISSUES} issues shown in ${viewMs.toFixed(1)} ms (median of ${ROUNDS}; all: ${list(times)} ms)`);
console.log(`all ${ISSUES} issues drawn in ${allMs.toFixed(1)} ms (median of ${ROUNDS}; all: ${list(allDrawn)} ms)`);
console.log(`baseline, the same DOM as one innerHTML string: ${baseMs.toFixed(1)} ms (median of ${ROUNDS}; all: ${list(baseline)} ms); the view shows the report in ${(viewMs / baseMs).toFixed(2)}× and draws it all in ${(allMs / baseMs).toFixed(2)}× the baseline's time`);
record(
  { bench: 'report-view', measure: 'resource size', value: bytes / 1000, unit: 'kB', goal: '<= 150 kB', met: bytes <= 150_000 },
  { bench: 'report-view', measure: `a report of ${ISSUES} issues shown`, value: viewMs, unit: 'ms', baseline: { name: 'the same DOM as one innerHTML string', value: baseMs }, ratio: baseMs / viewMs, goal: '< 200 ms', met: viewMs < 200 },
  { bench: 'report-view', measure: `all ${ISSUES} issues drawn`, value: allMs, unit: 'ms', baseline: { name: 'the same DOM as one innerHTML string', value: baseMs }, ratio: baseMs / allMs },
);
