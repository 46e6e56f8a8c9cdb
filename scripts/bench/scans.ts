/**
 * Scan throughput and memory, per engine: a 50-page site of simple pages on loopback, scanned
 * through the MCP tools by pactum as production runs it (dist/, its own process), once to warm up
 * (the browser starts, the workers load axe-core) and then measured. Pages per second come from
 * the scan's own startedAt and finishedAt; memory is sampled every 50 ms over the server process
 * and every process below it (Chromium's browser, renderers and helpers): the sum of their RSS
 * (which counts pages they share once per process, so it overstates) and of their PSS. Beside the
 * Chromium engine, the same pages are checked by Playwright and axe-core alone in the same browser
 * (`playwrightAxe`), the baseline its ratio is taken against.
 *
 *   make build && npx tsx scripts/bench/scans.ts [--pages 50] [--concurrency 4] [--engines chromium,jsdom] [--failing]
 *
 * Element screenshots: the engine `chromium` takes them (SCREENSHOTS_PER_PAGE as configured),
 * `chromium-noshots` is the same engine with SCREENSHOTS_PER_PAGE=0; with --failing every page
 * also has two failing elements (low-contrast text), so each page takes screenshots. The goal
 *: a scan with screenshots within 20% of its time without them:
 *
 *   npx tsx scripts/bench/scans.ts --engines chromium-noshots,chromium --failing
 *
 * The checks beyond axe that wait or download cost most on pages with media or timers: with --media
 * of every four pages one has a video of a 20-second tone (a 0.9 MB WAV), one a clock that ticks
 * each second, one a video that loads only when played (preload="none") and a script that polls
 * every 100 ms until the page is ready, and one stays plain:
 *
 *   npx tsx scripts/bench/scans.ts --engines chromium --media --pages 12
 *
 * Where a Chromium page's time goes: with --phases pactum records its metrics (METRICS_TOKEN), and
 * the bench reads pactum_scan_phase_seconds from its /metrics before and after the measured scan
 * and prints, per phase, p50 and p90 ms a page and its share of the page's time, beside the
 * baseline's own load and axe split, timed the same way (performance.now() around each). Off by
 * default: recording metrics loads prom-client (~7 MB of the server's memory) and the memory
 * figures would no longer compare with earlier runs.
 *
 *   npx tsx scripts/bench/scans.ts --engines chromium --phases
 *
 * Goals: Chromium >= 4 pages/s on 2 cores with server + browser <= 600 MB; jsdom >= 8 pages/s.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import axeCore from 'axe-core';
import { chromium } from 'playwright-core';
import { axeRunOptions } from '../../src/domain/scan/axe-results.js';
import { CHROMIUM_FLAGS } from '../../src/domain/scan/chromium/engine.js';
import { record, toneWav } from './lib.js';
import { startPactum, type Pactum } from './pactum-process.js';

const { values: argv } = parseArgs({
  options: {
    pages: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '4' },
    engines: { type: 'string', default: 'chromium,jsdom' },
    'sample-ms': { type: 'string', default: '50' },
    failing: { type: 'boolean', default: false },
    media: { type: 'boolean', default: false },
    'no-baseline': { type: 'boolean', default: false },
    phases: { type: 'boolean', default: false },
  },
});
const PAGES = Number(argv.pages);
const CONCURRENCY = Number(argv.concurrency);
const SAMPLE_MS = Number(argv['sample-ms']);

/** What --media pages play. */
const TONE_WAV = toneWav();

/** With --media: a video of the tone, a clock ticking each second, or a video loaded when played beside a poll that ends. */
function mediaOf(i: number): string {
  if (!argv.media) return '';
  if (i % 4 === 1) return '<figure><video controls width="160" src="/tone.wav"></video><figcaption><a href="/p0.html">Transcript</a></figcaption></figure>';
  if (i % 4 === 2) return '<p>Local time: <span id="clock">00:00:00</span></p><script>setInterval(() => { document.getElementById("clock").textContent = new Date().toTimeString().slice(0, 8); }, 1000);</script>';
  if (i % 4 === 3) return '<figure><video controls preload="none" width="160" src="/tone.wav"></video><figcaption><a href="/p0.html">Transcript</a></figcaption></figure><script>const ready = setInterval(() => { if (document.readyState === "complete") clearInterval(ready); }, 100);</script>';
  return '';
}

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** Page i: a nav, a heading, text, a list, an image, and links on to the next pages. */
function page(i: number, count: number): string {
  const next = [1, 2, 3].map((d) => (i + d) % count).map((n) => `<li><a href="/p${n}.html">Page ${n}</a></li>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${i}</title>
<style>body{font-family:sans-serif;max-width:50em;margin:auto;color:#222}nav a{margin-right:1em}.faint{color:#bbb}</style></head>
<body><header><nav aria-label="Main"><a href="/">Home</a><a href="/p1.html">About</a><a href="/p2.html">Contact</a></nav></header>
<main><h1>Page ${i}</h1><p>This is page ${i} of a small site. It has a few paragraphs of text, a list and an image, like many simple pages.</p>
<p>Our opening hours are Monday to Friday, nine to five. Call us or write to us; we answer within a day.</p>
<img src="/logo.png" alt="The company logo" width="40" height="40"><h2>More</h2><ul>${next}</ul>
${i % 5 === 0 ? '<img src="/photo.png" width="40" height="40">' : ''}${argv.failing ? '<p class="faint">Small print in light grey.</p><p class="faint">More of it.</p>' : ''}${mediaOf(i)}</main><footer><p>© Example ${i}</p></footer></body></html>`;
}

async function startSite(count: number) {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.endsWith('.png')) return void res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    if (path === '/tone.wav') return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(TONE_WAV);
    const m = path === '/' ? ['', '0'] : /^\/p(\d+)\.html$/.exec(path);
    if (!m || Number(m[1]) >= count) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(Number(m[1]), count));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => new Promise((r) => server.close(r)) };
}

/** The process and all its descendants. */
function tree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parents) if (ppid === out[i]) out.push(pid);
  return out;
}

/** What a process of the tree is: the server (the root), or Chromium's browser, renderer, zygote, utility… */
function kindOf(pid: number, root: number): string {
  if (pid === root) return 'server';
  try {
    // Chromium rewrites its command line into one string, so it is read as text, not split on NULs.
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    const type = /--type=(\S+)/.exec(args)?.[1];
    const service = /--utility-sub-type=\S*?\.mojom\.(\w+)/.exec(args)?.[1] ?? /--utility-sub-type=(\S+)/.exec(args)?.[1];
    return type ? (service ? `${type} (${service})` : type) : 'browser';
  } catch {
    return 'gone';
  }
}

interface Memory { rss: number; pss: number; processes: number; byKind: Map<string, number>; countByKind: Map<string, number> }

function memory(pids: number[]): Memory {
  let rss = 0;
  let pss = 0;
  let processes = 0;
  const byKind = new Map<string, number>();
  const countByKind = new Map<string, number>();
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      const own = Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
      rss += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
      pss += own;
      processes++;
      const kind = kindOf(pid, pids[0]!);
      byKind.set(kind, (byKind.get(kind) ?? 0) + own);
      countByKind.set(kind, (countByKind.get(kind) ?? 0) + 1);
    } catch {
      // gone meanwhile
    }
  }
  return { rss, pss, processes, byKind, countByKind };
}

/** "server 180 MB, browser 150 MB, renderer ×2 260 MB, …": where the peak's PSS was. */
function breakdown(m: Memory): string {
  return [...m.byKind].sort((a, b) => b[1] - a[1]).map(([kind, bytes]) => {
    const n = m.countByKind.get(kind) ?? 1;
    return `${kind}${n > 1 ? ` ×${n}` : ''} ${mb(bytes)}`;
  }).join(', ');
}

/** What the bench reads of the tools' answers (the specs define them in full). */
interface ToolAnswer {
  scanId?: string;
  finished?: boolean;
  reports?: { finishedAt: string; startedAt: string; status: string; pagesScanned: number; totalIssues: number }[];
  digest?: { engine?: string };
}

async function tool(pactum: Pactum, token: string, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  const res = await fetch(`${pactum.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await res.json()) as { result?: { structuredContent?: ToolAnswer; isError?: boolean; content?: { text: string }[] } };
  if (!body.result || body.result.isError) throw new Error(`${name}: ${JSON.stringify(body)}`);
  return body.result.structuredContent!;
}

async function scan(pactum: Pactum, token: string, siteUrl: string, maxPages: number) {
  const { scanId } = await tool(pactum, token, 'dashboard_scan_site', { siteUrl, scanMode: 'site', maxPages, concurrency: CONCURRENCY });
  if (!scanId) throw new Error('dashboard_scan_site gave no scanId');
  for (;;) {
    const progress = await tool(pactum, token, 'dashboard_get_scan_progress', { scanId });
    if (progress.finished) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const { reports } = await tool(pactum, token, 'dashboard_list_reports', { limit: 1 });
  const report = await tool(pactum, token, 'dashboard_get_report', { scanId, view: 'digest', top: 3 });
  const row = reports?.[0];
  if (!row) throw new Error('dashboard_list_reports listed no report');
  const seconds = (Date.parse(row.finishedAt) - Date.parse(row.startedAt)) / 1000;
  return { status: row.status, pages: row.pagesScanned, seconds, engine: report.digest?.engine ?? 'unknown', issues: row.totalIssues };
}

/**
 * CPU seconds (user + system) used so far by each process of the tree, by pid, with what its
 * children that have exited used (cutime, cstime): Chromium's renderers exit when a scan closes
 * its context, and the zygote that reaps them keeps their CPU time.
 */
function cpuSeconds(pids: number[]): Map<number, number> {
  const tick = 100; // USER_HZ on Linux
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(pid, (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / tick);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Decimal megabytes, as the goals are written (and as run-all records them). */
const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;

/**
 * The baseline for Chromium: what a skilled user of Playwright and axe-core writes to check the
 * same pages in the same browser with the same flags. It uses one context, axe injected as an
 * init script, and one page per core, each reused, going to the next page and running axe on it.
 * It does none of pactum's work: no crawl or fetch of the site, no requests routed through an
 * address policy, no checks beyond axe (keyboard, playback, layout), no report. So the ratio says
 * what that work costs.
 */
async function playwrightAxe(siteUrl: string, count: number): Promise<{ seconds: number; cpu: number; load: number[]; axe: number[] }> {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: [...CHROMIUM_FLAGS] });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript({ content: axeCore.source });
    const pages = await Promise.all(Array.from({ length: Math.max(1, cpus().length) }, () => context.newPage()));
    const options = JSON.stringify(axeRunOptions('WCAG2AA', 'browser'));
    const urls = Array.from({ length: count }, (_, i) => (i === 0 ? siteUrl : new URL(`/p${i}.html`, siteUrl).href));
    // Each page's two phases in ms, timed as pactum times its own (performance.now() around each).
    let load: number[] = [];
    let axe: number[] = [];
    const run = async (list: string[]) => {
      let next = 0;
      await Promise.all(pages.map(async (page) => {
        for (let i = next++; i < list.length; i = next++) {
          const started = performance.now();
          await page.goto(list[i]!, { waitUntil: 'load' });
          const loaded = performance.now();
          await page.evaluate(`axe.run(document, ${options})`);
          load.push(loaded - started);
          axe.push(performance.now() - loaded);
        }
      }));
    };
    await run(urls.slice(0, 5)); // warm-up, as pactum's
    load = [];
    axe = [];
    const before = cpuSeconds(tree(process.pid));
    const started = performance.now();
    await run(urls);
    const seconds = (performance.now() - started) / 1000;
    let cpu = 0;
    for (const [pid, used] of cpuSeconds(tree(process.pid))) cpu += used - (before.get(pid) ?? 0);
    return { seconds, cpu, load, axe };
  } finally {
    await browser.close();
  }
}

const METRICS_TOKEN = 'bench-scans-metrics-token-0123456789';

/** One histogram series as scraped: its bucket counts by upper bound, its sum and count. */
interface Histogram { buckets: Map<number, number>; sum: number; count: number }

/** Every series of histogram `name` in an exposition, by the value of label `by`, of those whose labels include `where`. */
function histograms(text: string, name: string, by: string, where: Record<string, string>): Map<string, Histogram> {
  const out = new Map<string, Histogram>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$/.exec(line);
    if (!m || !m[1]!.startsWith(name) || !['', '_bucket', '_sum', '_count'].includes(m[1]!.slice(name.length))) continue;
    const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.entries(where).some(([k, v]) => labels[k] !== v)) continue;
    const key = labels[by] ?? '';
    let h = out.get(key);
    if (!h) out.set(key, (h = { buckets: new Map(), sum: 0, count: 0 }));
    const value = Number(m[3]);
    if (m[1]!.endsWith('_bucket')) h.buckets.set(labels.le === '+Inf' ? Infinity : Number(labels.le), value);
    else if (m[1]!.endsWith('_sum')) h.sum = value;
    else if (m[1]!.endsWith('_count')) h.count = value;
  }
  return out;
}

/** What was observed between two scrapes (the measured scan alone, not the warm-up). */
function since(after: Histogram, before: Histogram | undefined): Histogram {
  const buckets = new Map([...after.buckets].map(([le, n]) => [le, n - (before?.buckets.get(le) ?? 0)]));
  return { buckets, sum: after.sum - (before?.sum ?? 0), count: after.count - (before?.count ?? 0) };
}

/** The q-quantile in seconds, interpolated within its bucket as Prometheus' histogram_quantile does. */
function quantile(h: Histogram, q: number): number {
  const bounds = [...h.buckets].sort((a, b) => a[0] - b[0]);
  const rank = q * h.count;
  let lower = 0;
  let below = 0;
  for (const [le, n] of bounds) {
    if (n >= rank) {
      if (le === Infinity) return lower; // past the last bound: the last bound, as histogram_quantile answers
      return lower + ((le - lower) * (rank - below)) / Math.max(n - below, 1e-9);
    }
    lower = le;
    below = n;
  }
  return lower;
}

/** The q-quantile of samples (nearest rank). */
function sampleQuantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

const scrapeMetrics = async (pactum: Pactum) => (await fetch(`${pactum.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();

/** Phases that follow each other within a page's check, in the order a page goes through them. */
const SEQUENTIAL = ['open', 'load', 'axe', 'survey', 'check:link-destinations', 'check:playback', 'check:media', 'check:auto-update', 'check:keyboard', 'check:layout', 'check:motion', 'quiet', 'screenshots', 'styles'];

/**
 * The breakdown table: for each phase, the pages that went through it, p50 and p90 ms a page
 * (interpolated within the histogram's buckets), the mean, and its share of the page time (the
 * check without its wait for a slot, plus storing); beside it the baseline's load and axe.
 */
function phaseTable(before: string, after: string, baseline: { load: number[]; axe: number[] } | null): string[] {
  const where = { engine: 'chromium' };
  const was = histograms(before, 'pactum_scan_phase_seconds', 'phase', where);
  const phases = new Map([...histograms(after, 'pactum_scan_phase_seconds', 'phase', where)].map(([p, h]) => [p, since(h, was.get(p))]));
  const check = since(histograms(after, 'pactum_scan_page_check_duration_seconds', 'engine', where).get('chromium') ?? { buckets: new Map(), sum: 0, count: 0 },
    histograms(before, 'pactum_scan_page_check_duration_seconds', 'engine', where).get('chromium'));
  const of = (p: string) => phases.get(p) ?? { buckets: new Map(), sum: 0, count: 0 };
  const pageTime = check.sum - of('slot').sum + of('store').sum;
  const other = check.sum - of('slot').sum - SEQUENTIAL.reduce((a, p) => a + of(p).sum, 0);
  const ms = (s: number) => (s * 1000).toFixed(s < 0.01 ? 1 : 0).padStart(7);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(7);
  const pages = check.count;
  const baseTotal = baseline ? baseline.load.reduce((a, b) => a + b, 0) + baseline.axe.reduce((a, b) => a + b, 0) : 0;
  const base = (values: number[] | undefined) => {
    if (!values?.length) return '';
    const sum = values.reduce((a, b) => a + b, 0);
    return `  │ ${(sampleQuantile(values, 0.5)).toFixed(0).padStart(7)} ${(sampleQuantile(values, 0.9)).toFixed(0).padStart(7)} ${(sum / values.length).toFixed(0).padStart(7)} ${pct(sum / baseTotal)}`;
  };
  const row = (label: string, h: Histogram | null, share: number | null, baseValues?: number[]) =>
    `  ${label.padEnd(34)} ${h ? String(h.count).padStart(5) : '     '} ${h ? ms(quantile(h, 0.5)) : '       '} ${h ? ms(quantile(h, 0.9)) : '       '} ${h && h.count ? ms(h.sum / h.count) : '       '} ${share === null ? '       ' : pct(share)}${base(baseValues)}`;
  const lines = [
    `  where a Chromium page's time goes: ${pages} pages, read from pactum_scan_phase_seconds (p50/p90 interpolated within its buckets, as histogram_quantile does; the mean is exact)`,
    ...(baseline ? [`  ${' '.repeat(34 + 5 + 4 * 8)}    │ the baseline (Playwright + axe-core), timed alike`] : []),
    `  ${'phase'.padEnd(34)} ${'pages'.padStart(5)} ${'p50 ms'.padStart(7)} ${'p90 ms'.padStart(7)} ${'mean ms'.padStart(7)} ${'share'.padStart(7)}${baseline ? `  │ ${'p50 ms'.padStart(7)} ${'p90 ms'.padStart(7)} ${'mean ms'.padStart(7)} ${'share'.padStart(7)}` : ''}`,
  ];
  for (const p of [...SEQUENTIAL, 'store']) {
    const h = phases.get(p);
    if (!h?.count) continue;
    lines.push(row(p, h, h.sum / pageTime, p === 'load' ? baseline?.load : p === 'axe' ? baseline?.axe : undefined));
  }
  lines.push(row('other (between the phases)', null, other / pageTime));
  lines.push(row('page time (check − slot + store)', null, 1));
  if (of('settle').count) lines.push(row('settle (in playback, auto-update)', of('settle'), of('settle').sum / pageTime));
  if (of('slot').count) lines.push(row('slot (waiting; not page time)', of('slot'), null));
  lines.push(`  pages are checked side by side (${process.env.SCAN_PAGE_SLOTS ?? cpus().length + 1} page slots, ${process.env.SCAN_PAGE_SLOTS_PER_ORG ?? 'all but one'} for the scan's org), so the phases of different pages overlap in time; settle is part of the checks that wait, not added to the total`);
  return lines;
}

const site = await startSite(PAGES);
console.log(`scan bench: ${PAGES}-page site${argv.media ? ' (with media and timers)' : ''}, concurrency ${CONCURRENCY}, ${cpus().length} cores, Node ${process.version}`);
for (const engine of argv.engines.split(',')) {
  const shots = engine !== 'chromium-noshots';
  const pactum = await startPactum({
    SCAN_ENGINE: engine.replace(/-noshots$/, ''), SCAN_ALLOW_PRIVATE_NETWORKS: 'true', ...(shots ? {} : { SCREENSHOTS_PER_PAGE: '0' }), ...(argv.phases ? { METRICS_TOKEN } : {}),
  });
  try {
    pactum.cli(['org', 'create', 'scans']);
    const token = pactum.cli(['token', '--sub', 'svc_bench', '--org', 'scans', '--perm', 'scans.create,reports.view', '--ttl', '1h', '--audience', pactum.url]).trim().split('\n').pop()!;
    await scan(pactum, token, site.url, 5); // warm-up: the browser or the workers start
    let peak = { rss: 0, pss: 0, processes: 0 };
    let peakPss: Memory | null = null;
    let serverPeak = 0;
    const sampler = setInterval(() => {
      const now = memory(tree(pactum.pid));
      serverPeak = Math.max(serverPeak, now.byKind.get('server') ?? 0);
      if (!peakPss || now.pss > peakPss.pss) peakPss = now;
      if (now.rss > peak.rss) peak = { ...now, pss: Math.max(now.pss, peak.pss) };
      else peak.pss = Math.max(now.pss, peak.pss);
    }, SAMPLE_MS);
    // CPU used by the server and the browser during the scan: on a machine shared with other work,
    // pages per CPU-second says what two cores of its own would do.
    const metricsBefore = argv.phases ? await scrapeMetrics(pactum) : '';
    const before = cpuSeconds(tree(pactum.pid));
    const measured = await scan(pactum, token, site.url, PAGES);
    const metricsAfter = argv.phases ? await scrapeMetrics(pactum) : '';
    clearInterval(sampler);
    let cpu = 0;
    const cpuByKind = new Map<string, number>();
    for (const [pid, used] of cpuSeconds(tree(pactum.pid))) {
      const spent = used - (before.get(pid) ?? 0);
      cpu += spent;
      const kind = kindOf(pid, pactum.pid);
      cpuByKind.set(kind, (cpuByKind.get(kind) ?? 0) + spent);
    }
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
    const rate = measured.pages / measured.seconds;
    console.log(`${(measured.engine + (measured.engine === 'chromium' ? (shots ? ' (screenshots on)' : ' (screenshots off)') : '')).padEnd(8)} ${measured.pages} pages in ${measured.seconds.toFixed(2)} s = ${rate.toFixed(1)} pages/s (${measured.status}, ${measured.issues} issues; load average ${load}); `
      + `CPU ${cpu.toFixed(1)} s = ${((cpu * 1000) / measured.pages).toFixed(0)} ms a page, ${(cpus().length * measured.pages / cpu).toFixed(1)} pages/s on ${cpus().length} cores of its own; peak memory, server + browser: RSS ${mb(peak.rss)} over ${peak.processes} processes, PSS ${mb(peak.pss)} (server alone: PSS ${mb(serverPeak)})`);
    if (peakPss) console.log(`  PSS at its peak, by process: ${breakdown(peakPss)}`);
    console.log(`  CPU by process (with the renderers the zygote reaped): ${[...cpuByKind].sort((a, b) => b[1] - a[1]).map(([kind, s]) => `${kind} ${s.toFixed(1)} s`).join(', ')}`);
    const goal = measured.engine === 'chromium' ? 4 : 8;
    let baseline: { name: string; value: number } | undefined;
    let raw: Awaited<ReturnType<typeof playwrightAxe>> | null = null;
    if (measured.engine === 'chromium' && !argv['no-baseline']) {
      raw = await playwrightAxe(site.url, measured.pages);
      baseline = { name: 'Playwright + axe-core alone, same browser and flags', value: measured.pages / raw.seconds };
      console.log(`baseline ${measured.pages} pages in ${raw.seconds.toFixed(2)} s = ${baseline.value.toFixed(1)} pages/s (Playwright + axe-core alone); CPU ${raw.cpu.toFixed(1)} s = ${((raw.cpu * 1000) / measured.pages).toFixed(0)} ms a page; pactum/baseline ${(rate / baseline.value).toFixed(2)}`);
    }
    if (argv.phases && measured.engine === 'chromium') for (const line of phaseTable(metricsBefore, metricsAfter, raw)) console.log(line);
    // With --phases the server records metrics: said in the figures' names, as they are not those of a server without.
    const metered = argv.phases ? ' (metrics recorded)' : '';
    record(
      { bench: 'scans', measure: `${measured.engine}: ${measured.pages}-page site${argv.media ? ' with media and timers' : ''}${metered}`, value: rate, unit: 'pages/s', ...(baseline ? { baseline, ratio: rate / baseline.value } : {}), goal: `>= ${goal}`, met: rate >= goal },
      { bench: 'scans', measure: `${measured.engine}: peak memory, server + browser (PSS)${metered}`, value: peak.pss / 1e6, unit: 'MB', baseline: { name: 'RSS summed over processes', value: peak.rss / 1e6 }, goal: '<= 600 MB', met: peak.pss <= 600e6 },
    );
  } finally {
    await pactum.stop();
  }
}
await site.close();
