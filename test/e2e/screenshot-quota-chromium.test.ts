/**
 * An org over its screenshot quota still scans: a real Chromium scan of the fixture site with a
 * quota that holds only a few images keeps within it, completes, and its report says how many
 * screenshots were not kept and why (the digest, the pages view, the report page); the images it
 * kept are served, the issues whose images were not kept name none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { requireChromium } from '../helpers/chromium.js';
import { insertOrg } from '../../src/db/users.js';

/** Room for a few of the fixture site's element screenshots (each a few kB of WebP), not for all. */
const QUOTA = 12_000;

let s: TestServer;
let site: FixtureSite;
let client: Client;
let token: string;
let orgId: string;
let scanId: string;

beforeAll(async () => {
  site = await startFixtureSite(0);
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium', CHROMIUM_PATH: requireChromium(), SCREENSHOTS_PER_PAGE: '5', SCREENSHOTS_PER_RULE: '0', SCREENSHOTS_BYTES_PER_ORG: String(QUOTA) });
  orgId = (await insertOrg(s.services.db, { name: 'Quota', slug: 'quota' })).id;
  token = await s.token({ sub: 'svc_quota', orgId, role: 'org_admin', perms: [] });
  client = await mcpClient(s.url, bearer(token));
  scanId = ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'site', maxPages: 20 } })).scanId;
  for (let i = 0; i < 2400; i++) {
    if (ok(await client.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId } })).finished) break;
    await new Promise((r) => setTimeout(r, 50));
  }
}, 180_000);
afterAll(async () => {
  await client?.close();
  await s?.stop();
  await site?.close();
});

describe('a scan past its org\'s screenshot quota', () => {
  it('completes, keeps within the quota, and says in its summary how many screenshots it skipped and why', async () => {
    const report = ok(await client.callTool({ name: 'dashboard_get_report', arguments: { scanId, view: 'digest' } }));
    expect(report.status).toMatch(/^completed/);
    const skipped = report.digest.summary.screenshotsSkipped as { count: number; reason: string };
    expect(skipped.count).toBeGreaterThan(0);
    expect(skipped.reason).toMatch(/SCREENSHOTS_BYTES_PER_ORG/);
    const used = Number((await s.services.db('scan_screenshots').where({ org_id: orgId }).sum({ n: 'bytes' }).first<{ n: number | string | null }>())?.n ?? 0);
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThanOrEqual(QUOTA);
  });

  it('names only kept images on its issues, and serves each', async () => {
    const report = ok(await client.callTool({ name: 'dashboard_get_report', arguments: { scanId, view: 'pages' } }));
    const ids = (report.report.pages as { issues: { screenshot?: string }[] }[]).flatMap((p) => p.issues.map((i) => i.screenshot).filter((id): id is string => Boolean(id)));
    const kept = (await s.services.db('scan_screenshots').where({ scan_id: scanId }).select('id')).map((r: { id: string }) => r.id);
    expect(new Set(ids)).toEqual(new Set(kept));
    for (const id of kept) {
      const res = await fetch(`${s.url}/reports/${scanId}/screenshots/${id}`, { headers: bearer(token) });
      expect(res.status).toBe(200);
      await res.body?.cancel();
    }
  });

  it('shows why on the report page', async () => {
    const res = await fetch(`${s.url}/reports/${scanId}`, { headers: { ...bearer(token), accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/SCREENSHOTS_BYTES_PER_ORG/);
  });
});
