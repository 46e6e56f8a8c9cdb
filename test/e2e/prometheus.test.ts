/**
 * A real Prometheus (Debian's) scrapes a pactum server started by the test, every second, with
 * the bearer METRICS_TOKEN on the main port. The test drives a git-lfs push, an MCP tool call and
 * a scan (jsdom), then asks Prometheus's HTTP API what it scraped: the counters moved by what was
 * done (the bytes pushed are the files' sizes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture, lfsWorkspace, removeWorkspaces, sourceRepo } from '../helpers/git-lfs.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { freePort } from '../helpers/ports.js';
import { insertOrg } from '../../src/db/users.js';

const PROMETHEUS = '/usr/bin/prometheus';
const TOKEN = 'prometheus-scrape-token-0123';
const PASSWORD = 'writer-password-1';

let s: TestServer;
let site: FixtureSite;
let client: Client;
let prometheus: ChildProcess;
let promUrl: string;
let dir: string;
let promLog = '';

async function query(expr: string): Promise<number> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as { status: string; data: { result: { value: [number, string] }[] } };
  expect(body.status).toBe('success');
  return body.data.result.length ? Number(body.data.result[0]!.value[1]) : 0;
}

/** Waits until Prometheus has scraped a value of `expr` that `done` accepts; returns the last value. */
async function settle(expr: string, done: (v: number) => boolean, ms = 30_000): Promise<number> {
  let v = NaN;
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
    v = await query(expr);
    if (done(v)) return v;
  }
  return v;
}

beforeAll(async () => {
  site = await startFixtureSite(0);
  s = await startTestServer({ METRICS_TOKEN: TOKEN, SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' });
  await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'writer', password: PASSWORD, access: 'write' });
  const orgId = (await insertOrg(s.services.db, { name: 'Scraped', slug: 'scraped' })).id;
  client = await mcpClient(s.url, bearer(await s.token({ sub: 'svc_scraped', orgId, role: 'org_admin', perms: [] })));

  dir = mkdtempSync(join(tmpdir(), 'pactum-prometheus-'));
  const target = new URL(s.directUrl);
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, scrape_timeout: 900ms }',
      'scrape_configs:',
      '  - job_name: pactum',
      '    metrics_path: /metrics',
      `    authorization: { type: Bearer, credentials: ${TOKEN} }`,
      `    static_configs: [ { targets: ['${target.host}'] } ]`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  prometheus.stdout!.on('data', (d) => (promLog += d));
  prometheus.stderr!.on('data', (d) => (promLog += d));
  const up = await (async () => {
    for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
      if (prometheus.exitCode !== null) break;
      const ready = await fetch(`${promUrl}/-/ready`).then((r) => r.ok, () => false);
      if (ready && (await query('up{job="pactum"}')) === 1) return true;
    }
    return false;
  })();
  if (!up) throw new Error(`Prometheus did not scrape the server:\n${promLog.slice(-3000)}`);
}, 60_000);

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((r) => prometheus.once('exit', r));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await client?.close();
  await s?.stop();
  await site?.close();
  removeWorkspaces();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a real Prometheus scraping pactum', () => {
  it('sees the bytes of a git-lfs push, an MCP call and a scan’s pages move its counters by what happened', async () => {
    const uploaded = 'sum(pactum_object_uploaded_bytes_total{transfer="basic"}) or vector(0)';
    const verified = 'sum(pactum_object_uploads_total{outcome="verified"}) or vector(0)';
    const listCalls = 'sum(pactum_mcp_tool_calls_total{tool="dashboard_list_reports",outcome="ok"}) or vector(0)';
    const scanCalls = 'sum(pactum_mcp_tool_calls_total{tool="dashboard_scan_site",outcome="ok"}) or vector(0)';
    const pages = 'sum(pactum_scan_pages_total{engine="jsdom",outcome="checked"}) or vector(0)';
    const pageTimes = 'sum(pactum_scan_page_check_duration_seconds_count{engine="jsdom"}) or vector(0)';
    const batches = 'sum(pactum_http_requests_total{operation="batch.batch",status_class="2xx"}) or vector(0)';
    const before = Object.fromEntries(await Promise.all(Object.entries({ uploaded, verified, listCalls, scanCalls, pages, pageTimes, batches }).map(async ([k, e]) => [k, await query(e)] as const)));

    // A git-lfs push (basic transfers: whole objects in PUTs).
    const sizes = { 'a.bin': 3 * 1024 * 1024 + 7, 'b.bin': 54321, 'c.bin': 1 };
    const ws = await lfsWorkspace(s.url, 'writer', PASSWORD);
    const { src } = await sourceRepo(ws, `${s.url}/acme/site.git/info/lfs`, { 'lfs.basictransfersonly': 'true' });
    for (const [name, size] of Object.entries(sizes)) writeFileSync(join(src, name), randomBytes(size));
    await ws.mustGit(['add', '.'], src);
    await ws.mustGit(['commit', '-qm', 'objects'], src);
    await ws.mustGit(['push', '-q', 'origin', 'main'], src);
    const total = Object.values(sizes).reduce((a, b) => a + b, 0);

    // An MCP call, and a scan through MCP (its progress polled with another tool).
    ok(await client.callTool({ name: 'dashboard_list_reports', arguments: {} }));
    const scanId = ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'site', maxPages: 5 } })).scanId as string;
    let progress: { finished: boolean; pagesScanned: number } = { finished: false, pagesScanned: 0 };
    for (let i = 0; i < 1200 && !progress.finished; i++) {
      progress = ok(await client.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId } }));
      if (!progress.finished) await new Promise((r) => setTimeout(r, 100));
    }
    expect(progress.finished).toBe(true);
    const scanned = Number((await s.services.db('scans').where({ id: scanId }).first()).pages_scanned);
    expect(scanned).toBeGreaterThan(1);

    expect(await settle(uploaded, (v) => v >= before.uploaded! + total)).toBe(before.uploaded! + total);
    expect(await settle(verified, (v) => v >= before.verified! + 3)).toBe(before.verified! + 3);
    expect(await settle(listCalls, (v) => v > before.listCalls!)).toBe(before.listCalls! + 1);
    expect(await settle(scanCalls, (v) => v > before.scanCalls!)).toBe(before.scanCalls! + 1);
    expect(await settle(pages, (v) => v >= before.pages! + scanned)).toBe(before.pages! + scanned);
    expect(await settle(pageTimes, (v) => v >= before.pageTimes! + scanned)).toBe(before.pageTimes! + scanned);
    // git-lfs asks one batch for the push.
    expect(await settle(batches, (v) => v > before.batches!)).toBe(before.batches! + 1);
    // Runtime series arrive too.
    expect(await query('count(nodejs_eventloop_lag_seconds{job="pactum"})')).toBe(1);
    expect(await query('count(process_resident_memory_bytes{job="pactum"})')).toBe(1);
  }, 180_000);
});
