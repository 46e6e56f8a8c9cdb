/**
 * The exports and the report page read a report a run of pages at a time. What a client gets must
 * be what the whole report at once gives: the same text for each export (written from every page
 * in one go, exportReport) and the same model for the page (buildReportView over every page), with
 * runs much smaller than the report and a page larger than a run.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { JSDOM } from 'jsdom';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedLargeReport, type LargeReport } from '../helpers/large-report.js';
import { parseCsv } from '../helpers/csv.js';
import { insertOrg } from '../../src/db/users.js';
import { readPages, toPageReport, type ScanRow } from '../../src/db/scans.js';
import { EXPORT_EXTENSIONS, exportReport, type ExportFormat } from '../../src/domain/report/exports.js';
import { buildReportView } from '../../src/domain/report/view-model.js';
import { parseSourceMapping } from '../../src/domain/report/locations.js';
import { githubSarifProblems, gitlabAccessibilityProblems } from '../helpers/code-hosts.js';
import type { PageReport, ReportSummary } from '../../src/domain/scan/types.js';

describe('exports and the report page read a run of pages at a time', () => {
  let s: TestServer;
  let report: LargeReport;
  let token: string;
  let pages: PageReport[];
  let scan: ScanRow;

  beforeAll(async () => {
    // Runs of about 150 issues: the report's 40 pages of 60 take 16 runs, and its last page (400 issues) one of its own.
    s = await startTestServer({ REPORT_READ_BATCH_ISSUES: '150', REPORT_MAX_ISSUES: '500' });
    const org = await insertOrg(s.services.db, { name: 'Acme', slug: 'acme-stream' });
    token = await s.token({ sub: 'usr_ada_stream', orgId: org.id, role: 'member' });
    report = await seedLargeReport(s.services.db, org.id, { pages: 40, issuesPerPage: 60, bigPage: 400, failEvery: 9 });
    pages = (await readPages(s.services.db, report.scanId)).map((row) => toPageReport(row) as PageReport);
    scan = (await s.services.db<ScanRow>('scans').where({ id: report.scanId }).first())!;
  });
  afterAll(async () => {
    s.expectConformant();
    await s?.stop();
  });

  const get = (path: string, accept = '*/*') => fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${token}`, accept } });
  const meta = () => {
    const summary = JSON.parse(scan.summary!) as ReportSummary;
    return { scanId: scan.id, siteUrl: scan.site_url, standard: scan.standard, engine: scan.engine ?? null, finishedAt: scan.finished_at, notEvaluated: summary.notEvaluated };
  };
  const exported = async (format: ExportFormat) => {
    const res = await get(`/reports/${report.scanId}.${EXPORT_EXTENSIONS[format]}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBeNull();
    return res.text();
  };

  it('streams each export as the same text as the whole report written at once', async () => {
    for (const format of ['sarif', 'junit', 'csv', 'pa11y'] as const) {
      expect(await exported(format), format).toBe(exportReport(format, meta(), pages));
    }
  });

  it('SARIF is valid SARIF 2.1.0 and holds every issue once, each result under its rule', async () => {
    const schema = JSON.parse(readFileSync('node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json', 'utf8')) as object;
    const ajv = new Ajv04.default({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    const sarif = JSON.parse(await exported('sarif')) as { runs: { tool: { driver: { rules: { id: string }[] } }; results: { ruleId: string; ruleIndex: number; partialFingerprints: Record<string, string> }[]; invocations: { executionSuccessful: boolean; toolExecutionNotifications: unknown[] }[] }[] };
    expect(validate(sarif), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    const run = sarif.runs[0]!;
    expect(run.results).toHaveLength(report.totalIssues);
    for (const r of run.results) expect(run.tool.driver.rules[r.ruleIndex]!.id).toBe(r.ruleId);
    expect(run.invocations[0]!.executionSuccessful).toBe(false);
    expect(run.invocations[0]!.toolExecutionNotifications).toHaveLength(pages.filter((p) => p.error).length);
  });

  it('JUnit parses, its totals adding up its suites; CSV has a row per issue and per failed page', async () => {
    const doc = new JSDOM(await exported('junit'), { contentType: 'application/xml' }).window.document;
    expect(doc.querySelector('parsererror')).toBeNull();
    const suites = [...doc.querySelectorAll('testsuite')];
    expect(suites).toHaveLength(report.pages);
    for (const a of ['tests', 'failures', 'errors', 'skipped']) {
      expect(Number(doc.documentElement.getAttribute(a)), a).toBe(suites.reduce((n, suite) => n + Number(suite.getAttribute(a)), 0));
    }
    const rows = parseCsv(await exported('csv'));
    expect(rows).toHaveLength(1 + report.totalIssues + pages.filter((p) => p.error).length);
  });

  it('SARIF places pages by the source mappings asked for (one or several); one that is not PREFIX=DIR is 400 naming it', async () => {
    const one = [new URL(pages[0]!.url).origin + '/=site/'];
    const mapped = await get(`/reports/${report.scanId}.sarif?${new URLSearchParams(one.map((m) => ['sourceMap', m]))}`);
    expect(mapped.status).toBe(200);
    const text = await mapped.text();
    expect(text).toBe(exportReport('sarif', meta(), pages, { sourceMap: one.map(parseSourceMapping) }));
    expect(githubSarifProblems(text)).toEqual([]);
    const uris = (JSON.parse(text) as { runs: { results: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }[] }).runs[0]!.results.map((r) => r.locations[0]!.physicalLocation.artifactLocation.uri);
    expect(uris.every((u) => u.startsWith('site/'))).toBe(true);
    const two = await get(`/reports/${report.scanId}.sarif?sourceMap=${encodeURIComponent('https://x.example/=a/')}&sourceMap=${encodeURIComponent(one[0]!)}`);
    expect(two.status).toBe(200);
    await two.body?.cancel();
    const bad = await get(`/reports/${report.scanId}.sarif?sourceMap=${encodeURIComponent('https://x.example/=../up')}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/^sourceMap https:\/\/x\.example\/=\.\.\/up: .*without \.\./);
  });

  it('the pa11y export is what GitLab reads, a key per page', async () => {
    const text = await exported('pa11y');
    expect(gitlabAccessibilityProblems(text)).toEqual([]);
    expect(Object.keys((JSON.parse(text) as { results: object }).results)).toHaveLength(report.pages);
  });

  it('the report page embeds the same model as built from every page at once', async () => {
    const res = await get(`/reports/${report.scanId}`, 'text/html');
    expect(res.status).toBe(200);
    const html = await res.text();
    const data = JSON.parse(/<script type="application\/json" id="pactum-data">(.*?)<\/script>/s.exec(html)![1]!) as { view: { trend?: { scanId: string }[] } };
    const summary = { notEvaluated: [], ...JSON.parse(scan.summary!) } as ReportSummary;
    const expected = buildReportView({
      scan: { scanId: scan.id, siteUrl: scan.site_url, standard: scan.standard, status: scan.status, engine: scan.engine ?? null, finishedAt: scan.finished_at },
      summary, pages, brandScore: null, maxIssues: 500,
    });
    // The page adds the site's trend, read apart from the pages: here one run, this scan.
    const { trend, ...view } = data.view;
    expect(trend?.map((t) => t.scanId)).toEqual([scan.id]);
    expect(view).toEqual(expected);
    expect(expected.issuesShown).toBe(500);
  });
});
