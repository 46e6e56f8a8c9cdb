/**
 * The scan metrics an operator reads about the queue and the browser: scans waiting and running
 * by org class (at_cap: the org has SCAN_MAX_RUNNING_PER_ORG scans running, the fair choice holds
 * the rest back; below_cap: any other org), never by org id; and Chromium's restarts, moved by a
 * browser that died between two scans; and where a Chromium page's time goes, phase by phase.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { requireChromium } from '../helpers/chromium.js';
import { insertOrg } from '../../src/db/users.js';
import type { ScanRow } from '../../src/db/scans.js';
import { SCAN_PHASES } from '../../src/domain/scan/phases.js';

const TOKEN = 'scan-metrics-token-0123456789';

async function scrape(s: TestServer) {
  const res = await fetch(`${s.directUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** Every series of `name`: its labels (as one sorted string) and value. */
function series(text: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m && m[1] === name) out[(m[2] ?? '').split(',').sort().join(',')] = Number(m[3]);
  }
  return out;
}

const value = (text: string, name: string) => Object.values(series(text, name)).reduce((a, b) => a + b, 0);

async function until<T>(what: string, probe: () => Promise<T | undefined>, seconds = 120): Promise<T> {
  for (let i = 0; i < seconds * 20; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Org { id: string; client: Client }

async function org(s: TestServer, slug: string): Promise<Org> {
  const id = (await insertOrg(s.services.db, { name: slug, slug })).id;
  return { id, client: await mcpClient(s.url, bearer(await s.token({ sub: `svc_${slug}`, orgId: id, role: 'member', perms: [] }))) };
}

/**
 * A site whose home page links to /held, which is answered only once `release()` is called: a
 * scan of it (two pages) holds its engine session open, with its first page checked, until then.
 */
async function heldSite() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = 0;
  const server: Server = createServer((req, res) => {
    if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>Home</title><main><a href="/held">held</a></main></html>');
    if (req.url === '/held') {
      held++;
      return void gate.then(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>Held</title><main>held</main></html>'));
    }
    res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    held: () => held,
    release,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('scans waiting and running, by org class', () => {
  let s: TestServer;
  let site: Awaited<ReturnType<typeof heldSite>>;
  beforeAll(async () => {
    site = await heldSite();
    // Three scanners, at most two for one org.
    s = await startTestServer({
      METRICS_TOKEN: TOKEN, SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom', SCAN_CONCURRENCY: '3', SCAN_MAX_RUNNING_PER_ORG: '2', SCAN_PAGE_TIMEOUT_SECONDS: '600',
    });
  });
  afterAll(async () => {
    site?.release();
    await s?.stop();
    await site?.close();
  });
  afterEach(() => s.expectConformant());

  it('counts a flooding org’s scans as at_cap and a bystander’s as below_cap, and neither once they are done', { timeout: 300_000 }, async () => {
    const [flood, bystander] = [await org(s, 'flood'), await org(s, 'bystander')];
    const scan = async (o: Org) => (ok(await o.client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url, scanMode: 'site', maxPages: 2 } })) as { scanId: string }).scanId;
    const running = async (o: Org) => Number((await s.services.db('scans').where({ org_id: o.id, status: 'running' }).count<{ n: number }[]>({ n: '*' }))[0]!.n);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await scan(flood));
    await until('two of the flood’s scans to run', async () => ((await running(flood)) === 2 ? true : undefined));
    for (let i = 0; i < 2; i++) ids.push(await scan(bystander));
    // Every scanner is busy: the flood's two and the bystander's first scan each wait for /held.
    await until('three scans held on their second page', () => Promise.resolve(site.held() === 3 ? true : undefined));

    const during = await scrape(s);
    // The flood: 2 running (its cap), 2 waiting for its own to finish. The bystander: 1 running
    // (below the cap of 2), 1 waiting for a free scanner.
    expect(series(during, 'pactum_scans_queued')).toEqual({ 'org_class="at_cap"': 2, 'org_class="below_cap"': 1 });
    expect(series(during, 'pactum_scans_running')).toEqual({
      'engine="jsdom",org_class="at_cap"': 2,
      'engine="jsdom",org_class="below_cap"': 1,
    });
    expect(during).not.toContain(flood.id);
    expect(during).not.toContain(bystander.id);

    site.release();
    await until('every scan to finish', async () => {
      const rows = await s.services.db<ScanRow>('scans').whereIn('id', ids);
      return rows.every((r) => r.finished_at) ? rows : undefined;
    });
    const after = await scrape(s);
    expect(series(after, 'pactum_scans_queued')).toEqual({ 'org_class="at_cap"': 0, 'org_class="below_cap"': 0 });
    expect(series(after, 'pactum_scans_running')).toEqual({ 'engine="jsdom",org_class="at_cap"': 0, 'engine="jsdom",org_class="below_cap"': 0 });
    for (const o of [flood, bystander]) await o.client.close();
  });
});

describe('pactum_scan_browser_restarts_total', () => {
  let s: TestServer;
  let page: Server;
  let pageUrl: string;
  beforeAll(async () => {
    requireChromium();
    page = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>One page</title><main><img src="/x.png"></main></html>'));
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', () => r()));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    s = await startTestServer({ METRICS_TOKEN: TOKEN, SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium' });
  });
  afterAll(async () => {
    await s?.stop();
    await new Promise<void>((r) => (page ? page.close(() => r()) : r()));
  });
  afterEach(() => s.expectConformant());

  /** The Chromium browsers this process started: its children running the chromium binary. */
  const browsers = () =>
    execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => /^\s*(\d+)\s+(\S+)/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null && /chrom/i.test(m[2]!))
      .map((m) => Number(m[1]));

  it('stays at 0 while the first browser serves, and counts one when the browser died and the next scan starts another', { timeout: 180_000 }, async () => {
    const client = await mcpClient(s.url, bearer(await s.token()));
    const check = async () => expect(ok(await client.callTool({ name: 'dashboard_scan_page', arguments: { url: pageUrl } }))).toMatchObject({ engine: 'chromium', title: 'One page' });

    await check();
    await check();
    const first = await scrape(s);
    expect(value(first, 'pactum_scan_browser_restarts_total')).toBe(0);
    const [pid, ...others] = browsers();
    expect(others, 'one browser').toEqual([]);

    process.kill(pid!, 'SIGKILL');
    await until('the browser to be gone', () => Promise.resolve(browsers().includes(pid!) ? undefined : true));
    await check();
    const second = await scrape(s);
    expect(value(second, 'pactum_scan_browser_restarts_total')).toBe(1);
    expect(browsers()).not.toContain(pid);
    expect(browsers()).toHaveLength(1);
    await client.close();
  });
});

describe('pactum_scan_phase_seconds', () => {
  let s: TestServer;
  let site: Server;
  let siteUrl: string;
  /**
   * Two pages: each has links named alike that lead to different pages (followed before they are
   * reported) and light-grey text (a failing element, so screenshots are taken).
   */
  const pageOf = (title: string) => `<!doctype html><html lang="en"><head><title>${title}</title><style>.faint{color:#ccc}</style></head><body><main><h1>${title}</h1>
<p class="faint">Small print in light grey.</p><p><a href="/a">Read more</a></p><p><a href="/b">Read more</a></p><p><a href="/second">Second</a></p></main></body></html>`;
  beforeAll(async () => {
    requireChromium();
    site = createServer((req, res) => {
      const pages: Record<string, string> = { '/': pageOf('Home'), '/second': pageOf('Second'), '/a': pageOf('A'), '/b': pageOf('B') };
      const html = pages[req.url ?? ''];
      if (html) return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    s = await startTestServer({ METRICS_TOKEN: TOKEN, SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium' });
  });
  afterAll(async () => {
    await s?.stop();
    await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
  });
  afterEach(() => s.expectConformant());

  it('counts each phase of each page a site scan checked: load, axe, the checks beyond axe by name, screenshots, storing', { timeout: 180_000 }, async () => {
    const before = series(await scrape(s), 'pactum_scan_phase_seconds_count');
    expect(before).toEqual({});
    const client = await mcpClient(s.url, bearer(await s.token()));
    const { scanId } = ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl, scanMode: 'site', maxPages: 2 } })) as { scanId: string };
    const row = await until('the scan to finish', async () => {
      const found = await s.services.db<ScanRow>('scans').where({ id: scanId }).first();
      return found?.finished_at ? found : undefined;
    });
    expect(row.status).toBe('completed');
    expect(row.pages_scanned).toBe(2);

    const text = await scrape(s);
    const counts = series(text, 'pactum_scan_phase_seconds_count');
    const count = (phase: string) => counts[`engine="chromium",phase="${phase}"`];
    // Once per phase per page, summed within the page.
    for (const phase of ['slot', 'load', 'axe', 'survey', 'check:link-destinations', 'check:playback', 'check:media', 'check:auto-update', 'check:keyboard', 'check:layout', 'check:motion', 'quiet', 'screenshots', 'store']) {
      expect(count(phase), phase).toBe(2);
    }
    // The browser and its context are opened for the first page; a page is opened for each page checked at once.
    expect(count('open')).toBeGreaterThanOrEqual(1);
    // Nothing but the engine and a phase of the bounded set labels a series (no URL, no org).
    const labels = Object.keys(counts).map((l) => /^engine="chromium",phase="([^"]+)"$/.exec(l)?.[1]);
    expect(labels.every((phase) => phase !== undefined && (SCAN_PHASES as readonly string[]).includes(phase)), Object.keys(counts).join(' ')).toBe(true);
    expect(text).not.toContain(siteUrl);
    // Its buckets end with every observation: a well-formed histogram.
    const inf = series(text, 'pactum_scan_phase_seconds_bucket');
    expect(inf['engine="chromium",le="+Inf",phase="load"']).toBe(2);
    expect(series(text, 'pactum_scan_phase_seconds_sum')['engine="chromium",phase="axe"']).toBeGreaterThan(0);
    await client.close();
  });
});
