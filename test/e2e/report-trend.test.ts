/**
 * The trend of a site's open findings, from three jsdom scans of a page that loses an image
 * without alt text between scans, one of its findings marked a false positive: the numbers of
 * dashboard_get_report view app, the chart and its table on the report page and in the MCP App
 * (the resource in jsdom with ext-apps' AppBridge as its host), another org's scan of the same
 * URL kept out of either org's trend, and no trend on a shared link. The same in Chromium, with
 * the page's requests watched and pactum's own scan of it: test/e2e/reports-chromium.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { JSDOM } from 'jsdom';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { imagesPage, startChangingSite, type ChangingSite } from '../helpers/changing-site.js';
import { viewInBridge } from '../helpers/view-bridge.js';
import { insertOrg } from '../../src/db/users.js';

type ByLevel = { error: number; warning: number; notice: number };
type Point = { scanId: string; finishedAt: string; open: ByLevel };

let s: TestServer;
let site: ChangingSite;
let a: Client;
let b: Client;
let tokenA: string;
let tokenB: string;
const runs: string[] = [];
let otherRun: string;
/** Each run's issues by level, as its summary counts them (before any mark). */
const totals: ByLevel[] = [];

async function scan(client: Client): Promise<string> {
  const scanId = ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'single' } })).scanId as string;
  for (let i = 0; i < 2400; i++) {
    if (ok(await client.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId } })).finished) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return scanId;
}

const app = async (client: Client, scanId: string) => ok(await client.callTool({ name: 'dashboard_get_report', arguments: { scanId, view: 'app' } })).app as { summary: { byLevel: ByLevel }; trend?: Point[] };

beforeAll(async () => {
  site = await startChangingSite({ '/': imagesPage(2) });
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' });
  const orgA = (await insertOrg(s.services.db, { name: 'Trend A', slug: 'trend-a' })).id;
  const orgB = (await insertOrg(s.services.db, { name: 'Trend B', slug: 'trend-b' })).id;
  tokenA = await s.token({ sub: 'svc_trend_a', orgId: orgA, role: 'org_admin', perms: [] });
  tokenB = await s.token({ sub: 'svc_trend_b', orgId: orgB, role: 'org_admin', perms: [] });
  a = await mcpClient(s.url, bearer(tokenA));
  b = await mcpClient(s.url, bearer(tokenB));
  // Three runs of org A: three, two, then one image without alt text.
  for (const version of [2, 1, 0]) {
    site.pages.set('/', imagesPage(version));
    runs.push(await scan(a));
  }
  // Org B scans the same URL, between A's runs and after them.
  otherRun = await scan(b);
  for (const id of runs) totals.push((await app(a, id)).summary.byLevel);
  // The image every version has is marked a false positive: no run counts it as open.
  const { findings } = ok(await a.callTool({ name: 'dashboard_list_findings', arguments: { scanId: runs[2], type: 'error' } })) as { findings: { fingerprint: string; issue: { code: string; context: string } }[] };
  const kept = findings.find((f) => f.issue.code === 'image-alt' && f.issue.context.includes('id="img0"'))!;
  ok(await a.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: runs[2], fingerprint: kept.fingerprint, mark: 'false_positive', reason: 'A spacer image, hidden from assistive technology by the page template' } }));
}, 180_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

/** The numbers a chart's table shows: its rows' cells, the row's heading left out. */
const tableNumbers = (doc: Document) => [...doc.querySelectorAll('table.trend tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent)));

/** The expected trend: each run's totals, less the one false positive among its errors. */
const expected = () => runs.map((scanId, k) => ({ scanId, open: { ...totals[k]!, error: totals[k]!.error - 1 } }));

/** What both the page and the App must show: a named, described image, its levels labelled, and the same numbers in a table. */
function expectChart(doc: Document) {
  const svg = doc.querySelector('svg.trend-chart')!;
  expect(svg.getAttribute('role')).toBe('img');
  const [titleId, descId] = svg.getAttribute('aria-labelledby')!.split(' ');
  expect(doc.getElementById(titleId!)!.textContent).toBe('Open findings per run, by level');
  const desc = doc.getElementById(descId!)!.textContent;
  expect(desc).toContain(`last 3 runs`);
  expect(desc).toContain(`errors ${totals[0]!.error - 1} to ${totals[2]!.error - 1}`);
  expect(desc).toMatch(/marked a false positive[^.]*are not counted/);
  // Not colour alone: each level its own labelled line, marker shape and dash.
  expect([...doc.querySelectorAll('.trend-legend li')].map((li) => li.textContent)).toEqual([
    ` Errors (solid line, circles): ${totals[2]!.error - 1} in this run`, ` Need review (dashed line, squares): ${totals[2]!.warning} in this run`, ` Notices (dotted line, triangles): ${totals[2]!.notice} in this run`,
  ]);
  // Words are HTML, not SVG text (a contrast check measures them); the drawing is lines and markers.
  expect(svg.querySelectorAll('text')).toHaveLength(0);
  expect(new Set([...svg.querySelectorAll('polyline')].map((p) => p.getAttribute('stroke-dasharray') ?? 'solid')).size).toBe(3);
  expect(svg.querySelectorAll('circle.mark.error')).toHaveLength(3);
  expect(svg.querySelectorAll('rect.mark.warning')).toHaveLength(3);
  expect(svg.querySelectorAll('path.mark.notice')).toHaveLength(3);
  // Nothing to fetch: no reference out of the document.
  expect(svg.querySelectorAll('[href], image, use, foreignObject')).toHaveLength(0);
  // The table alternative, in a disclosure, with the same numbers.
  expect(doc.querySelector('details > summary')!.textContent).toBe('The trend as a table');
  expect(tableNumbers(doc)).toEqual(expected().map((p) => [p.open.error, p.open.warning, p.open.notice]));
  expect(doc.querySelector('table.trend tbody tr:last-child th')!.textContent).toMatch(/\(this report\)$/);
}

describe('the trend of a site\'s open findings', () => {
  it('counts each run\'s open findings by level, oldest first, without the false positive', async () => {
    expect(totals.map((t) => t.error)).toEqual([totals[2]!.error + 2, totals[2]!.error + 1, totals[2]!.error]);
    const trend = (await app(a, runs[2]!)).trend!;
    expect(trend.map(({ scanId, open }) => ({ scanId, open }))).toEqual(expected());
    expect(trend.map((p) => p.finishedAt)).toEqual([...trend.map((p) => p.finishedAt)].sort());
    // An earlier report's trend ends with it.
    expect((await app(a, runs[1]!)).trend!.map((p) => p.scanId)).toEqual(runs.slice(0, 2));
  });

  it('never shows another org\'s runs of the same URL, either way', async () => {
    expect((await app(a, runs[2]!)).trend!.map((p) => p.scanId)).not.toContain(otherRun);
    const theirs = (await app(b, otherRun)).trend!;
    expect(theirs.map((p) => p.scanId)).toEqual([otherRun]);
    // Org A's mark is org A's: org B's run counts its image as open.
    expect(theirs[0]!.open.error).toBe((await app(b, otherRun)).summary.byLevel.error);
    const page = await (await fetch(`${s.url}/reports/${otherRun}`, { headers: { ...bearer(tokenB), accept: 'text/html' } })).text();
    for (const id of runs) expect(page).not.toContain(id);
  });

  it('draws the chart and its table on the report page, within the page\'s own policy', async () => {
    const res = await fetch(`${s.url}/reports/${runs[2]}`, { headers: { ...bearer(tokenA), accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await res.text();
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    const dom = new JSDOM(html, { runScripts: 'dangerously', url: `${s.url}/reports/${runs[2]}` });
    try {
      expectChart(dom.window.document);
    } finally {
      dom.window.close();
    }
  });

  it('draws the chart and its table in the MCP App, from the tool\'s structured result', async () => {
    const resource = (await a.readResource({ uri: 'ui://pactum/report' })).contents[0] as { text: string };
    const result = await a.callTool({ name: 'dashboard_get_report', arguments: { scanId: runs[2], view: 'app' } });
    const v = await viewInBridge(() => Promise.reject(new Error('no calls expected')), resource.text);
    try {
      await v.bridge.sendToolResult(result as never);
      await vi.waitFor(() => expect(v.window.document.querySelector('svg.trend-chart')).not.toBeNull());
      expectChart(v.window.document);
      expect(v.invalid).toEqual([]);
    } finally {
      v.close();
    }
  });

  it('leaves the trend out of a shared link: it shows that report alone', async () => {
    const link = ok(await a.callTool({ name: 'dashboard_share_report', arguments: { scanId: runs[2] } })).url as string;
    const html = await (await fetch(link)).text();
    const data = JSON.parse(/<script type="application\/json" id="pactum-data">([\s\S]*?)<\/script>/.exec(html)![1]!) as { view: { scanId: string; trend?: unknown } };
    expect(data.view.scanId).toBe(runs[2]);
    expect(data.view.trend).toBeUndefined();
  });
});
