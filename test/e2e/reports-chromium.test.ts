/**
 * The report as people and pipelines see it, from a real Chromium scan of the fixture site: the
 * MCP App (tools/list _meta, resources/read, the view rendered in headless Chromium by a host
 * built on ext-apps' AppBridge), element screenshots, the report page, and the SARIF, JUnit XML
 * and CSV exports checked against their formats. PACTUM_WRITE_IMAGES=1 also writes the pictures
 * of docs/images/.
 */
import { readFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import Ajv04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { JSDOM } from 'jsdom';
import * as esbuild from 'esbuild';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { requireChromium } from '../helpers/chromium.js';
import { insertOrg } from '../../src/db/users.js';
import { apcaLc } from '../../src/domain/scan/contrast.js';
import { en301549Clause } from '../../src/domain/scan/en301549.js';
import type { Issue } from '../../src/domain/scan/types.js';
import { parseCsv } from '../helpers/csv.js';
import { pactum } from '../helpers/cli.js';
import { imagesPage, startChangingSite, type ChangingSite } from '../helpers/changing-site.js';

let s: TestServer;
let site: FixtureSite;
let client: Client;
let token: string;
let scanId: string;
let browser: Browser;
const writeImages = process.env.PACTUM_WRITE_IMAGES === '1';

beforeAll(async () => {
  site = await startFixtureSite(0);
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium', CHROMIUM_PATH: requireChromium(), SCREENSHOTS_PER_PAGE: '3' });
  const orgId = (await insertOrg(s.services.db, { name: 'Reports', slug: 'reports' })).id;
  token = await s.token({ sub: 'svc_reports', orgId, role: 'org_admin', perms: [] });
  client = await mcpClient(s.url, bearer(token));
  await call('dashboard_create_user', { username: 'rita', password: 'rita-password-123', role: 'member' });
  scanId = ok(await call('dashboard_scan_site', { siteUrl: site.url('/'), scanMode: 'site', maxPages: 20 })).scanId;
  for (let i = 0; i < 2400; i++) {
    if (ok(await call('dashboard_get_scan_progress', { scanId })).finished) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  browser = await chromium.launch({ executablePath: requireChromium(), args: ['--no-sandbox'] });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await client?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });
const get = (path: string, headers: Record<string, string> = {}) => fetch(`${s.url}${path}`, { headers });

async function login(username: string, password: string): Promise<string> {
  const res = await fetch(`${s.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
  expect(res.status).toBe(200);
  await res.body?.cancel();
  return /session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')![0];
}

describe('the MCP App', () => {
  it('points the report tools at ui://pactum/report, as ext-apps writes it, and serves the resource', async () => {
    const { tools } = await client.listTools();
    const withUi = tools.filter((t) => t._meta).map((t) => t.name).sort();
    expect(withUi).toEqual(['dashboard_get_report', 'dashboard_get_scan_progress', 'dashboard_list_fleet', 'dashboard_scan_site', 'dashboard_scan_summary_for_fleet']);
    for (const t of tools.filter((x) => x._meta)) expect(t._meta).toEqual({ ui: { resourceUri: 'ui://pactum/report' }, 'ui/resourceUri': 'ui://pactum/report' });
    const { resources } = await client.listResources();
    expect(resources[0]).toEqual(expect.objectContaining({ uri: 'ui://pactum/report', mimeType: 'text/html;profile=mcp-app' }));
    const read = await client.readResource({ uri: 'ui://pactum/report' });
    const html = (read.contents[0] as { text: string }).text;
    expect(read.contents[0]).toMatchObject({ uri: 'ui://pactum/report', mimeType: 'text/html;profile=mcp-app' });
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-/);
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="https?:/); // nothing fetched from anywhere
  });

  it('gives every finding of the scan its EN 301 549 clause, and each contrast finding its APCA Lc', async () => {
    const report = ok(await call('dashboard_get_report', { scanId, view: 'pages' }));
    const issues = report.report.pages.flatMap((p: { issues: Issue[] }) => p.issues) as Issue[];
    expect(issues.length).toBeGreaterThan(0);
    for (const i of issues) expect(i.en301549, `${i.code} ${i.wcagCriterion}`).toBe(en301549Clause(i.wcagCriterion));
    expect(issues.filter((i) => i.en301549).length).toBeGreaterThan(0);
    const contrasts = issues.filter((i) => i.code === 'color-contrast');
    expect(contrasts.length).toBeGreaterThan(0);
    for (const i of contrasts) {
      expect(i.contrast!.apca!.lc).toBe(Math.round(apcaLc(i.contrast!.foreground, i.contrast!.background)! * 10) / 10);
      expect(i.contrast!.apca!.advisory).toBe('WCAG 3 working draft');
    }
  });

  it('gives the report view model: worst page first, contrast colours and ratio, screenshots', async () => {
    const app = ok(await call('dashboard_get_report', { scanId, view: 'app' })).app;
    expect(app.pages[0]).toMatchObject({ url: site.url('/x'), error: expect.stringMatching(/404/) });
    expect(app.engine).toBe('chromium');
    const contrast = app.rules.find((r: { code: string }) => r.code === 'color-contrast');
    const faint = contrast.issues.find((i: { selector: string }) => i.selector === '.faint');
    // APCA beside the WCAG 2 ratio, as APCA computes it for the painted colours (its own tests pin apcaLc: test/unit/scan/contrast-en301549.test.ts).
    const lc = Math.round(apcaLc('#bbbbbb', '#ffffff')! * 10) / 10;
    expect(faint.contrast).toEqual({ foreground: '#bbbbbb', background: '#ffffff', ratio: 1.91, required: 4.5, apca: { lc, threshold: 75, meets: false, advisory: 'WCAG 3 working draft' } });
    expect(faint.en301549).toBe('9.1.4.3');
    expect(contrast.level).toBe('AA');
    expect(app.summary.byPrinciple[0]).toMatchObject({ principle: '1', name: 'Perceivable' });
    const shots = app.rules.flatMap((r: { issues: { screenshot: string | null; pageUrl: string }[] }) => r.issues).filter((i: { screenshot: string | null }) => i.screenshot);
    expect(shots.length).toBeGreaterThan(0);
    const perPage = new Map<string, Set<string>>();
    for (const i of shots) perPage.set(i.pageUrl, new Set([...(perPage.get(i.pageUrl) ?? []), i.screenshot]));
    for (const ids of perPage.values()) expect(ids.size).toBeLessThanOrEqual(3);
    const shot = ok(await call('dashboard_get_screenshot', { scanId, screenshotId: faint.screenshot }));
    const bytes = Buffer.from(shot.data, 'base64');
    expect(shot.mimeType).toBe('image/webp');
    expect(bytes.subarray(0, 4).toString()).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString()).toBe('WEBP');
  });

  it('renders in a host built on AppBridge: worst page first, contrast swatches and ratio, a screenshot, keyboard navigation, a fix draft through the host', async () => {
    const view = (await client.readResource({ uri: 'ui://pactum/report' })).contents[0] as { text: string };
    const result = await call('dashboard_get_report', { scanId });
    const page = await hostPage();
    await page.evaluate(([html, r]) => window.startView(html, r as never, 'light'), [view.text, result] as const);
    const frame = await viewFrame(page);
    // The pages view's result led the view to the report model (dashboard_get_report view app) through the host.
    await frame.waitForSelector('table.pages tbody tr');
    expect(await page.evaluate(() => window.toolCalls)).toEqual(expect.arrayContaining(['dashboard_get_scan_progress', 'dashboard_get_report']));
    const firstRow = await frame.locator('table.pages tbody tr').first().innerText();
    expect(firstRow).toMatch(/\/x[\s\S]*Could not be checked/);

    const rule = frame.locator('section.rule', { has: frame.locator('.rule-code', { hasText: /^color-contrast$/ }) });
    const toggle = rule.locator('button.rule-toggle');
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
    const faint = rule.locator('button.issue', { hasText: '.faint' });
    await faint.click();
    const detail = rule.locator(`#${(await faint.getAttribute('aria-controls'))!}`);
    await expect.poll(() => detail.locator('.contrast').innerText()).toMatch(/#bbbbbb[\s\S]*#ffffff[\s\S]*contrast 1\.91:1, needs at least 4\.5:1/);
    expect(await detail.locator('.swatch').first().evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(187, 187, 187)');
    expect(await detail.locator('.swatch').nth(1).evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(255, 255, 255)');
    await expect.poll(() => detail.locator('figure.shot img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    if (writeImages) await page.screenshot({ path: 'docs/images/report-view-chat.png', fullPage: true });

    // Keyboard: the list is one Tab stop; the arrow keys move between its issues, Enter opens one.
    const buttons = rule.locator('button.issue');
    await buttons.first().focus();
    const firstId = await frame.evaluate(() => document.activeElement?.id);
    await page.keyboard.press('ArrowDown');
    const secondId = await frame.evaluate(() => document.activeElement?.id);
    expect(secondId).not.toBe(firstId);
    expect(await frame.evaluate(() => document.activeElement?.getAttribute('tabindex'))).toBe('0');
    const outline = await frame.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).toBe('solid'); // a visible focus indicator
    await page.keyboard.press('ArrowUp');
    expect(await frame.evaluate(() => document.activeElement?.id)).toBe(firstId);

    // A fix drafted by dashboard_generate_fix through the host, shown as a diff.
    await detail.locator('button', { hasText: 'Draft a fix' }).click();
    await expect.poll(() => detail.locator('.fix pre.diff').innerText(), { timeout: 30_000 }).toMatch(/^\+/m);
    expect(await page.evaluate(() => window.toolCalls)).toContain('dashboard_generate_fix');

    // The view passes pactum's own Chromium scan: its DOM as rendered, scanned like any page.
    const rendered = await frame.evaluate(() => `<!doctype html>${document.documentElement.outerHTML}`);
    const served = await serveOnce(rendered.replace(/<script[\s\S]*?<\/script>/g, ''));
    const checked = ok(await call('dashboard_scan_page', { url: served.url }));
    served.close();
    expect(checked.issues.map((i: { code: string; selector: string; message: string }) => `${i.code}@${i.selector}: ${i.message}`).join('\n')).toBe('');
    expect(checked.notEvaluated).toEqual([]);
    await page.close();
  }, 120_000);

  it('shows a running scan\'s progress, and the fleet', async () => {
    const view = (await client.readResource({ uri: 'ui://pactum/report' })).contents[0] as { text: string };
    const page = await hostPage();
    await page.evaluate(([html, r]) => window.startView(html, r as never, 'dark'), [view.text, await call('dashboard_list_fleet', {})] as const);
    const frame = await viewFrame(page);
    await frame.waitForSelector('table.pages button');
    expect(await frame.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await frame.locator('table.pages button').first().click();
    await frame.waitForSelector('section.rule');
    await page.close();
  }, 60_000);
});

describe('the report page and exports', () => {
  it('shows the report to a signed-in user of the org, with its own hashed script, and a sign-in page otherwise', async () => {
    const cookie = await login('rita', 'rita-password-123');
    const res = await get(`/reports/${scanId}`, { cookie, accept: 'text/html' });
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    const html = await res.text();
    expect(html).toContain('id="pactum-data"');
    const anonymous = await get(`/reports/${scanId}`, { accept: 'text/html' });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toMatch(/Sign in/);
    const home = await (await get('/', { cookie })).text();
    expect(home).toContain(`href="reports/${scanId}"`);

    // Another org's member sees no such report, page or export.
    const otherOrg = (await insertOrg(s.services.db, { name: 'Other', slug: 'other' })).id;
    const other = bearer(await s.token({ sub: 'svc_other', orgId: otherOrg, role: 'member', perms: [] }));
    expect((await get(`/reports/${scanId}`, other)).status).toBe(404);
    expect((await get(`/reports/${scanId}.sarif`, other)).status).toBe(404);
    const app = ok(await call('dashboard_get_report', { scanId, view: 'app' })).app;
    const shotId = app.rules.flatMap((r: { issues: { screenshot: string | null }[] }) => r.issues).find((i: { screenshot: string | null }) => i.screenshot).screenshot;
    expect((await get(`/reports/${scanId}/screenshots/${shotId}`, other)).status).toBe(404);
    const img = await get(`/reports/${scanId}/screenshots/${shotId}`, { cookie });
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/webp');

    // What a person sees on the page: the report drawn, its screenshots loaded from this server.
    const page = await browser.newPage();
    await page.context().addCookies([{ name: 'session', value: cookie.split('=')[1]!, url: s.url }]);
    await page.goto(`${s.url}/reports/${scanId}`);
    await page.waitForSelector('table.pages tbody tr');
    const rule = page.locator('section.rule', { has: page.locator('.rule-code', { hasText: /^color-contrast$/ }) });
    if ((await rule.locator('button.rule-toggle').getAttribute('aria-expanded')) !== 'true') await rule.locator('button.rule-toggle').click();
    await rule.locator('button.issue', { hasText: '.faint' }).click();
    await expect.poll(() => rule.locator('figure.shot img').first().evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBeGreaterThan(0);
    if (writeImages) await page.screenshot({ path: 'docs/images/report-page.png', fullPage: true });
    await page.close();
  }, 60_000);

  it('shares the report from its page: a link anyone opens without signing in, read-only with its screenshots, refused once revoked', async () => {
    const cookie = await login('rita', 'rita-password-123');
    const owner = await browser.newPage();
    await owner.context().addCookies([{ name: 'session', value: cookie.split('=')[1]!, url: s.url }]);
    await owner.goto(`${s.url}/reports/${scanId}`);
    await owner.getByRole('button', { name: 'Share a link to a read-only copy of this report' }).click();
    const field = owner.getByRole('textbox', { name: 'The link to this report' });
    await field.waitFor();
    const link = await field.inputValue();
    expect(link).toMatch(new RegExp(`^${s.url}/shared/shr_`));
    await expect.poll(() => owner.locator('.share p').first().textContent()).toMatch(/without signing in, until \d{4}-\d\d-\d\d \d\d:\d\d UTC/);

    // Someone else's browser, with no session: the report, read-only, its screenshots under the link.
    const stranger = await browser.newContext();
    const reader = await stranger.newPage();
    const opened = await reader.goto(link);
    expect(opened!.status()).toBe(200);
    await reader.waitForSelector('table.pages tbody tr');
    expect(await reader.locator('.shared-note').textContent()).toMatch(/read-only copy of this report, shared by link/);
    expect(await reader.getByRole('button', { name: /Share/ }).count()).toBe(0);
    const rule = reader.locator('section.rule', { has: reader.locator('.rule-code', { hasText: /^color-contrast$/ }) });
    if ((await rule.locator('button.rule-toggle').getAttribute('aria-expanded')) !== 'true') await rule.locator('button.rule-toggle').click();
    await rule.locator('button.issue', { hasText: '.faint' }).click();
    await expect.poll(() => rule.locator('figure.shot img').first().evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBeGreaterThan(0);

    await owner.getByRole('button', { name: 'Revoke this link' }).click();
    await expect.poll(() => owner.locator('.share').textContent()).toMatch(/The link was revoked/);
    const refused = await reader.goto(link);
    expect(refused!.status()).toBe(410);
    expect(await reader.textContent('body')).toMatch(/was revoked/);
    await stranger.close();
    await owner.close();
  }, 60_000);

  it('exports SARIF 2.1.0 valid against the official schema', async () => {
    const res = await get(`/reports/${scanId}.sarif`, bearer(token));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/sarif\+json/);
    const sarif = (await res.json()) as { runs: { results: { ruleId: string; properties: { pageUrl: string }; locations: { physicalLocation: { artifactLocation: { uri: string } }; logicalLocations: { fullyQualifiedName: string }[] }[] }[]; tool: { driver: { rules: { id: string; helpUri: string; properties: { tags: string[] } }[] } }; invocations: { executionSuccessful: boolean }[] }[] };
    const schema = JSON.parse(readFileSync('node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json', 'utf8')) as Record<string, unknown>;
    // The schema is JSON Schema draft-04, as OASIS published it: validated by ajv's draft-04 class.
    // unicodeRegExp off: the schema's language pattern has a stray "]" that only the u flag refuses.
    const ajv = new Ajv04.default({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    expect(validate(sarif), JSON.stringify(validate.errors?.slice(0, 5))).toBe(true);
    const run = sarif.runs[0]!;
    const contrastRule = run.tool.driver.rules.find((r) => r.id === 'color-contrast')!;
    expect(contrastRule.helpUri).toMatch(/dequeuniversity\.com\/rules\/axe\/.*color-contrast/);
    expect(contrastRule.properties.tags).toEqual(expect.arrayContaining(['wcag1.4.3', 'wcag-level-aa']));
    const faint = run.results.find((r) => r.ruleId === 'color-contrast' && r.locations[0]!.logicalLocations[0]!.fullyQualifiedName === '.faint')!;
    expect(faint.properties.pageUrl.startsWith(site.url('/contrast.html'))).toBe(true);
    // Scheme-less, as GitHub code scanning accepts it: host (its colon escaped) and path.
    const page = new URL(site.url('/contrast.html'));
    expect(faint.locations[0]!.physicalLocation.artifactLocation.uri).toBe(`${page.host.replace(':', '%3A')}${page.pathname}`);
    expect(run.invocations[0]!.executionSuccessful).toBe(false); // the 404 page
  });

  it('exports JUnit XML that an XML parser reads: a suite per page, a case per page and rule', async () => {
    const res = await get(`/reports/${scanId}.junit.xml`, bearer(token));
    expect(res.status).toBe(200);
    const doc = new JSDOM(await res.text(), { contentType: 'application/xml' }).window.document;
    expect(doc.querySelector('parsererror')).toBeNull();
    const root = doc.documentElement;
    expect(root.tagName).toBe('testsuites');
    const suites = [...root.querySelectorAll('testsuite')];
    expect(suites.length).toBe(7);
    let tests = 0, failures = 0;
    for (const suite of suites) {
      const cases = suite.querySelectorAll('testcase');
      expect(Number(suite.getAttribute('tests'))).toBe(cases.length);
      expect(Number(suite.getAttribute('failures'))).toBe(suite.querySelectorAll('testcase > failure').length);
      tests += cases.length;
      failures += suite.querySelectorAll('failure').length;
    }
    expect(Number(root.getAttribute('tests'))).toBe(tests);
    expect(Number(root.getAttribute('failures'))).toBe(failures);
    const contrast = suites.find((x) => x.getAttribute('name')!.startsWith(site.url('/contrast.html')))!;
    expect(contrast.querySelector('testcase[name^="color-contrast"] > failure')?.textContent).toContain('.faint');
    expect(suites.find((x) => x.getAttribute('name') === site.url('/x'))!.querySelector('error')?.getAttribute('type')).toBe('page-error');
  });

  it('`pactum scan` scans through the server, writes the export, and fails on errors', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'pactum-scan-')), 'report.junit.xml');
    const failing = await pactum(['scan', site.url('/contrast.html'), '--mode', 'single', '--format', 'junit', '--output', out], { PACTUM_SERVER: s.url, PACTUM_TOKEN: token });
    expect(failing.code, failing.stderr).toBe(1);
    expect(failing.stdout).toMatch(/1 pages checked; [1-9]\d* errors/);
    expect(failing.stdout).toMatch(/error\s+color-contrast: 2 on 1 page/);
    expect(failing.stderr).toMatch(/^completed: 1 of 1 pages/m); // plain lines when not on a terminal
    expect(failing.stderr).toMatch(/failing: \d+ issues? at or above error/);
    expect(readFileSync(out, 'utf8')).toMatch(/^<\?xml[\s\S]*<testsuites /);
    const passing = await pactum(['scan', site.url('/contrast.html'), '--server', s.url, '--token', token, '--mode', 'single', '--fail-on', 'none'], {});
    expect(passing.code, passing.stderr).toBe(0);
    const usage = await pactum(['scan', site.url('/'), '--server', s.url], { PACTUM_TOKEN: '' });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/no token/);
  }, 120_000);

  it('exports CSV, one row per issue, RFC 4180 quoting', async () => {
    const res = await get(`/reports/${scanId}.csv`, bearer(token));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = parseCsv(text);
    expect(rows[0]).toEqual(['page_url', 'rule', 'type', 'impact', 'wcag_criteria', 'level', 'selector', 'message', 'context', 'help_url', 'contrast_ratio', 'required_ratio', 'en301549', 'apca_lc', 'apca_threshold', 'fingerprint', 'status', 'mark_note']);
    const app = ok(await call('dashboard_get_report', { scanId, view: 'app' })).app;
    expect(rows.length - 1).toBe(app.summary.totalIssues + app.summary.pagesFailed);
    const faint = rows.find((r) => r[1] === 'color-contrast' && r[6] === '.faint')!;
    expect(faint.slice(10, 15)).toEqual(['1.91', '4.5', '9.1.4.3', String(Math.round(apcaLc('#bbbbbb', '#ffffff')! * 10) / 10), '75']);
    expect(faint.slice(15)).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/), 'open', '']);
    expect(faint[8]).toBe('<p class="faint">This light grey text is hard to read.</p>');
  });
});

describe('the trend of a site\'s open findings', () => {
  type ByLevel = { error: number; warning: number; notice: number };
  let changing: ChangingSite;
  const runs: string[] = [];
  /** The table's rows as each run should read: its issues by level, less the false positive among its errors. */
  let expected: string[];

  beforeAll(async () => {
    changing = await startChangingSite({ '/': imagesPage(2) });
    for (const version of [2, 1, 0]) {
      changing.pages.set('/', imagesPage(version));
      const id = ok(await call('dashboard_scan_site', { siteUrl: changing.url('/'), scanMode: 'single' })).scanId as string;
      for (let i = 0; i < 2400; i++) {
        if (ok(await call('dashboard_get_scan_progress', { scanId: id })).finished) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      runs.push(id);
    }
    const { findings } = ok(await call('dashboard_list_findings', { scanId: runs[2], type: 'error' })) as { findings: { fingerprint: string; issue: { code: string; context: string } }[] };
    const kept = findings.find((f) => f.issue.code === 'image-alt' && f.issue.context.includes('id="img0"'))!;
    ok(await call('dashboard_mark_finding', { scanId: runs[2], fingerprint: kept.fingerprint, mark: 'false_positive', reason: 'A spacer image the template hides' }));
    expected = [];
    for (const id of runs) {
      const t = ok(await call('dashboard_get_report', { scanId: id, view: 'app' })).app.summary.byLevel as ByLevel;
      expected.push(`${t.error - 1} ${t.warning} ${t.notice}`);
    }
    // The page lost an image without alt text at each run.
    expect(expected.map((row) => Number(row.split(' ')[0]))).toEqual([2, 1, 0].map((n) => Number(expected[2]!.split(' ')[0]) + n));
  }, 120_000);
  afterAll(() => changing?.close());

  /** The trend table's rows, numbers only, and the chart's labels. */
  const readChart = (doc: Page | Frame) => doc.evaluate(() => ({
    rows: [...document.querySelectorAll('table.trend tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent).join(' ')),
    labels: [...document.querySelectorAll('.trend-legend li')].map((li) => li.textContent),
    name: document.getElementById('trend-title')?.textContent,
    role: document.querySelector('svg.trend-chart')?.getAttribute('role'),
    markers: document.querySelectorAll('svg.trend-chart .mark').length,
  }));

  it('on the report page: the chart and its table, no request beyond the page, no policy violated, and pactum\'s own scan finds nothing', async () => {
    const cookie = await login('rita', 'rita-password-123');
    const page = await browser.newPage();
    await page.context().addCookies([{ name: 'session', value: cookie.split('=')[1]!, url: s.url }]);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) => ((window as unknown as { violations: string[] }).violations ??= []).push(`${e.violatedDirective} ${e.blockedURI}`)));
    await page.goto(`${s.url}/reports/${runs[2]}`);
    await page.waitForSelector('svg.trend-chart');
    await page.locator('details summary', { hasText: 'The trend as a table' }).click();
    expect(await page.locator('table.trend').isVisible()).toBe(true);
    const chart = await readChart(page);
    expect(chart).toMatchObject({ rows: expected, role: 'img', name: 'Open findings per run, by level', markers: 9 });
    expect(chart.labels).toEqual(['Errors', 'Need review', 'Notices'].map((name, n) => expect.stringMatching(new RegExp(`^ ${name} \\([a-z, ]+\\): ${expected[2]!.split(' ')[n]} in this run$`))));
    expect(await page.evaluate(() => document.querySelector('svg.trend-chart')!.getBoundingClientRect().height)).toBeGreaterThan(100);
    expect(await page.evaluate(() => (window as unknown as { violations?: string[] }).violations ?? [])).toEqual([]);
    expect(requests).toEqual([`${s.url}/reports/${runs[2]}`]);

    // The page as drawn, chart and open table, passes pactum's own Chromium scan.
    const rendered = await page.evaluate(() => `<!doctype html>${document.documentElement.outerHTML}`);
    const served = await serveOnce(rendered.replace(/<script[\s\S]*?<\/script>/g, ''));
    const checked = ok(await call('dashboard_scan_page', { url: served.url }));
    served.close();
    expect(checked.issues.map((i: { code: string; selector: string; message: string }) => `${i.code}@${i.selector}: ${i.message}`).join('\n')).toBe('');
    await page.close();
  }, 120_000);

  it('in the MCP App: the same chart and table, and the frame fetches nothing', async () => {
    const view = (await client.readResource({ uri: 'ui://pactum/report' })).contents[0] as { text: string };
    const result = await call('dashboard_get_report', { scanId: runs[2], view: 'app' });
    const page = await hostPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.evaluate(([html, r]) => window.startView(html, r as never, 'light'), [view.text, result] as const);
    const frame = await viewFrame(page);
    await frame.waitForSelector('svg.trend-chart');
    const chart = await readChart(frame);
    expect(chart).toMatchObject({ rows: expected, role: 'img', name: 'Open findings per run, by level', markers: 9 });
    expect(requests.filter((u) => /^https?:/.test(u))).toEqual([]);
    await page.close();
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------

let hostScript: Promise<string> | null = null;

async function hostPage(): Promise<Page> {
  hostScript ??= esbuild.build({ entryPoints: ['test/helpers/app-host.browser.ts'], bundle: true, format: 'iife', write: false, logLevel: 'silent' }).then((r) => r.outputFiles[0]!.text);
  const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
  await page.exposeFunction('pactumCallTool', (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }));
  await page.setContent(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A chat</title>
<style>body{font-family:system-ui,sans-serif;background:#eef0f3;margin:0;padding:16px}.msg{max-width:760px;margin:8px auto;padding:10px 14px;border-radius:12px}.user{background:#dbe7ff;margin-right:0}.bot{background:#fff}iframe{width:100%;border:1px solid #ccd;border-radius:8px;height:700px;background:#fff}</style></head>
<body><div class="msg user">How accessible is ${site.origin}? Show me the report.</div>
<div class="msg bot"><p>I scanned ${site.origin} with pactum (WCAG 2.2 AA, Chromium). Here is the report:</p><div id="view"></div></div>
<script>${await hostScript}</script></body></html>`);
  return page;
}

async function viewFrame(page: Page): Promise<Frame> {
  for (let i = 0; i < 200; i++) {
    const frame = page.frames().find((f) => f !== page.mainFrame());
    if (frame) return frame;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the view frame did not appear');
}

async function serveOnce(html: string): Promise<{ url: string; close(): void }> {
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/view.html`, close: () => server.close() };
}

if (writeImages) mkdirSync('docs/images', { recursive: true });
