/**
 * Findings across scans as a review team uses them, with the jsdom engine, through the MCP SDK
 * Client: a site is scanned, a reviewer marks its findings (confirmed, false positive, accepted
 * until a date, a needs-review item passed), a release changes the site, and dashboard_verify_fixes
 * rescans only the pages with open findings and says of each finding whether it was fixed, is
 * still present or is new. The marks follow the findings into the later scans; an acceptance
 * past its expiry no longer holds; another org's scan and a caller without the permission are refused.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { page, startChangingSite, type ChangingSite } from '../helpers/changing-site.js';
import { insertOrg } from '../../src/db/users.js';
import { parseCsv } from '../helpers/csv.js';
import { pactum } from '../helpers/cli.js';

/** The release reviewed first: two images without alt text, an empty link, a vague link text (needs review), a form field without label. */
const RELEASE_1 = {
  '/': page('Home', '<img src="/a.png">\n<p>Intro</p>\n<img src="/b.png">\n<a href="/about"></a>\n<a href="/about">About</a>\n<a href="/clean">A clean page</a>\n<p><a href="/news">click here</a></p>'),
  '/about': page('About', '<form><input type="text" name="q"></form>'),
  '/clean': page('Clean', '<p>Nothing wrong here.</p>'),
  '/news': page('News', '<p>All the news.</p>'),
};
/**
 * The next release: /a.png got its alt text (fixed); /b.png moved down behind new paragraphs
 * (still present: reordering keeps a fingerprint); a button without a name arrived (new).
 */
const RELEASE_2 = {
  ...RELEASE_1,
  '/': page('Home', '<p>News first</p>\n<p>More news</p>\n<img src="/a.png" alt="Our shop">\n<p>Intro</p>\n<img src="/b.png">\n<a href="/about"></a>\n<a href="/about">About</a>\n<a href="/clean">A clean page</a>\n<p><a href="/news">click here</a></p>\n<button></button>'),
};

let s: TestServer;
let site: ChangingSite;
let admin: Client;
let member: Client;
let viewer: Client;
let stranger: Client;
let orgId: string;
let scan1: string;
let scan2: string;
let memberToken: string;

interface Finding { fingerprint: string; status: string; issue: { code: string; type: string; pageUrl: string; selector: string }; mark: Record<string, unknown> | null }

async function finished(client: Client, scanId: string) {
  for (let i = 0; i < 2400; i++) {
    const p = ok(await client.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId } }));
    if (p.finished) return p;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`scan ${scanId} did not finish`);
}

async function scanSite(): Promise<string> {
  const scanId = ok(await admin.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'site', maxPages: 10 } })).scanId as string;
  await finished(admin, scanId);
  return scanId;
}

async function findings(client: Client, scanId: string, args: Record<string, unknown> = {}): Promise<{ counts: Record<string, number>; findings: Finding[] }> {
  return ok(await client.callTool({ name: 'dashboard_list_findings', arguments: { scanId, limit: 100, ...args } }));
}

const one = (list: Finding[], code: string, selectorPart = '') => {
  const found = list.filter((f) => f.issue.code === code && f.issue.selector.includes(selectorPart));
  expect(found, `${code} ${selectorPart}`).toHaveLength(1);
  return found[0]!;
};

const daysAhead = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

beforeAll(async () => {
  site = await startChangingSite(RELEASE_1);
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' });
  orgId = (await insertOrg(s.services.db, { name: 'Review team', slug: 'review-team' })).id;
  const otherOrg = (await insertOrg(s.services.db, { name: 'Another team', slug: 'another-team' })).id;
  admin = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_lead', orgId, role: 'org_admin', perms: [] })));
  memberToken = await s.token({ sub: 'usr_reviewer', orgId, role: 'member', perms: [] });
  member = await mcpClient(s.url, bearer(memberToken));
  viewer = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_viewer', orgId, role: 'viewer', perms: [] })));
  stranger = await mcpClient(s.url, bearer(await s.token({ sub: 'usr_stranger', orgId: otherOrg, role: 'org_admin', perms: [] })));
  scan1 = await scanSite();
}, 120_000);
afterAll(async () => {
  for (const c of [admin, member, viewer, stranger]) await c?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

describe('reviewing findings', () => {
  it('lists every finding open at first, with the fingerprint the report shows', async () => {
    const list = await findings(member, scan1);
    expect(list.counts).toEqual({ open: 5, confirmed: 0, false_positive: 0, accepted: 0, review_passed: 0 });
    const report = ok(await member.callTool({ name: 'dashboard_get_report', arguments: { scanId: scan1 } }));
    const reported = report.report.pages.flatMap((p: { issues: { fingerprint: string }[] }) => p.issues.map((i) => i.fingerprint));
    expect(new Set(reported)).toEqual(new Set(list.findings.map((f) => f.fingerprint)));
    expect(one(list.findings, 'pactum-link-text').issue.type).toBe('warning');
  });

  it('takes marks with their reasons, and refuses a mark without one', async () => {
    const list = (await findings(member, scan1)).findings;
    const emptyLink = one(list, 'link-name');
    const refused = failure(await member.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: scan1, fingerprint: emptyLink.fingerprint, mark: 'false_positive' } }));
    expect(refused.error).toBe('invalid_arguments');
    expect(refused.message).toMatch(/reason/);
    const fp = ok(await member.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: scan1, fingerprint: emptyLink.fingerprint, mark: 'false_positive', reason: 'Skip link target, hidden from assistive technology' } }));
    expect(fp.finding).toMatchObject({ status: 'false_positive', mark: { mark: 'false_positive', reason: 'Skip link target, hidden from assistive technology', markedBy: 'usr_reviewer', expired: false } });

    const label = one(list, 'label');
    expect(failure(await member.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: scan1, fingerprint: label.fingerprint, mark: 'accepted', reason: 'Vendor search box' } })).error).toBe('invalid_arguments');
    expect(failure(await member.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: scan1, fingerprint: label.fingerprint, mark: 'accepted', reason: 'Vendor search box', expiresAt: daysAhead(-1) } })).message).toMatch(/not in the future/);
    const accepted = ok(await member.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: scan1, fingerprint: label.fingerprint, mark: 'accepted', reason: 'Vendor search box; replaced in the spring release', expiresAt: daysAhead(30) } }));
    expect(accepted.finding).toMatchObject({ status: 'accepted', mark: { mark: 'accepted', expired: false } });

    const second = one(list, 'image-alt', 'b.png');
    expect(ok(await member.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: scan1, fingerprint: second.fingerprint, mark: 'confirmed' } })).finding.status).toBe('confirmed');

    const vague = one(list, 'pactum-link-text');
    expect(failure(await member.callTool({ name: 'dashboard_review_finding', arguments: { scanId: scan1, fingerprint: second.fingerprint, outcome: 'pass', note: 'x' } })).error).toBe('invalid_arguments');
    const reviewed = ok(await member.callTool({ name: 'dashboard_review_finding', arguments: { scanId: scan1, fingerprint: vague.fingerprint, outcome: 'pass', note: 'The paragraph around it names the news page' } }));
    expect(reviewed.finding).toMatchObject({ status: 'review_passed', mark: { mark: null, review: { outcome: 'pass', note: 'The paragraph around it names the news page', reviewedBy: 'usr_reviewer' } } });

    expect((await findings(member, scan1)).counts).toEqual({ open: 1, confirmed: 1, false_positive: 1, accepted: 1, review_passed: 1 });
    expect((await findings(member, scan1, { status: 'open' })).findings.map((f) => f.issue.code)).toEqual(['image-alt']);
  });

  it('writes every mark to the audit trail, with who and why', async () => {
    const rows = await s.services.db('audit_log').whereIn('tool', ['dashboard_mark_finding', 'dashboard_review_finding']).orderBy('at');
    const okRows = rows.filter((r: { outcome: string }) => r.outcome === 'ok');
    expect(okRows).toHaveLength(4);
    expect(okRows.every((r: { subject: string; org_id: string }) => r.subject === 'usr_reviewer' && r.org_id === orgId)).toBe(true);
    expect(okRows.map((r: { arguments: string }) => JSON.parse(r.arguments).mark ?? JSON.parse(r.arguments).outcome)).toEqual(['false_positive', 'accepted', 'confirmed', 'pass']);
    expect(JSON.parse(okRows[0].arguments).reason).toBe('Skip link target, hidden from assistive technology');
    expect(rows.filter((r: { outcome: string }) => r.outcome === 'invalid_arguments').length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a viewer, and answers another org as if the scan or finding did not exist', async () => {
    const fingerprint = one((await findings(member, scan1)).findings, 'image-alt', 'a.png').fingerprint;
    const byViewer = failure(await viewer.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: scan1, fingerprint, mark: 'confirmed' } }));
    expect(byViewer.error).toBe('forbidden');
    expect(byViewer.message).toMatch(/issues\.fix/);
    expect(failure(await viewer.callTool({ name: 'dashboard_review_finding', arguments: { scanId: scan1, fingerprint, outcome: 'fail', note: 'x' } })).error).toBe('forbidden');
    expect((await findings(viewer, scan1)).counts.open).toBe(1);

    expect(failure(await stranger.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: scan1, fingerprint, mark: 'false_positive', reason: 'mine now' } })).error).toBe('not_found');
    expect(failure(await stranger.callTool({ name: 'dashboard_list_findings', arguments: { scanId: scan1 } })).error).toBe('not_found');
    expect(failure(await stranger.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: scan1 } })).error).toBe('not_found');
    const unknown = failure(await member.callTool({ name: 'dashboard_mark_finding', arguments: { scanId: scan1, fingerprint: '0'.repeat(32), mark: 'confirmed' } }));
    expect(unknown).toMatchObject({ error: 'not_found', message: expect.stringMatching(/no finding/) });
    // Nothing changed by the refusals.
    expect(one((await findings(member, scan1)).findings, 'image-alt', 'a.png').mark).toBeNull();
  });
});

describe('verifying fixes after a release', () => {
  let rescan: string;

  it('rescans only the pages with open findings, and says of each finding fixed, still present or new', async () => {
    site.pages = new Map(Object.entries(RELEASE_2));
    const seen = site.requested.length;
    const started = ok(await member.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: scan1 } }));
    // /about has only an accepted finding, /clean none: neither is rescanned.
    expect(started).toMatchObject({ baselineScanId: scan1, status: 'queued', finished: false, pages: [site.url('/')], summary: null, findings: [] });
    rescan = started.scanId;
    await finished(member, rescan);
    expect(site.requested.slice(seen)).toEqual(['/']);

    const verified = ok(await member.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: scan1, againstScanId: rescan } }));
    expect(verified).toMatchObject({ scanId: rescan, finished: true, pages: [site.url('/')], pagesFailed: [] });
    const verdicts = Object.fromEntries(verified.findings.map((f: { verdict: string; issue: { code: string; selector: string } }) => [`${f.issue.code} ${f.issue.selector}`, f.verdict]));
    expect(verdicts).toEqual({ 'image-alt img[src="/a.png"]': 'fixed', 'image-alt img[src="/b.png"]': 'still_present', 'button-name button': 'new' });
    expect(verified.summary).toEqual({ fixed: 1, still_present: 1, new: 1, newByLevel: { error: 1, warning: 0, notice: 0 } });
    // The confirmed mark travelled with the finding that is still there.
    expect(verified.findings.find((f: { verdict: string }) => f.verdict === 'still_present').mark).toMatchObject({ mark: 'confirmed' });
  });

  it('carries the marks into the rescan, and into a full scan of the new release', async () => {
    scan2 = await scanSite();
    const list = await findings(member, scan2);
    expect(one(list.findings, 'link-name').status).toBe('false_positive');
    expect(one(list.findings, 'label').status).toBe('accepted');
    expect(one(list.findings, 'pactum-link-text').status).toBe('review_passed');
    expect(one(list.findings, 'image-alt', 'b.png').status).toBe('confirmed');
    expect(one(list.findings, 'button-name').status).toBe('open');
    expect(list.findings.some((f) => f.issue.code === 'image-alt' && f.issue.selector.includes('a.png'))).toBe(false);
    expect(one((await findings(member, rescan)).findings, 'image-alt', 'b.png').status).toBe('confirmed');
  });

  it('leaves the false positive and the passed review out of the next scan\'s exports unless asked, and shows each mark', async () => {
    interface Result { ruleId: string; partialFingerprints: Record<string, string>; properties: { findingStatus: string; mark?: { reason: string | null } }; suppressions?: { kind: string; status: string; justification: string }[] }
    const sarif = async (query = '') => ((await (await fetch(`${s.url}/reports/${scan2}.sarif${query}`, { headers: bearer(memberToken) })).json()) as { runs: { results: Result[] }[] }).runs[0]!.results;
    const list = (await findings(member, scan2)).findings;
    const results = await sarif();
    expect(results.map((r) => r.ruleId).sort()).toEqual(['button-name', 'image-alt', 'label']);
    const byPrint = (rs: Result[], code: string) => rs.find((r) => r.partialFingerprints['pactumFinding/v1'] === one(list, code).fingerprint)!;
    expect(byPrint(results, 'label')).toMatchObject({ properties: { findingStatus: 'accepted' }, suppressions: [{ kind: 'external', status: 'accepted', justification: expect.stringMatching(/Vendor search box/) }] });
    expect(byPrint(results, 'image-alt').properties.findingStatus).toBe('confirmed');
    expect(byPrint(results, 'button-name').suppressions).toBeUndefined();

    const everything = await sarif('?includeFalsePositives=true');
    expect(everything.map((r) => r.ruleId).sort()).toEqual(['button-name', 'image-alt', 'label', 'link-name', 'pactum-link-text']);
    expect(byPrint(everything, 'link-name')).toMatchObject({ properties: { findingStatus: 'false_positive' }, suppressions: [{ justification: 'False positive: Skip link target, hidden from assistive technology' }] });

    const csv = parseCsv(await (await fetch(`${s.url}/reports/${scan2}.csv`, { headers: bearer(memberToken) })).text());
    const column = (name: string) => csv[0]!.indexOf(name);
    const rows = csv.slice(1);
    expect(rows.map((row) => `${row[column('rule')]} ${row[column('status')]}`).sort()).toEqual(['button-name open', 'image-alt confirmed', 'label accepted']);
    expect(csv.slice(1).find((row) => row[column('rule')] === 'label')![column('mark_note')]).toBe('Vendor search box; replaced in the spring release');

    const app = ok(await member.callTool({ name: 'dashboard_get_report', arguments: { scanId: scan2, view: 'app' } })).app;
    const shown = app.rules.flatMap((r: { code: string; issues: { finding: { status: string } }[] }) => r.issues.map((i) => `${r.code} ${i.finding.status}`)).sort();
    expect(shown).toEqual(['button-name open', 'image-alt confirmed', 'label accepted', 'link-name false_positive', 'pactum-link-text review_passed']);
    const pageHtml = await (await fetch(`${s.url}/reports/${scan2}`, { headers: bearer(memberToken) })).text();
    expect(pageHtml).toContain('Skip link target, hidden from assistive technology');
  });

  it('brings an accepted finding back once its acceptance has expired, and rescans its page again', async () => {
    const label = one((await findings(member, scan1)).findings, 'label');
    // Time passes: the acceptance's date is now behind us.
    await s.services.db('finding_marks').where({ org_id: orgId, fingerprint: label.fingerprint }).update({ expires_at: daysAhead(-1) });
    const back = one((await findings(member, scan1)).findings, 'label');
    expect(back).toMatchObject({ status: 'open', mark: { mark: 'accepted', expired: true } });
    const started = ok(await member.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: scan1 } }));
    expect(started.pages).toEqual([site.url('/'), site.url('/about')]);
    await finished(member, started.scanId);
    const verified = ok(await member.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: scan1, againstScanId: started.scanId } }));
    expect(verified.findings.find((f: { issue: { code: string } }) => f.issue.code === 'label').verdict).toBe('still_present');
  });

  it('rescans the pages it is given, and refuses pages of another site', async () => {
    const started = ok(await member.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: scan1, pages: [site.url('/clean')] } }));
    expect(started.pages).toEqual([site.url('/clean')]);
    await finished(member, started.scanId);
    const verified = ok(await member.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: scan1, againstScanId: started.scanId } }));
    expect(verified.summary).toMatchObject({ fixed: 0, still_present: 0, new: 0 });
    const elsewhere = failure(await member.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: scan1, pages: ['https://example.com/'] } }));
    expect(elsewhere.error).toBe('invalid_arguments');
    expect(failure(await viewer.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: scan1 } })).error).toBe('forbidden');
  });
});

describe('pactum scan --baseline in a CI job', () => {
  const run = (...args: string[]) => pactum(['scan', site.url('/'), '--mode', 'site', '--max-pages', '10', ...args], { PACTUM_SERVER: s.url, PACTUM_TOKEN: memberToken });

  it('fails on the new finding only, and passes once it is fixed though known findings remain', async () => {
    const regressed = await run('--baseline', scan1, '--fail-on', 'error');
    expect(regressed.stdout).toMatch(/compared with baseline scn_\w+: 1 fixed, 2 still present, 1 new/);
    expect(regressed.stdout).toMatch(/new error {3}button-name at button on http:\/\/127\.0\.0\.1:\d+\//);
    expect(regressed.stderr).toMatch(/failing: 1 new issue at or above error \(not in baseline scn_\w+\)/);
    expect(regressed.code).toBe(1);

    // The next commit removes the nameless button; the image without alt text is still there.
    site.pages.set('/', RELEASE_2['/'].replace('\n<button></button>', ''));
    const fixed = await run('--baseline', scan1, '--fail-on', 'error');
    expect(fixed.stdout).toMatch(/1 fixed, 2 still present, 0 new/);
    expect(fixed.code).toBe(0);
    // Without a baseline the known debt fails the job, as before.
    const plain = await run('--fail-on', 'error');
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/failing: \d+ issues at or above error/);
  }, 120_000);

  it('says what is wrong with a baseline it cannot use', async () => {
    const bad = await run('--baseline', 'not a scan id');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--baseline is the id of an earlier scan/);
    const missing = await run('--baseline', 'scn_doesnotexist');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/dashboard_verify_fixes: No scan scn_doesnotexist in this organization/);
  }, 120_000);
});
