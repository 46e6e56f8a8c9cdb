/**
 * The ACR on a server without Chromium (SCAN_ENGINE=jsdom): what jsdom cannot decide ("needs a
 * browser") is Not Evaluated, never Supports; the HTML is served, and the PDF, which needs
 * Chromium, is refused with 501 naming the setting, before any work.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { insertOrg } from '../../src/db/users.js';

let s: TestServer;
let site: FixtureSite;
let client: Client;
let token: string;
let scanId: string;

beforeAll(async () => {
  site = await startFixtureSite(0);
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' });
  const orgId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  token = await s.token({ sub: 'usr_reader', orgId, role: 'org_admin', perms: [] });
  client = await mcpClient(s.url, bearer(token));
  scanId = ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'site', maxPages: 20 } })).scanId;
  for (let i = 0; i < 1200; i++) {
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

describe('the ACR without Chromium', () => {
  it('says Not Evaluated for what jsdom could not decide, and names no Chromium version', async () => {
    const { acr } = ok(await client.callTool({ name: 'dashboard_get_acr', arguments: { scanId } }));
    expect(acr.producedBy).toMatchObject({ engine: 'jsdom', chromium: null });
    const report = ok(await client.callTool({ name: 'dashboard_get_report', arguments: { scanId } })).report;
    const needsBrowser = new Set<string>(report.pages.flatMap((p: { notEvaluated: { wcagCriteria: string[] }[] }) => p.notEvaluated.flatMap((n) => n.wcagCriteria)));
    expect(needsBrowser.has('1.4.3')).toBe(true);
    const rows = [...acr.wcag.levelA, ...acr.wcag.levelAA] as { criterion: string; conformance: string }[];
    for (const r of rows.filter((x) => needsBrowser.has(x.criterion))) expect(['Not Evaluated', 'Partially Supports', 'Does Not Support'], r.criterion).toContain(r.conformance);
    expect(rows.find((r) => r.criterion === '1.4.3')!.conformance).toBe('Not Evaluated');
  });

  it('serves the HTML and refuses the PDF with 501', async () => {
    const html = await fetch(`${s.url}/reports/${scanId}/acr`, { headers: bearer(token) });
    expect(html.status).toBe(200);
    expect(await html.text()).toContain('engine jsdom');
    const pdf = await fetch(`${s.url}/reports/${scanId}/acr?format=pdf`, { headers: bearer(token) });
    expect(pdf.status).toBe(501);
    expect(await pdf.json()).toMatchObject({ statusCode: 501, message: expect.stringMatching(/needs Chromium.*SCAN_ENGINE=jsdom.*format=html/) });
    const page = await fetch(`${s.url}/reports/${scanId}/acr?format=pdf`, { headers: { ...bearer(token), accept: 'text/html' } });
    expect(page.status).toBe(501);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    await page.body?.cancel();
  });
});
