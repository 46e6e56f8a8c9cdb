/**
 * The report view model, the report page and the exports with the jsdom engine: no screenshots,
 * and rules jsdom cannot decide shown as not evaluated (never passed) in the view, SARIF and
 * JUnit. Run on PostgreSQL and S3 too (PACTUM_TEST_BACKEND=postgres-s3): screenshots' store and
 * the report's rows on both databases.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { JSDOM } from 'jsdom';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { insertOrg } from '../../src/db/users.js';
import { parseCsv } from '../helpers/csv.js';

let s: TestServer;
let site: FixtureSite;
let client: Client;
let token: string;
let scanId: string;

beforeAll(async () => {
  site = await startFixtureSite(0);
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' });
  const orgId = (await insertOrg(s.services.db, { name: 'Reports jsdom', slug: 'reports-jsdom' })).id;
  token = await s.token({ sub: 'svc_reports_jsdom', orgId, role: 'org_admin', perms: [] });
  client = await mcpClient(s.url, bearer(token));
  scanId = ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'site', maxPages: 20 } })).scanId;
  for (let i = 0; i < 2400; i++) {
    if (ok(await client.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId } })).finished) break;
    await new Promise((r) => setTimeout(r, 50));
  }
}, 120_000);
afterAll(async () => {
  await client?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${s.url}${path}`, { headers });

describe('reports of a jsdom scan', () => {
  it('lists what jsdom cannot evaluate, takes no screenshots, and puts the page that could not be checked first', async () => {
    const app = ok(await client.callTool({ name: 'dashboard_get_report', arguments: { scanId, view: 'app' } })).app;
    expect(app.engine).toBe('jsdom');
    expect(app.pages[0]).toMatchObject({ url: site.url('/x'), error: expect.stringMatching(/404/) });
    expect(app.summary.notEvaluated).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'color-contrast', reason: 'needs a browser' })]));
    for (const rule of app.rules) for (const issue of rule.issues) expect(issue.screenshot).toBeNull();
    expect(await s.services.db('scan_screenshots').where({ scan_id: scanId }).count({ n: '*' }).first()).toMatchObject({ n: expect.anything() });
    expect(Number((await s.services.db('scan_screenshots').where({ scan_id: scanId }).count({ n: '*' }).first())!.n)).toBe(0);
    expect(failure(await client.callTool({ name: 'dashboard_get_screenshot', arguments: { scanId, screenshotId: '0'.repeat(32) } })).error).toBe('not_found');
  });

  it('exports JUnit with the rules not evaluated skipped, SARIF with them listed, CSV with every issue', async () => {
    const junit = new JSDOM(await (await get(`/reports/${scanId}.junit.xml`, bearer(token))).text(), { contentType: 'application/xml' }).window.document;
    expect(junit.querySelector('parsererror')).toBeNull();
    const skipped = [...junit.querySelectorAll('testcase > skipped')];
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped.some((x) => /not evaluated: needs a browser/.test(x.getAttribute('message')!))).toBe(true);
    const sarif = (await (await get(`/reports/${scanId}.sarif`, bearer(token))).json()) as { runs: { properties: { engine: string; notEvaluated: { code: string }[] } }[] };
    expect(sarif.runs[0]!.properties.engine).toBe('jsdom');
    expect(sarif.runs[0]!.properties.notEvaluated.map((n) => n.code)).toContain('color-contrast');
    const rows = parseCsv(await (await get(`/reports/${scanId}.csv`, bearer(token))).text());
    const app = ok(await client.callTool({ name: 'dashboard_get_report', arguments: { scanId, view: 'app' } })).app;
    expect(rows.length - 1).toBe(app.summary.totalIssues + app.summary.pagesFailed);
  });

  it('refuses exports of an unfinished or unknown scan, and callers without reports.view', async () => {
    expect((await get(`/reports/scn_nope.csv`, bearer(token))).status).toBe(404);
    expect((await get(`/reports/${scanId}.csv`)).status).toBe(401);
    const noReports = bearer(await s.token({ sub: 'svc_noreports', orgId: (await s.services.db('scans').where({ id: scanId }).first()).org_id, perms: ['branding.view'] }));
    expect((await get(`/reports/${scanId}.sarif`, noReports)).status).toBe(403);
    const queued = ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'single' } })).scanId;
    const early = await get(`/reports/${queued}.sarif`, bearer(token));
    // Either still waiting (409) or already done: a single page can finish this fast.
    expect([200, 409]).toContain(early.status);
    await early.body?.cancel();
  });
});
