/**
 * The Accessibility Conformance Report of a scan of the fixture site in Chromium, through the MCP
 * SDK Client and HTTP: no Supports the evidence does not justify, Not Evaluated for every
 * criterion no check covers, a reviewer's assessment standing in it and audited, false-positive
 * and accepted marks changing the derivation, the HTML passing pactum's own Chromium scan with no
 * error, the PDF Chromium prints carrying the same rows, the resource template, another org's
 * scan not found everywhere, and bad input answered with the spec's error.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { requireChromium } from '../helpers/chromium.js';
import { insertOrg } from '../../src/db/users.js';
import { coveredCriteria } from '../../src/domain/scan/coverage.js';

interface Row { criterion: string; title: string; level: string; en301549: string | null; conformance: string; remarks: string }
interface Acr {
  product: { name: string; url: string };
  producedBy: { pactum: string; axeCore: string; engine: string; chromium: string | null };
  pages: { url: string; checked: boolean }[];
  summary: Record<string, number>;
  wcag: { levelA: Row[]; levelAA: Row[] };
  section508: { chapter: string; rows: { section: string; conformance: string; remarks: string }[] }[];
  en301549: { chapter: string; rows: { section: string; conformance: string; remarks: string }[] }[];
}
interface Issue { wcagCriteria: string[]; type: string; code: string }

let s: TestServer;
let site: FixtureSite;
let admin: Client;
let stranger: Client;
let adminToken: string;
let strangerToken: string;
let scanId: string;
let report: { pages: { url: string; error: string | null; issues: Issue[]; notEvaluated: { wcagCriteria: string[] }[] }[] };

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
const acrOf = async (client: Client = admin): Promise<Acr> => ok(await call(client, 'dashboard_get_acr', { scanId })).acr;
const rowsOf = (acr: Acr) => [...acr.wcag.levelA, ...acr.wcag.levelAA];
const rowOf = (acr: Acr, id: string) => rowsOf(acr).find((r) => r.criterion === id)!;
const FAILING = ['Partially Supports', 'Does Not Support'];

async function finished(client: Client, id: string) {
  for (let i = 0; i < 1200; i++) {
    const p = ok(await call(client, 'dashboard_get_scan_progress', { scanId: id }));
    if (p.finished) return p;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`scan ${id} did not finish`);
}

const download = (format: string, token = adminToken, id = scanId) => fetch(`${s.url}/reports/${id}/acr?format=${format}`, { headers: bearer(token) });

beforeAll(async () => {
  site = await startFixtureSite(0);
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium', CHROMIUM_PATH: requireChromium() });
  const orgId = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  const otherOrg = (await insertOrg(s.services.db, { name: 'Globex', slug: 'globex' })).id;
  adminToken = await s.token({ sub: 'usr_reviewer', orgId, role: 'org_admin', perms: [] });
  strangerToken = await s.token({ sub: 'usr_stranger', orgId: otherOrg, role: 'org_admin', perms: [] });
  admin = await mcpClient(s.url, bearer(adminToken));
  stranger = await mcpClient(s.url, bearer(strangerToken));
  scanId = ok(await call(admin, 'dashboard_scan_site', { siteUrl: site.url('/'), scanMode: 'site', maxPages: 20 })).scanId;
  await finished(admin, scanId);
  report = ok(await call(admin, 'dashboard_get_report', { scanId })).report;
}, 180_000);
afterAll(async () => {
  for (const c of [admin, stranger]) await c?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

describe('the ACR of a scan', () => {
  it('states the product, what produced it and the pages covered', async () => {
    const got = ok(await call(admin, 'dashboard_get_acr', { scanId }));
    const acr = got.acr as Acr;
    expect(acr.product).toEqual({ name: new URL(site.url('/')).host, url: site.url('/') });
    expect(acr.producedBy).toMatchObject({ pactum: expect.stringMatching(/^\d+\.\d+\.\d+$/), axeCore: expect.stringMatching(/^4\.\d+\.\d+$/), engine: 'chromium', chromium: expect.stringMatching(/^Chrome\/\d+\./) });
    expect(acr.pages.map((p) => p.url)).toEqual(report.pages.map((p) => p.url));
    expect(acr.pages.some((p) => !p.checked)).toBe(true); // the fixture's broken link
    expect(got.downloads).toEqual({ html: `${s.url}/reports/${scanId}/acr?format=html`, pdf: `${s.url}/reports/${scanId}/acr?format=pdf` });
    expect(got.resourceUri).toBe(`pactum://acr/${scanId}`);
    expect(acr.wcag.levelA.every((r) => r.level === 'A')).toBe(true);
    expect(acr.wcag.levelAA.every((r) => r.level === 'AA')).toBe(true);
    expect(rowsOf(acr)).toHaveLength(55);
    expect(Object.values(acr.summary).reduce((a, b) => a + b, 0)).toBe(55);
  });

  it('says Supports only where a check covers the criterion and no finding of it is open, and Not Evaluated for every criterion no check covers', async () => {
    const acr = await acrOf();
    const covered = coveredCriteria('WCAG2AA');
    const checked = report.pages.filter((p) => !p.error);
    const touched = new Set(checked.flatMap((p) => [...p.issues.flatMap((i) => i.wcagCriteria), ...p.notEvaluated.flatMap((n) => n.wcagCriteria)]));
    const supports = rowsOf(acr).filter((r) => r.conformance === 'Supports');
    expect(supports.length).toBeGreaterThan(0);
    for (const r of supports) {
      expect(covered.has(r.criterion), `${r.criterion} Supports without a check`).toBe(true);
      expect(touched.has(r.criterion), `${r.criterion} Supports with a finding`).toBe(false);
    }
    const uncovered = rowsOf(acr).filter((r) => !covered.has(r.criterion));
    expect(uncovered.length).toBeGreaterThan(10);
    for (const r of uncovered) expect(r, r.criterion).toMatchObject({ conformance: 'Not Evaluated', remarks: expect.stringMatching(/No automated check covers/) });
    // The fixture's known failures: the image without alt text, the faint text.
    expect(FAILING).toContain(rowOf(acr, '1.1.1').conformance);
    expect(FAILING).toContain(rowOf(acr, '1.4.3').conformance);
  });

  it('has the Revised Section 508 and EN 301 549 reports: WCAG by reference, chapter 9 clause by clause, nothing Supports without evidence', async () => {
    const acr = await acrOf();
    const sec508 = acr.section508.flatMap((c) => c.rows);
    expect(acr.section508.map((c) => c.chapter)).toEqual(['Chapter 3: Functional Performance Criteria (FPC)', 'Chapter 4: Hardware', 'Chapter 5: Software', 'Chapter 6: Support Documentation and Services']);
    expect(sec508.filter((r) => r.section.startsWith('302.'))).toHaveLength(9);
    for (const r of sec508.filter((x) => x.section.startsWith('302.'))) expect(r.conformance).toBe('Not Evaluated');
    expect(sec508.find((r) => r.section === '501.1')).toMatchObject({ conformance: 'See WCAG 2.x section', remarks: expect.stringMatching(/incorporates WCAG 2\.0 Level A and AA by reference/) });
    expect(sec508.map((r) => r.section)).toEqual(expect.arrayContaining(['502', '504.2', '602.3']));
    const web = acr.en301549[0]!;
    expect(web.chapter).toBe('Chapter 9: Web');
    for (const r of rowsOf(acr).filter((x) => x.en301549)) {
      expect(web.rows.find((x) => x.section === r.en301549), r.criterion).toMatchObject({ conformance: r.conformance, remarks: r.remarks });
    }
    expect(acr.en301549.map((c) => c.chapter)).toEqual(['Chapter 9: Web', 'Chapter 10: Non-Web Documents', 'Chapter 11: Software']);
    for (const c of acr.en301549.slice(1)) for (const r of c.rows) expect(['Not Evaluated', 'Not Applicable']).toContain(r.conformance);
    for (const r of [...sec508, ...acr.en301549.flatMap((c) => c.rows)]) expect(r.remarks.length, r.section).toBeGreaterThan(10);
  });
});

describe('reviewers', () => {
  it("records a reviewer's assessment, which stands in the ACR and is audited; unassessed takes it off", async () => {
    expect(rowOf(await acrOf(), '1.2.4').conformance).toBe('Not Evaluated');
    const got = ok(await call(admin, 'dashboard_assess_criterion', { scanId, criterion: '1.2.4', conformance: 'Not Applicable', remarks: 'The site has no live audio or video.' }));
    expect(got).toMatchObject({ scanId, criterion: '1.2.4', assessment: { conformance: 'Not Applicable', remarks: 'The site has no live audio or video.', author: 'usr_reviewer' }, row: { criterion: '1.2.4', conformance: 'Not Applicable', remarks: 'The site has no live audio or video.' } });
    const acr = await acrOf();
    expect(rowOf(acr, '1.2.4')).toMatchObject({ conformance: 'Not Applicable', remarks: 'The site has no live audio or video.' });
    expect(acr.en301549[0]!.rows.find((r) => r.section === '9.1.2.4')).toMatchObject({ conformance: 'Not Applicable' });
    const html = await (await download('html')).text();
    expect(html).toContain('The site has no live audio or video.');

    const stored = await s.services.db('acr_assessments').where({ scan_id: scanId, criterion: '1.2.4' });
    expect(stored).toEqual([expect.objectContaining({ conformance: 'Not Applicable', author: 'usr_reviewer' })]);
    const audit = await s.services.db('audit_log').where({ tool: 'dashboard_assess_criterion', outcome: 'ok' });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ subject: 'usr_reviewer' });
    expect(JSON.parse(audit[0].arguments)).toMatchObject({ scanId, criterion: '1.2.4', conformance: 'Not Applicable' });

    const off = ok(await call(admin, 'dashboard_assess_criterion', { scanId, criterion: '1.2.4', conformance: 'unassessed' }));
    expect(off).toMatchObject({ assessment: null, row: { conformance: 'Not Evaluated' } });
    expect(await s.services.db('acr_assessments').where({ scan_id: scanId })).toEqual([]);
    expect(await s.services.db('audit_log').where({ tool: 'dashboard_assess_criterion' })).toHaveLength(2);
  });

  it('counts a false positive as no failure, and an accepted failure as a failure with its reason', async () => {
    const before = rowOf(await acrOf(), '1.1.1');
    expect(FAILING).toContain(before.conformance);
    const { findings } = ok(await call(admin, 'dashboard_list_findings', { scanId, limit: 100 }));
    const imageAlt = (findings as { fingerprint: string; issue: Issue }[]).filter((f) => f.issue.wcagCriteria.includes('1.1.1'));
    expect(imageAlt.length).toBeGreaterThan(0);
    for (const f of imageAlt) ok(await call(admin, 'dashboard_mark_finding', { scanId, fingerprint: f.fingerprint, mark: 'false_positive', reason: 'A tracking pixel, hidden from assistive technology' }));
    const dismissed = rowOf(await acrOf(), '1.1.1');
    expect(FAILING).not.toContain(dismissed.conformance);
    expect(dismissed.remarks).toMatch(/dismissed by a reviewer as no failure/);

    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    ok(await call(admin, 'dashboard_mark_finding', { scanId, fingerprint: imageAlt[0]!.fingerprint, mark: 'accepted', reason: 'Vendor widget, replaced in the spring release', expiresAt }));
    const accepted = rowOf(await acrOf(), '1.1.1');
    expect(FAILING).toContain(accepted.conformance);
    expect(accepted.remarks).toMatch(/accepted by the organization \(Vendor widget, replaced in the spring release\)/);
    for (const f of imageAlt) ok(await call(admin, 'dashboard_mark_finding', { scanId, fingerprint: f.fingerprint, mark: 'unmarked' }));
    expect(rowOf(await acrOf(), '1.1.1')).toEqual(before);
  });
});

describe('the documents', () => {
  let html = '';

  it('serves the HTML, self-contained under the page policy', async () => {
    const res = await download('html');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${scanId}.acr.html"`);
    expect(res.headers.get('content-security-policy')).toMatch(/style-src 'self' 'sha256-[A-Za-z0-9+/]+=*'/);
    html = await res.text();
    expect(html).not.toMatch(/<script|<link|<img|<iframe|src=|url\(/i);
    for (const r of rowsOf(await acrOf())) expect(html).toContain(`${r.criterion} ${r.title.replace(/&/g, '&amp;')}`);
    expect(html).toContain('Revised Section 508 Report');
    expect(html).toContain('EN 301 549 Report');
  });

  it("passes pactum's own Chromium scan with no error", async () => {
    const host: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(host.address() as AddressInfo).port}/acr.html`;
      const id = ok(await call(admin, 'dashboard_scan_site', { siteUrl: url, scanMode: 'single' })).scanId;
      const done = await finished(admin, id);
      expect(done.status).toBe('completed');
      const scanned = ok(await call(admin, 'dashboard_get_report', { scanId: id })).report;
      expect(scanned.engine).toBe('chromium');
      const errors = scanned.pages.flatMap((p: { issues: Issue[] }) => p.issues).filter((i: Issue) => i.type === 'error');
      expect(errors, JSON.stringify(errors.map((e: Issue) => e.code))).toEqual([]);
      expect(scanned.summary.byLevel.error).toBe(0);
    } finally {
      await new Promise((r) => host.close(r));
    }
  });

  it('prints the PDF in Chromium, with the same rows', async () => {
    const res = await download('pdf');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${scanId}.acr.pdf"`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(Buffer.from(bytes.slice(0, 5)).toString()).toBe('%PDF-');
    const loading = getDocument({ data: bytes, useSystemFonts: true });
    const pdf = await loading.promise;
    let text = '';
    for (let n = 1; n <= pdf.numPages; n++) {
      const content = await (await pdf.getPage(n)).getTextContent();
      text += ` ${content.items.map((i) => ('str' in i ? i.str : '')).join(' ')}`;
    }
    await loading.destroy();
    // Compared without white space: lines wrap inside cells, and ligatures (fi) come out as items of their own.
    const flat = text.replace(/\s+/g, '');
    const acr = await acrOf();
    for (const r of rowsOf(acr)) {
      const head = `${r.criterion} ${r.title} (Level ${r.level}${r.en301549 ? `; EN 301 549 ${r.en301549}` : ''})`;
      expect(flat, r.criterion).toContain(`${head} ${r.conformance} ${r.remarks}`.replace(/\s+/g, ''));
    }
    expect(flat).toContain('302.1WithoutVisionNotEvaluated');
    expect(flat).toContain('9.1.1.1Non-textContent(WCAG1.1.1)');
  });
});

describe('the resource template', () => {
  it('reads the ACR as HTML through pactum://acr/{scanId}; another org gets not found', async () => {
    const { resourceTemplates } = await admin.listResourceTemplates();
    expect(resourceTemplates).toContainEqual(expect.objectContaining({ uriTemplate: 'pactum://acr/{scanId}', mimeType: 'text/html' }));
    const read = await admin.readResource({ uri: `pactum://acr/${scanId}` });
    const content = read.contents[0] as { mimeType: string; text: string };
    expect(content.mimeType).toBe('text/html');
    expect(content.text).toMatch(/^<!doctype html>/);
    expect(content.text).toContain('<h1>Accessibility Conformance Report: ');
    await expect(stranger.readResource({ uri: `pactum://acr/${scanId}` })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/not found/i) });
  });
});

describe('refusals', () => {
  it("answers another org's scan as not found in the tools and the download", async () => {
    expect(failure(await call(stranger, 'dashboard_get_acr', { scanId })).error).toBe('not_found');
    expect(failure(await call(stranger, 'dashboard_assess_criterion', { scanId, criterion: '1.1.1', conformance: 'Supports', remarks: 'mine now' })).error).toBe('not_found');
    for (const format of ['html', 'pdf']) {
      const res = await download(format, strangerToken);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ statusCode: 404, message: `No scan ${scanId} in this organization` });
    }
    expect(await s.services.db('acr_assessments').where({ scan_id: scanId })).toEqual([]);
  });

  it('refuses bad input with the spec\'s errors, never a 500', async () => {
    const refused = async (args: Record<string, unknown>) => failure(await call(admin, 'dashboard_assess_criterion', { scanId, ...args }));
    expect(await refused({ criterion: '1.9.9', conformance: 'Supports', remarks: 'x' })).toMatchObject({ error: 'invalid_arguments', message: expect.stringMatching(/1\.9\.9 is not a WCAG 2\.2 level A or AA/) });
    expect(await refused({ criterion: '1.4.6', conformance: 'Supports', remarks: 'AAA' })).toMatchObject({ error: 'invalid_arguments' });
    expect(await refused({ criterion: '4.1.1', conformance: 'Supports', remarks: 'removed in 2.2' })).toMatchObject({ error: 'invalid_arguments' });
    expect(await refused({ criterion: 'x.y', conformance: 'Supports', remarks: 'x' })).toMatchObject({ error: 'invalid_arguments' });
    expect(await refused({ criterion: '1.1.1', conformance: 'Fine', remarks: 'x' })).toMatchObject({ error: 'invalid_arguments' });
    expect(await refused({ criterion: '1.1.1', conformance: 'Supports' })).toMatchObject({ error: 'invalid_arguments', message: expect.stringMatching(/needs remarks/) });
    expect(await refused({ criterion: '1.1.1', conformance: 'Supports', remarks: 'x'.repeat(2001) })).toMatchObject({ error: 'invalid_arguments' });
    expect(failure(await call(admin, 'dashboard_get_acr', { scanId: 'scn_00000000000000000000000000' })).error).toBe('not_found');
    expect(await s.services.db('acr_assessments').where({ scan_id: scanId })).toEqual([]);

    const nul = await fetch(`${s.url}/api/v1/mcp`, {
      method: 'POST',
      headers: { ...bearer(adminToken), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_assess_criterion', arguments: { scanId, criterion: '1.1.1', conformance: 'Supports', remarks: 'a\u0000b' } } }),
    });
    expect(nul.status).toBeLessThan(500);
    expect(await nul.text()).toMatch(/NUL/);
    expect(await s.services.db('acr_assessments').where({ scan_id: scanId })).toEqual([]);

    const bad = await download('doc');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ statusCode: 400, message: expect.stringMatching(/format/) });
  });
});
