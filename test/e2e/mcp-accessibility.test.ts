/**
 * The accessibility tools end to end, through the MCP SDK client, against a fixture website on
 * loopback: a real scan with live progress and ETA, the report with the exact findings per page,
 * queries, a one-page scan, brand scores, regulations and proposals, fix drafts (engine, llm
 * service, fallback), fleet tools and coordinated PRs, org scoping, and scans surviving a restart.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { backendEnv } from '../helpers/backends.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { insertOrg } from '../../src/db/users.js';
import { upsertProposal } from '../../src/db/proposals.js';

let s: TestServer;
let site: FixtureSite;
let acme: Client;
let globex: Client;
let acmeId: string;

beforeAll(async () => {
  site = await startFixtureSite(150);
  // The jsdom engine, so these findings are the same on machines without Chromium (the browser engine: mcp-scans-chromium.test.ts).
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' });
  acmeId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  const globexId = (await insertOrg(s.services.db, { name: 'Globex', slug: 'globex' })).id;
  acme = await mcpClient(s.url, bearer(await s.token({ sub: 'svc_acme_admin', orgId: acmeId, role: 'org_admin', perms: [] })));
  globex = await mcpClient(s.url, bearer(await s.token({ sub: 'svc_globex_admin', orgId: globexId, role: 'org_admin', perms: [] })));
});
afterAll(async () => {
  await acme?.close();
  await globex?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });
const PURPOSE = 'warning:pactum-link-purpose:2.4.4';

async function waitFor(client: Client, scanId: string, each?: (p: Record<string, unknown>) => void) {
  for (let i = 0; i < 600; i++) {
    const p = ok(await call(client, 'dashboard_get_scan_progress', { scanId }));
    each?.(p);
    if (p.finished) return p;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`scan ${scanId} did not finish`);
}

describe('scans', () => {
  let scanId: string;

  it('scans a site off the request path, with progress that rises page by page and a measured ETA', async () => {
    ok(await call(acme, 'dashboard_set_brand_guideline', {
      colors: [{ name: 'Faint', value: '#bbbbbb' }, { name: 'Ink', value: '#000000', role: 'text' }],
      fonts: [{ family: 'Inter', role: 'body' }],
      componentTokens: [{ name: 'faint', kind: 'class' }],
    }));
    const scan = ok(await call(acme, 'dashboard_scan_site', { siteUrl: site.url('/'), scanMode: 'site', maxPages: 20 }));
    expect(scan).toMatchObject({ siteUrl: site.url('/'), standard: 'WCAG2AA', scanMode: 'site', maxPages: 20, orgId: acmeId });
    expect(['queued', 'running']).toContain(scan.status);
    scanId = scan.scanId;
    const seen: Record<string, unknown>[] = [];
    const done = await waitFor(acme, scanId, (p) => seen.push(p));
    // /x is a broken link: a page that could not be checked, so the scan says so.
    expect(done).toMatchObject({ status: 'completed_with_errors', finished: true, pagesScanned: 7, totalPages: 7, etaSeconds: null, error: null });
    const counts = seen.map((p) => p.pagesScanned as number);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1]!);
    const running = seen.filter((p) => p.status === 'running');
    expect(running.length).toBeGreaterThan(0);
    const midway = running.filter((p) => (p.pagesScanned as number) > 0 && (p.pagesScanned as number) < 7);
    expect(midway.length).toBeGreaterThan(0);
    for (const p of midway) expect(p.etaSeconds).toEqual(expect.any(Number));
    for (const p of seen) expect(p.finished).toBe(p.status === 'completed' || p.status === 'completed_with_errors' || p.status === 'failed');
    expect(new Set(counts).size).toBeGreaterThanOrEqual(4); // it really moved page by page
  });

  it('reports the exact findings per page, read fresh', async () => {
    const r = ok(await call(acme, 'dashboard_get_report', { scanId }));
    expect(r.status).toBe('completed_with_errors');
    expect(r.report.engine).toBe('jsdom');
    const byPath = Object.fromEntries(
      r.report.pages.map((p: { url: string; error?: string; issues: { type: string; code: string; wcagCriterion: string }[] }) => [
        new URL(p.url).pathname + new URL(p.url).search,
        p.error ? 'failed' : p.issues.map((i) => `${i.type}:${i.code}:${i.wcagCriterion}`).sort().join(' '),
      ]),
    );
    expect(byPath).toEqual({
      '/': 'error:image-alt:1.1.1',
      '/clean.html': '',
      '/form.html': 'error:label:4.1.2 error:select-name:4.1.2',
      '/links.html': `error:link-name:2.4.4 ${PURPOSE} ${PURPOSE}`,
      '/nolang.html': 'error:html-has-lang:3.1.1',
      '/contrast.html?theme=light': '',
      '/x': 'failed',
    });
    expect(r.report.summary).toMatchObject({ pagesScanned: 7, pagesFailed: 1, totalIssues: 7, byLevel: { error: 5, warning: 2, notice: 0 } });
    // Contrast cannot be measured without a browser: not evaluated on each of the 6 pages checked, never passed.
    expect(r.report.summary.notEvaluated).toContainEqual({ code: 'color-contrast', wcagCriteria: ['1.4.3'], reason: 'needs a browser', pages: 6 });
    expect(r.report.pages.find((p: { url: string }) => p.url === site.url('/')).notEvaluated).toContainEqual(expect.objectContaining({ code: 'color-contrast', reason: 'needs a browser' }));
    const list = ok(await call(acme, 'dashboard_list_reports', { status: 'completed_with_errors' }));
    expect(list.reports.map((x: { scanId: string }) => x.scanId)).toContain(scanId);
  });

  it('gives a digest: issues grouped by rule with counts, pages worst first', async () => {
    const d = ok(await call(acme, 'dashboard_get_report', { scanId, view: 'digest', top: 3 }));
    expect(d.report).toBeUndefined();
    expect(d.digest.rules[0]).toMatchObject({ code: 'pactum-link-purpose', type: 'warning', issues: 2, pages: 1, wcagCriteria: ['2.4.4'] });
    expect(d.digest.rulesTotal).toBe(6);
    expect(d.digest.pages.map((p: { url: string }) => p.url)).toEqual([site.url('/x'), site.url('/form.html'), site.url('/links.html')]);
    expect(d.digest.pages[0].error).toMatch(/404/);
    expect(d.digest.pages[1]).toMatchObject({ issueCount: 2, byLevel: { error: 2, warning: 0, notice: 0 } });
    expect(d.digest).toMatchObject({ pagesTotal: 7, engine: 'jsdom', summary: { pagesScanned: 7 } });
  });

  it('queries issues by criterion, type and page, page by page', async () => {
    const alt = ok(await call(acme, 'dashboard_query_issues', { scanId, criterion: '1.1.1' }));
    expect(alt).toMatchObject({ total: 1, issues: [{ code: 'image-alt', pageUrl: site.url('/') }] });
    const errors = ok(await call(acme, 'dashboard_query_issues', { scanId, type: 'error', limit: 4 }));
    expect(errors.total).toBe(5);
    expect(errors.issues).toHaveLength(4);
    const rest = ok(await call(acme, 'dashboard_query_issues', { scanId, type: 'error', limit: 4, cursor: errors.nextCursor }));
    expect(rest.issues).toHaveLength(1);
    expect(rest.nextCursor).toBeNull();
    expect(ok(await call(acme, 'dashboard_query_issues', { scanId, page: site.url('/form.html'), type: 'error' })).total).toBe(2);
  });

  it('scans one page synchronously, with progress', async () => {
    const progress: number[] = [];
    const r = await acme.callTool({ name: 'dashboard_scan_page', arguments: { url: site.url('/form.html') } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    const page = ok(r);
    expect(page.issues.map((i: { code: string }) => i.code).sort()).toEqual(['label', 'select-name']);
    expect(page.byLevel).toEqual({ error: 2, warning: 0, notice: 0 });
    expect(page.engine).toBe('jsdom');
    expect(page.notEvaluated.map((n: { code: string }) => n.code)).toContain('color-contrast');
    expect(progress).toEqual([0, 1, 2]);
  });

  it('keeps scans within their org, and refuses private addresses unless allowed', async () => {
    expect(failure(await call(globex, 'dashboard_get_scan_progress', { scanId })).error).toBe('not_found');
    expect(failure(await call(globex, 'dashboard_get_report', { scanId })).error).toBe('not_found');
    expect(failure(await call(acme, 'dashboard_get_scan_progress', { scanId: 'scn_missing' })).error).toBe('not_found');
    const strict = await startTestServer();
    const orgId = (await insertOrg(strict.services.db, { name: 'S', slug: 's' })).id;
    const c = await mcpClient(strict.url, bearer(await strict.token({ orgId, role: 'member', perms: [] })));
    const refused = failure(await call(c, 'dashboard_scan_site', { siteUrl: site.url('/') }));
    expect(refused.error).toBe('invalid_arguments');
    expect(refused.message).toMatch(/loopback|private/);
    expect(refused.message).toContain('SCAN_ALLOW_PRIVATE_NETWORKS=true');
    const literal = failure(await call(c, 'dashboard_scan_page', { url: 'http://10.0.0.1/' })).message;
    expect(literal).toMatch(/private network/);
    expect(literal).toContain('SCAN_ALLOW_PRIVATE_NETWORKS=true');
    await c.close();
    strict.expectConformant();
    await strict.stop();
  });
});

describe('brand scores', () => {
  it('scores a completed scan against the guideline, by scan or by site, and lists scores', async () => {
    const scans = ok(await call(acme, 'dashboard_list_reports', { status: 'completed_with_errors' }));
    const scanId = scans.reports[0].scanId;
    const byScan = ok(await call(acme, 'dashboard_get_brand_score', { scanId }));
    expect(byScan).toMatchObject({ kind: 'scored', scanId, siteUrl: site.url('/') });
    expect(byScan.overall).toBeGreaterThanOrEqual(0);
    expect(byScan.overall).toBeLessThanOrEqual(100);
    expect(byScan.color).toEqual(expect.any(Number)); // #bbbbbb and black appear on the pages
    expect(ok(await call(acme, 'dashboard_get_brand_score', { siteUrl: site.url('/') }))).toEqual(byScan);
    expect(ok(await call(acme, 'dashboard_list_brand_scores', {})).scores[0]).toEqual(byScan);
    expect(failure(await call(acme, 'dashboard_get_brand_score', { scanId, siteUrl: site.url('/') })).error).toBe('invalid_arguments');
    expect(failure(await call(acme, 'dashboard_get_brand_score', {})).error).toBe('invalid_arguments');
    expect(failure(await call(globex, 'dashboard_get_brand_score', { scanId })).error).toBe('not_found');
  });

  it('marks a scan of an org without a guideline as unscorable: no-guideline', async () => {
    const scan = ok(await call(globex, 'dashboard_scan_site', { siteUrl: site.url('/clean.html'), scanMode: 'single' }));
    await waitFor(globex, scan.scanId);
    expect(ok(await call(globex, 'dashboard_get_brand_score', { scanId: scan.scanId }))).toMatchObject({ kind: 'unscorable', reason: 'no-guideline' });
    expect(failure(await call(globex, 'dashboard_get_brand_guideline')).error).toBe('not_found');
    expect(ok(await call(acme, 'dashboard_get_brand_guideline')).colors).toHaveLength(2);
  });
});

describe('regulations and proposals', () => {
  it('lists jurisdictions and regulations with filters, and reads one by its case-sensitive id', async () => {
    const eu = ok(await call(acme, 'dashboard_list_jurisdictions', { parentId: 'EU' })).jurisdictions;
    expect(eu.map((j: { id: string }) => j.id)).toEqual(expect.arrayContaining(['DE', 'FR']));
    const euRegs = ok(await call(acme, 'dashboard_list_regulations', { jurisdiction: 'EU', limit: 500 }));
    expect(euRegs.source).toBe('embedded');
    expect(euRegs.regulations.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining(['EU-EAA', 'EU-WAD', 'DE-BITV', 'FR-RGAA']));
    const found = ok(await call(acme, 'dashboard_list_regulations', { query: 'accessibility act', jurisdiction: 'EU' }));
    expect(found.regulations.map((r: { id: string }) => r.id)).toContain('EU-EAA');
    const eaa = ok(await call(acme, 'dashboard_get_regulation', { regulationId: 'EU-EAA' }));
    expect(eaa).toMatchObject({ id: 'EU-EAA', enforcementDate: '2025-06-28', jurisdictionId: 'EU', source: 'embedded' });
    expect(failure(await call(acme, 'dashboard_get_regulation', { regulationId: 'eu-eaa' })).error).toBe('not_found');
    const total = ok(await call(acme, 'dashboard_list_regulations', { limit: 500 })).regulations.length;
    expect(total).toBeGreaterThanOrEqual(80);
  });

  it('lists WCAG criteria by version and level', async () => {
    const all = ok(await call(acme, 'dashboard_list_wcag_criteria', {})).criteria;
    expect(all).toHaveLength(87);
    const v20 = ok(await call(acme, 'dashboard_list_wcag_criteria', { version: '2.0' })).criteria.map((c: { id: string }) => c.id);
    expect(v20).toContain('4.1.1');
    expect(v20).not.toContain('2.5.8');
    const v22 = ok(await call(acme, 'dashboard_list_wcag_criteria', { version: '2.2', level: 'AA' })).criteria.map((c: { id: string }) => c.id);
    expect(v22).toContain('2.5.8');
    expect(v22).not.toContain('4.1.1');
  });

  it('lists proposals and shows one with its structured changes and a unified diff', async () => {
    await upsertProposal(s.services.db, {
      id: 'prp_test_1', source: 'https://www.ada.gov/', detectedAt: '2026-11-18T06:00:00.000Z', type: 'amendment', affectedRegulationId: 'US-ADA',
      summary: 'Title II rule', status: 'pending',
      proposedChanges: [{ action: 'update', entityType: 'regulation', entityId: 'US-ADA', before: { wcagVersion: null }, after: { wcagVersion: '2.1', wcagLevel: 'AA' } }],
    });
    const list = ok(await call(acme, 'dashboard_list_proposals', { status: 'pending' }));
    expect(list.proposals.map((p: { id: string }) => p.id)).toContain('prp_test_1');
    const one = ok(await call(acme, 'dashboard_get_proposal', { proposalId: 'prp_test_1' }));
    expect(one.proposedChanges[0].after).toEqual({ wcagVersion: '2.1', wcagLevel: 'AA' });
    expect(one.diff).toContain('--- regulation US-ADA (before)');
    expect(one.diff).toContain('-  "wcagVersion": null');
    expect(one.diff).toContain('+  "wcagLevel": "AA",');
    expect(failure(await call(acme, 'dashboard_get_proposal', { proposalId: 'prp_nope' })).error).toBe('not_found');
  });
});

/** A stand-in for the compliance and llm services: OAuth, then their APIs. */
function fakeService(routes: Record<string, (body: string) => [number, unknown]>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url === '/api/v1/oauth/token') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 't' }));
      const route = routes[`${req.method} ${req.url}`];
      if (!route) return void res.writeHead(404).end();
      const [status, payload] = route(body);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

describe('a connected compliance service', () => {
  it('answers regulations from the service, and falls back to the embedded set when it fails', async () => {
    const reg = { id: 'XX-TEST', jurisdictionId: 'XX', name: 'Test Act', shortName: 'TA', reference: 'Act 1', url: 'https://law.example/1', enforcementDate: null, status: 'draft', scope: 'all', sectors: [], description: 'd', wcagVersion: '2.2', wcagLevel: 'AA', standard: null };
    let healthy = true;
    const svc = await fakeService({ 'GET /api/v1/regulations?jurisdiction=XX': () => (healthy ? [200, { regulations: [reg] }] : [500, {}]) });
    const org = await insertOrg(s.services.db, { name: 'Compliant', slug: 'compliant' });
    const c = await mcpClient(s.url, bearer(await s.token({ orgId: org.id, role: 'org_admin', perms: [] })));
    ok(await call(c, 'dashboard_create_service_connection', { serviceId: 'compliance', url: svc.url, clientId: 'x', clientSecret: 'compliance-secret' }));
    const remote = ok(await call(c, 'dashboard_list_regulations', { jurisdiction: 'XX' }));
    expect(remote).toMatchObject({ source: 'compliance-service', regulations: [{ id: 'XX-TEST', source: 'compliance-service' }] });
    healthy = false;
    expect(ok(await call(c, 'dashboard_list_regulations', { jurisdiction: 'XX' }))).toMatchObject({ source: 'embedded', regulations: [] });
    await c.close();
    svc.server.close();
  });
});

describe('fix drafts', () => {
  it('drafts a real fix with a diff, legal context for EU and US, and the review disclaimer', async () => {
    const draft = ok(await call(acme, 'dashboard_generate_fix', { wcagCriterion: 'Non-text Content', issueMessage: 'Images must have alternative text', htmlContext: '<img src="/hero.jpg">' }));
    expect(draft).toMatchObject({ wcagCriterion: '1.1.1 Non-text Content', engine: 'deterministic', platform: 'html', effort: 'low' });
    expect(draft.fixedHtml).toMatch(/<img src="\/hero.jpg" alt="[^"]*">/);
    expect(draft.diff).toContain('-<img src="/hero.jpg">');
    expect(draft.diff).toMatch(/\+<img src="\/hero.jpg" alt=/);
    expect(draft.disclaimer).toMatch(/human review/);
    const eu = draft.legalContext.find((l: { jurisdiction: string }) => l.jurisdiction === 'EU');
    const us = draft.legalContext.find((l: { jurisdiction: string }) => l.jurisdiction === 'US');
    expect(eu.regulations.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining(['EU-EAA', 'EU-WAD']));
    expect(eu.regulations.find((r: { id: string }) => r.id === 'EU-EAA').enforcementDate).toBe('2025-06-28');
    expect(us.regulations.map((r: { id: string }) => r.id)).toContain('US-508');
  });

  it('fixes contrast with the nearest passing colour, and writes block-editor markup on request', async () => {
    const contrast = ok(await call(acme, 'dashboard_generate_fix', { wcagCriterion: '1.4.3', issueMessage: 'Elements must meet minimum color contrast', htmlContext: '<p class="note">Hello</p>', cssContext: '.note { color: #777777; background-color: #ffffff }', jurisdictions: ['DE'] }));
    expect(contrast.fixedCss).toMatch(/color:\s*#[0-9a-f]{6}/i);
    expect(contrast.explanation).toMatch(/4\.48/);
    expect(contrast.legalContext[0].regulations.map((r: { id: string }) => r.id)).toContain('DE-BITV');
    const blocks = ok(await call(acme, 'dashboard_generate_fix', { wcagCriterion: '1.1.1', issueMessage: 'x', htmlContext: '<img src="/a.png">', platform: 'cms-block-editor' }));
    expect(blocks.fixedHtml).toMatch(/<!-- wp:image/);
    expect(blocks.fixedHtml).toMatch(/<!-- \/wp:image -->/);
  });

  it('refuses unknown criteria, and those without a recipe when no llm service is connected', async () => {
    expect(failure(await call(acme, 'dashboard_generate_fix', { wcagCriterion: '9.9.9', issueMessage: 'x', htmlContext: '<p>' })).error).toBe('invalid_arguments');
    const unsupported = failure(await call(acme, 'dashboard_generate_fix', { wcagCriterion: '2.5.8', issueMessage: 'Target size', htmlContext: '<button>x</button>' }));
    expect(unsupported.message).toMatch(/llm service/);
  });

  it('asks a connected llm service first, and falls back to the engine when it fails', async () => {
    let healthy = true;
    const svc = await fakeService({
      'POST /api/v1/fix-drafts': (body) => (healthy ? [200, { fixedHtml: `<!-- llm -->${JSON.parse(body).htmlContext}`, explanation: 'from the llm', effort: 'medium' }] : [503, {}]),
    });
    const org = await insertOrg(s.services.db, { name: 'Llm', slug: 'llm-org' });
    const c = await mcpClient(s.url, bearer(await s.token({ orgId: org.id, role: 'org_admin', perms: [] })));
    ok(await call(c, 'dashboard_create_service_connection', { serviceId: 'llm', url: svc.url, clientId: 'x', clientSecret: 'llm-secret-value' }));
    const viaLlm = ok(await call(c, 'dashboard_generate_fix', { wcagCriterion: '2.5.8', issueMessage: 'Target size', htmlContext: '<button>x</button>' }));
    expect(viaLlm).toMatchObject({ engine: 'llm', explanation: 'from the llm', effort: 'medium', fixedHtml: '<!-- llm --><button>x</button>' });
    healthy = false;
    const fallback = ok(await call(c, 'dashboard_generate_fix', { wcagCriterion: '1.1.1', issueMessage: 'x', htmlContext: '<img src="/a.png">' }));
    expect(fallback.engine).toBe('deterministic');
    await c.close();
    svc.server.close();
  });
});

describe('fleet', () => {
  it('lists the sites with their latest scan, summarises them, and queues a bulk fix as a coordinated PR', async () => {
    const fleet = ok(await call(acme, 'dashboard_list_fleet', {}));
    expect(fleet.sites).toHaveLength(1);
    expect(fleet.sites[0]).toMatchObject({ siteUrl: site.url('/'), latestScanStatus: 'completed_with_errors', totalIssues: 7, byLevel: { error: 5, warning: 2, notice: 0 } });
    const summary = ok(await call(acme, 'dashboard_scan_summary_for_fleet', { top: 3 }));
    expect(summary).toMatchObject({ sites: 1, scannedSites: 1, totalIssues: 7 });
    expect(summary.topCriteria[0]).toMatchObject({ criterion: '2.4.4', title: 'Link Purpose (In Context)', issues: 3, sites: 1 });
    const queued = ok(await call(acme, 'dashboard_queue_bulk_fix', { wcagCriterion: '1.1.1' }));
    expect(queued.pr).toMatchObject({ orgId: acmeId, status: 'draft', wcagCriterion: '1.1.1', createdBy: 'svc_acme_admin' });
    expect(queued.legs).toEqual([expect.objectContaining({ siteId: fleet.sites[0].siteId, legStatus: 'queued', approvalStatus: 'pending' })]);
    expect(ok(await call(acme, 'dashboard_coordinated_pr_status', { id: queued.pr.id }))).toEqual(queued);
    expect(failure(await call(globex, 'dashboard_coordinated_pr_status', { id: queued.pr.id })).error).toBe('not_found'); // like a missing one
    expect(failure(await call(acme, 'dashboard_queue_bulk_fix', { wcagCriterion: '2.5.8' })).error).toBe('not_found');
  });
});

describe('restarts', () => {
  it('runs again, to completion, a scan a previous process left running or queued', async () => {
    const first = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' });
    const dataDir = first.dataDir;
    const orgId = (await insertOrg(first.services.db, { name: 'R', slug: 'r' })).id;
    const c = await mcpClient(first.url, bearer(await first.token({ orgId, role: 'member', perms: [] })));
    site.delayMs = 400;
    const scan = ok(await call(c, 'dashboard_scan_site', { siteUrl: site.url('/'), maxPages: 4 }));
    // Stopped mid-scan: the scan goes back to the queue.
    await new Promise((r) => setTimeout(r, 700));
    await c.close();
    await first.close();
    // A crash would leave it "running": make it so, then start a new process on the same data.
    const { openDb } = await import('../../src/db/knex.js');
    const db = openDb({ databaseUrl: (await backendEnv(dataDir)).DATABASE_URL ?? null, dataDir });
    expect((await db('scans').where({ id: scan.scanId }).first()).status).toBe('queued');
    await db('scans').where({ id: scan.scanId }).update({ status: 'running' });
    await db.destroy();
    site.delayMs = 50;
    const second = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom', DATA_DIR: dataDir });
    const c2 = await mcpClient(second.url, bearer(await second.token({ orgId, role: 'member', perms: [] })));
    const done = await waitFor(c2, scan.scanId);
    expect(done).toMatchObject({ status: 'completed', pagesScanned: 4 });
    await c2.close();
    second.expectConformant();
    await second.stop();
  });
});
