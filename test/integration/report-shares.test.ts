/**
 * A report shared by link (dashboard_share_report): anyone with the link reads that report's
 * page, read-only, without signing in, and its screenshots, never another report's; a link that
 * is altered is 404, one that has expired or was revoked 410; the tools keep to the caller's
 * organization, need scans.create, and bound how long and how many.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedLargeReport, type LargeReport } from '../helpers/large-report.js';
import { insertOrg } from '../../src/db/users.js';
import { shareLinksFor } from '../../src/reports/shares.js';
import type { ElementShot } from '../../src/domain/scan/types.js';

const shot: ElementShot = { issues: [0], mime: 'image/png', width: 10, height: 10, bytes: Buffer.alloc(100, 7) };

describe('report links', () => {
  let s: TestServer;
  let report: LargeReport;
  let other: LargeReport;
  let foreign: LargeReport;
  let member: string;
  let viewer: string;
  let outsider: string;
  let shotId: string;
  let otherShotId: string;

  async function tool(token: string, name: string, args: Record<string, unknown>) {
    const res = await fetch(`${s.url}/api/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    const body = (await res.json()) as { result: { isError?: boolean; structuredContent?: Record<string, string>; content: { text: string }[] } };
    if (body.result.isError) return { error: JSON.parse(body.result.content[0]!.text) as { error: string; message: string } };
    return { ok: body.result.structuredContent! };
  }
  const share = async (args: Record<string, unknown> = {}, token = member) => {
    const made = await tool(token, 'dashboard_share_report', { scanId: report.scanId, ...args });
    if (!made.ok) throw new Error(JSON.stringify(made.error));
    return made.ok;
  };
  const open = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers: { accept: 'text/html', ...headers } });
  const pageData = (html: string) => JSON.parse(/<script type="application\/json" id="pactum-data">(.*?)<\/script>/s.exec(html)![1]!) as { view: { scanId: string } | null; canShare?: boolean; shared?: { expiresAt: string }; screenshotBase?: string };

  beforeAll(async () => {
    s = await startTestServer({ REPORT_SHARES_PER_SCAN: '3', REPORT_SHARE_MAX_DAYS: '2' });
    const org = await insertOrg(s.services.db, { name: 'Acme', slug: 'acme-share' });
    const elsewhere = await insertOrg(s.services.db, { name: 'Other', slug: 'other-share' });
    member = await s.token({ sub: 'usr_member_share', orgId: org.id, role: 'member' });
    viewer = await s.token({ sub: 'usr_viewer_share', orgId: org.id, role: 'viewer' });
    outsider = await s.token({ sub: 'usr_outsider_share', orgId: elsewhere.id, role: 'member' });
    report = await seedLargeReport(s.services.db, org.id, { pages: 3, issuesPerPage: 4 });
    other = await seedLargeReport(s.services.db, org.id, { pages: 2, issuesPerPage: 2 });
    foreign = await seedLargeReport(s.services.db, elsewhere.id, { pages: 1, issuesPerPage: 1 });
    shotId = ((await s.services.screenshots.put(org.id, report.scanId, shot)) as { id: string }).id;
    otherShotId = ((await s.services.screenshots.put(org.id, other.scanId, shot)) as { id: string }).id;
  });
  afterAll(async () => {
    s.expectConformant();
    await s?.stop();
  });

  it('opens the report, read-only, without signing in, with its screenshots under the link', async () => {
    const link = await share({ expiresInHours: 24 });
    expect(link.url).toMatch(new RegExp(`^${s.url}/shared/shr_[0-9a-z]{26}\\.\\d+\\.[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(link.expiresAt!) - Date.parse(link.createdAt!)).toBeGreaterThan(23.9 * 3600_000);
    const res = await open(link.url!);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-robots-tag')).toMatch(/noindex/);
    const data = pageData(await res.text());
    expect(data.view?.scanId).toBe(report.scanId);
    expect(data.shared?.expiresAt).toBe(link.expiresAt);
    expect(data.canShare).toBeUndefined();
    const token = link.url!.split('/shared/')[1]!;
    expect(data.screenshotBase).toBe(`${token}/screenshots/`);
    const image = await fetch(new URL(`${data.screenshotBase}${shotId}`, link.url).href);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(image.headers.get('cache-control')).toBe('private, no-store');
  });

  it('never shows another report: another scan\'s screenshot is 404, and the link names one scan only', async () => {
    const link = await share();
    const token = link.url!.split('/shared/')[1]!;
    expect((await fetch(`${s.url}/shared/${token}/screenshots/${otherShotId}`)).status).toBe(404);
    // The report page of another scan still asks to sign in.
    expect((await open(`${s.url}/reports/${other.scanId}`)).status).toBe(401);
    // The shareId of one link with another's signature or expiry is no link.
    const [id, exp, tag] = token.split('.');
    const forged = [`${id}.${Number(exp) + 3600}.${tag}`, `${id}.${exp}.${tag!.slice(0, -2)}AA`, `shr_${'0'.repeat(26)}.${exp}.${tag}`];
    for (const f of forged) {
      const res = await open(`${s.url}/shared/${f}`);
      expect(res.status, f).toBe(404);
      expect(await res.text()).toMatch(/not one this server made/);
    }
  });

  it('is refused, 410, once revoked; revoking again revokes nothing', async () => {
    const link = await share();
    expect((await open(link.url!)).status).toBe(200);
    expect(await tool(member, 'dashboard_revoke_report_share', { scanId: report.scanId, shareId: link.shareId })).toEqual({ ok: { scanId: report.scanId, revoked: 1 } });
    const gone = await open(link.url!);
    expect(gone.status).toBe(410);
    expect(await gone.text()).toMatch(/was revoked/);
    const token = link.url!.split('/shared/')[1]!;
    expect((await fetch(`${s.url}/shared/${token}/screenshots/${shotId}`)).status).toBe(410);
    expect(await tool(member, 'dashboard_revoke_report_share', { scanId: report.scanId, shareId: link.shareId })).toEqual({ ok: { scanId: report.scanId, revoked: 0 } });
  });

  it('is refused, 410, once expired (its expiry is signed into the link)', async () => {
    const link = await share();
    // The same link, signed by the server with an expiry a second ago: as it will be once its time is up.
    const past = shareLinksFor(s.services.config).token(link.shareId!, new Date(Date.now() - 1000));
    const res = await open(`${s.url}/shared/${past}`);
    expect(res.status).toBe(410);
    expect(await res.text()).toMatch(/expired on \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
  });

  it('bounds how long a link works and how many live links a report has, naming the settings', async () => {
    const long = await tool(member, 'dashboard_share_report', { scanId: other.scanId, expiresInHours: 49 });
    expect(long.error).toMatchObject({ error: 'invalid_arguments', message: expect.stringContaining('REPORT_SHARE_MAX_DAYS=2') });
    for (let i = 0; i < 3; i++) expect((await tool(member, 'dashboard_share_report', { scanId: other.scanId })).ok).toBeDefined();
    const full = await tool(member, 'dashboard_share_report', { scanId: other.scanId });
    expect(full.error).toMatchObject({ error: 'rate_limited', message: expect.stringContaining('REPORT_SHARES_PER_SCAN=3') });
    // Revoking every link of the report makes room again.
    expect((await tool(member, 'dashboard_revoke_report_share', { scanId: other.scanId })).ok).toEqual({ scanId: other.scanId, revoked: 3 });
    expect((await tool(member, 'dashboard_share_report', { scanId: other.scanId })).ok).toBeDefined();
  });

  it('keeps to the caller\'s organization and to callers who may publish (scans.create)', async () => {
    expect((await tool(outsider, 'dashboard_share_report', { scanId: report.scanId })).error).toMatchObject({ error: 'not_found' });
    expect((await tool(outsider, 'dashboard_revoke_report_share', { scanId: report.scanId })).error).toMatchObject({ error: 'not_found' });
    expect((await tool(viewer, 'dashboard_share_report', { scanId: report.scanId })).error).toMatchObject({ error: 'forbidden' });
    expect((await tool(member, 'dashboard_share_report', { scanId: foreign.scanId })).error).toMatchObject({ error: 'not_found' });
  });

  it('the signed-in report page offers sharing to a member, not to a viewer', async () => {
    const asMember = pageData(await (await open(`${s.url}/reports/${report.scanId}`, { authorization: `Bearer ${member}` })).text());
    expect(asMember.canShare).toBe(true);
    const asViewer = pageData(await (await open(`${s.url}/reports/${report.scanId}`, { authorization: `Bearer ${viewer}` })).text());
    expect(asViewer.canShare).toBe(false);
  });
});
