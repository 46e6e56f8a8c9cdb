/**
 * Scans through the MCP tools with the Chromium engine (SCAN_ENGINE=chromium, Debian's chromium):
 * contrast measured for real, the engine named in reports, one-sentence messages, the digest, and
 * a one-page scan. The same tools on jsdom: mcp-accessibility.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { requireChromium } from '../helpers/chromium.js';
import { insertOrg } from '../../src/db/users.js';

let s: TestServer;
let site: FixtureSite;
let client: Client;

beforeAll(async () => {
  site = await startFixtureSite(0);
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium', CHROMIUM_PATH: requireChromium() });
  const orgId = (await insertOrg(s.services.db, { name: 'Browser', slug: 'browser' })).id;
  client = await mcpClient(s.url, bearer(await s.token({ sub: 'svc_browser', orgId, role: 'org_admin', perms: [] })));
}, 60_000);
afterAll(async () => {
  await client?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });

describe('scans in Chromium', () => {
  let scanId: string;

  it("says once at start-up when Chromium runs without its sandbox because pactum is root, and never otherwise", () => {
    const said = s.logLines.filter((l) => l.includes('Chromium runs without its sandbox'));
    const root = process.getuid?.() === 0;
    expect(said).toHaveLength(root ? s.instances.length : 0); // one line per instance started
    for (const line of said) expect(JSON.parse(line)).toMatchObject({ level: 40, msg: expect.stringMatching(/runs as root.*exploits a browser bug.*non-root user/) });
  });

  it('scans the site, measures contrast, and ends completed_with_errors for the broken link', async () => {
    scanId = ok(await call('dashboard_scan_site', { siteUrl: site.url('/'), scanMode: 'site', maxPages: 20 })).scanId;
    let progress: Record<string, unknown> = {};
    for (let i = 0; i < 1200 && !progress.finished; i++) {
      progress = ok(await call('dashboard_get_scan_progress', { scanId }));
      if (!progress.finished) await new Promise((r) => setTimeout(r, 50));
    }
    expect(progress).toMatchObject({ status: 'completed_with_errors', pagesScanned: 7, finished: true });
    const r = ok(await call('dashboard_get_report', { scanId }));
    expect(r.report.engine).toBe('chromium');
    expect(r.report.summary.notEvaluated).toEqual([]);
    const contrast = r.report.pages.find((p: { url: string }) => p.url.includes('contrast.html'));
    const issues = contrast.issues.filter((i: { code: string }) => i.code === 'color-contrast');
    expect(issues.map((i: { type: string; selector: string }) => `${i.type}@${i.selector}`).sort()).toEqual(['error@.faint', 'error@p:nth-child(3)']);
    // One sentence: the rule, why, the element and its markup, and the help page.
    expect(issues[0].message).toMatch(/^Elements must meet minimum color contrast ratio thresholds: element has insufficient color contrast of [\d.]+ \(foreground color: #[0-9a-f]{6}, .*\); expected contrast ratio of 4\.5:1, at \S+ \(<p[^\n]*\); see https:\/\/dequeuniversity\.com\/rules\/axe\/4\.\d+\/color-contrast$/);
    // No contrast "needs review" pinned to a heading any more.
    for (const page of r.report.pages) for (const issue of page.issues) expect(`${issue.code}@${issue.selector}`).not.toBe('color-contrast@h1');
  }, 120_000);

  it('gives the digest, rules with counts and pages worst first', async () => {
    const d = ok(await call('dashboard_get_report', { scanId, view: 'digest', top: 2 })).digest;
    expect(d.engine).toBe('chromium');
    expect(d.rules).toHaveLength(2);
    expect(d.rules[0].issues).toBeGreaterThanOrEqual(d.rules[1].issues);
    expect(d.pages[0]).toMatchObject({ url: site.url('/x'), error: expect.stringMatching(/404/) });
    expect(d.pages[1].byLevel.error).toBeGreaterThanOrEqual(1);
  });

  it('scans one page with the browser', async () => {
    const page = ok(await call('dashboard_scan_page', { url: site.url('/contrast.html') }));
    expect(page).toMatchObject({ engine: 'chromium', notEvaluated: [] });
    expect(page.issues.filter((i: { code: string }) => i.code === 'color-contrast')).toHaveLength(2);
  }, 60_000);
});
