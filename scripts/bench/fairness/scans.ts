/**
 * Scans: another org's one-page scan, on an idle server and while one org floods the queue with
 * FLOOD_SCANS multi-page scans (pactum from dist/, its own process, default settings, a site of
 * simple pages on loopback). The figure is what the bystander waits: from its dashboard_scan_site
 * call until its progress says finished, the median of a few scans one after another; before each,
 * the flood is topped up to FLOOD_SCANS waiting, so every sample meets the same queue.
 *
 * Goal: beside the flood, at most twice as long as alone. The flood's scans also check several
 * pages at once (concurrency 4), so the engine's page slots are contended as well as the queue.
 *
 *   make build && npx tsx scripts/bench/fairness.ts --only scans [--quick]
 *   BENCH_SCAN_ENGINE=jsdom|chromium|auto (default auto: Chromium when installed)
 *
 * Run against an older build (its dist/ in a worktree, with this file copied in) for the before.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fmt, median, record } from '../lib.js';
import { startPactum, type Pactum } from '../pactum-process.js';

const FLOOD_SCANS = 50;
/** Past this, the bystander's scan counts as not finished (a queue served in arrival order takes the whole flood first). */
const GIVE_UP_SECONDS = 600;

/** Page i of a site of `count`: a heading, text, an image without alt, links on. */
function page(i: number, count: number): string {
  const next = [1, 2, 3].map((d) => (i + d) % count).map((n) => `<li><a href="/p${n}.html">Page ${n}</a></li>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${i}</title></head>
<body><main><h1>Page ${i}</h1><p>Page ${i} of a small site: a few lines of text, a list and an image.</p>
<img src="/logo.png" width="40" height="40"><ul>${next}</ul></main></body></html>`;
}

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

async function startSite(count: number) {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.endsWith('.png')) return void res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    const m = path === '/' ? ['', '0'] : /^\/p(\d+)\.html$/.exec(path);
    if (!m || Number(m[1]) >= count) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(Number(m[1]), count));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise((r) => server.close(r)) };
}

interface Answer { isError: boolean; content: Record<string, unknown> }

async function tool(url: string, token: string, name: string, args: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await res.json()) as { result?: { structuredContent?: Record<string, unknown>; isError?: boolean; content?: { text: string }[] } };
  if (!body.result) throw new Error(`${name}: ${JSON.stringify(body)}`);
  const isError = Boolean(body.result.isError);
  return { isError, content: isError ? (JSON.parse(body.result.content![0]!.text) as Record<string, unknown>) : body.result.structuredContent! };
}

/** A token of a member-like service principal of org `slug` (created here). */
function orgToken(pactum: Pactum, slug: string): string {
  pactum.cli(['org', 'create', slug]);
  return pactum.cli(['token', '--sub', `svc_${slug}`, '--org', slug, '--perm', 'scans.create,reports.view', '--ttl', '2h', '--audience', pactum.url]).trim().split('\n').pop()!;
}

interface Timed {
  /** From the call until finished, or null past GIVE_UP_SECONDS. */
  seconds: number | null;
  /** Of which queued (created until started, as the server recorded them). */
  queuedSeconds: number | null;
}

async function timedScan(pactum: Pactum, token: string, siteUrl: string): Promise<Timed> {
  const t0 = performance.now();
  const started = await tool(pactum.url, token, 'dashboard_scan_site', { siteUrl, scanMode: 'single' });
  if (started.isError) throw new Error(`the bystander's scan was refused: ${JSON.stringify(started.content)}`);
  const scanId = started.content.scanId as string;
  while ((performance.now() - t0) / 1000 < GIVE_UP_SECONDS) {
    const progress = await tool(pactum.url, token, 'dashboard_get_scan_progress', { scanId });
    if (progress.content.finished) {
      const seconds = (performance.now() - t0) / 1000;
      const { reports } = (await tool(pactum.url, token, 'dashboard_list_reports', { limit: 1 })).content as { reports: { createdAt: string; startedAt: string }[] };
      const r = reports[0]!;
      return { seconds, queuedSeconds: (Date.parse(r.startedAt) - Date.parse(r.createdAt)) / 1000 };
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return { seconds: null, queuedSeconds: null };
}

/** Queues the flooding org's scans until FLOOD_SCANS of them wait (or it is refused); how many were refused. */
async function topUp(pactum: Pactum, token: string, siteUrl: string, pages: number): Promise<number> {
  const { reports } = (await tool(pactum.url, token, 'dashboard_list_reports', { status: 'queued', limit: 500 })).content as { reports: unknown[] };
  let refused = 0;
  for (let i = reports.length; i < FLOOD_SCANS; i++) {
    const r = await tool(pactum.url, token, 'dashboard_scan_site', { siteUrl, scanMode: 'site', maxPages: pages, concurrency: 4 });
    if (r.isError) refused++;
  }
  return refused;
}

async function bystanderScans(n: number, before: () => Promise<void>, scan: () => Promise<Timed>): Promise<Timed[]> {
  const times: Timed[] = [];
  for (let i = 0; i < n; i++) {
    await before();
    const t = await scan();
    times.push(t);
    if (t.seconds === null) break; // a queue served in arrival order: the next would wait as long
  }
  return times;
}

const show = (xs: Timed[]) => xs.map((x) => (x.seconds === null ? `>${GIVE_UP_SECONDS}` : `${fmt(x.seconds, 2)} (queued ${fmt(x.queuedSeconds!, 2)})`)).join(', ');
const medianOf = (xs: Timed[]) => (xs.some((x) => x.seconds === null) ? Infinity : median(xs.map((x) => x.seconds!)));
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];

export default async function scans({ quick }: { quick: boolean }): Promise<void> {
  const floodPages = quick ? 5 : 10;
  const samples = quick ? 3 : 5;
  const site = await startSite(floodPages);
  const engine = process.env.BENCH_SCAN_ENGINE ?? 'auto';
  const pactum = await startPactum({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: engine });
  try {
    const flooder = orgToken(pactum, 'flood');
    const bystander = orgToken(pactum, 'bystander');
    const bystanderUrl = `${site.origin}/p1.html`;
    const scanB = () => timedScan(pactum, bystander, bystanderUrl);
    await scanB(); // warm-up: the browser or the checker threads start
    const alone = await bystanderScans(samples, () => Promise.resolve(), scanB);
    const loadAlone = load();

    let refused = 0;
    let first = true;
    const beside = await bystanderScans(samples, async () => {
      refused += await topUp(pactum, flooder, `${site.origin}/`, floodPages);
      if (first) await new Promise((r) => setTimeout(r, 1000)); // the flood is running
      first = false;
    }, scanB);
    const loadBeside = load();

    const a = medianOf(alone);
    const b = medianOf(beside);
    const ratio = b / a;
    console.log(`engine ${engine}; the flood: ${FLOOD_SCANS} waiting scans of ${floodPages} pages (concurrency 4) from one org, topped up before each sample; ${refused} of its scans refused`);
    console.log(`another org's one-page scan, alone (load ${loadAlone}):       ${show(alone)} s; median ${fmt(a, 2)} s`);
    console.log(`another org's one-page scan, beside it (load ${loadBeside}):  ${show(beside)} s; median ${Number.isFinite(b) ? fmt(b, 2) : `>${GIVE_UP_SECONDS}`} s`);
    console.log(`beside the flood / alone: ${Number.isFinite(ratio) ? fmt(ratio, 2) : '∞'}× (goal ≤ 2×)`);
    record(
      { bench: 'fairness', measure: "scans: another org's one-page scan, idle server", value: a, unit: 's' },
      {
        bench: 'fairness',
        measure: `scans: another org's one-page scan while one org floods (${FLOOD_SCANS} queued ${floodPages}-page scans)`,
        value: Number.isFinite(b) ? b : GIVE_UP_SECONDS,
        unit: 's',
        baseline: { name: 'the same scan on an idle server', value: a },
        // Higher is better, as lib.ts reads ratios: alone over beside (0.5 is the goal's edge).
        ratio: Number.isFinite(b) ? a / b : 0,
        goal: '≤ 2× alone',
        met: ratio <= 2,
      },
    );
  } finally {
    await pactum.stop();
    await site.close();
  }
}
