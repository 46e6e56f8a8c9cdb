/**
 * The MCP resources and prompts as clients of both revisions use them: the v2 SDK Client pinned
 * to 2026-07-28 and the v1 SDK Client at 2025-11-25 list and read the wcag:// criteria, read a
 * scan's report through the template and the org's open findings, and get each prompt with its
 * arguments filled into the tool calls. Another org's report is not found.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client as Client2026, StreamableHTTPClientTransport as Transport2026 } from '@modelcontextprotocol/client';
import type { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { insertOrg } from '../../src/db/users.js';

const MODERN = '2026-07-28';

let s: TestServer;
let site: FixtureSite;
let modern: Client2026;
let legacy: Client2025;
let globex: Client2025;
let scanId: string;

beforeAll(async () => {
  site = await startFixtureSite(0);
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' });
  const acme = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  const other = (await insertOrg(s.services.db, { name: 'Globex', slug: 'globex' })).id;
  const token = await s.token({ sub: 'svc_acme_admin', orgId: acme, role: 'org_admin', perms: [] });
  modern = new Client2026({ name: 'pactum-tests-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await modern.connect(new Transport2026(new URL(`${s.url}/api/v1/mcp`), { requestInit: { headers: bearer(token) } }));
  legacy = await mcpClient(s.url, bearer(token));
  globex = await mcpClient(s.url, bearer(await s.token({ sub: 'svc_globex_admin', orgId: other, role: 'org_admin', perms: [] })));
  scanId = ok(await legacy.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'single' } })).scanId;
  for (let i = 0; i < 600; i++) {
    if (ok(await legacy.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId } })).finished) break;
    await new Promise((r) => setTimeout(r, 50));
  }
}, 120_000);
afterAll(async () => {
  await modern?.close();
  await legacy?.close();
  await globex?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

const text = (read: { contents: unknown[] }) => JSON.parse((read.contents[0] as { text: string }).text);

describe('wcag:// resources', () => {
  it('lists every criterion and reads one, with its EN 301 549 clause, under 2026-07-28', async () => {
    const { resources } = await modern.listResources();
    const wcag = resources.filter((r) => r.uri.startsWith('wcag://'));
    expect(wcag).toHaveLength(87);
    expect(wcag).toContainEqual(expect.objectContaining({ uri: 'wcag://criterion/1.4.3', mimeType: 'application/json', title: '1.4.3 Contrast (Minimum) (level AA)' }));
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['ui://pactum/report', 'pactum://findings/open']));
    const read = await modern.readResource({ uri: 'wcag://criterion/1.4.3' });
    expect(read).toMatchObject({ ttlMs: 300_000, cacheScope: 'public' });
    expect(text(read)).toMatchObject({ id: '1.4.3', title: 'Contrast (Minimum)', level: 'AA', en301549: '9.1.4.3' });
    expect(text(await modern.readResource({ uri: 'wcag://criterion/2.5.8' }))).toMatchObject({ id: '2.5.8', en301549: null });
  });

  it('lists the templates and reads the same criterion under 2025-11-25', async () => {
    const { resourceTemplates } = await legacy.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(['pactum://acr/{scanId}', 'pactum://reports/{scanId}', 'wcag://criterion/{id}']);
    expect((await legacy.listResources()).resources.filter((r) => r.uri.startsWith('wcag://'))).toHaveLength(87);
    expect(text(await legacy.readResource({ uri: 'wcag://criterion/1.1.1' }))).toMatchObject({ id: '1.1.1', en301549: '9.1.1.1' });
  });

  it('answers a criterion that does not exist as not found (-32602)', async () => {
    await expect(legacy.readResource({ uri: 'wcag://criterion/9.9.9' })).rejects.toMatchObject({ code: -32602 });
    await expect(modern.readResource({ uri: 'wcag://criterion/9.9.9' })).rejects.toThrow(/not found/i);
  });
});

describe('report and findings resources', () => {
  it('reads a report of the caller\'s org through the template, private to the caller', async () => {
    const read = await modern.readResource({ uri: `pactum://reports/${scanId}` });
    expect(read).toMatchObject({ ttlMs: 30_000, cacheScope: 'private' });
    const digest = text(read);
    expect(digest.scanId).toBe(scanId);
    expect(digest.digest.rules.map((r: { code: string }) => r.code)).toContain('image-alt');
    expect(text(await legacy.readResource({ uri: `pactum://reports/${scanId}` })).scanId).toBe(scanId);
  });

  it('answers another org\'s report as not found, under either revision', async () => {
    await expect(globex.readResource({ uri: `pactum://reports/${scanId}` })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/not found/i) });
    await expect(globex.readResource({ uri: 'pactum://reports/scn_00000000000000000000000000' })).rejects.toMatchObject({ code: -32602 });
  });

  it('lists the org\'s open findings, each with its EN 301 549 clause; another org sees none of them', async () => {
    const findings = text(await modern.readResource({ uri: 'pactum://findings/open' }));
    expect(findings.sites).toHaveLength(1);
    expect(findings.sites[0]).toMatchObject({ scanId, siteUrl: site.url('/') });
    const imageAlt = findings.sites[0].issues.find((i: { code: string }) => i.code === 'image-alt');
    expect(imageAlt).toMatchObject({ wcagCriterion: '1.1.1', en301549: '9.1.1.1' });
    expect(text(await globex.readResource({ uri: 'pactum://findings/open' }))).toEqual({ sites: [] });
  });
});

describe('prompts', () => {
  it('lists the three prompts with their arguments, under either revision', async () => {
    const listed = await modern.listPrompts();
    expect(listed).toMatchObject({ ttlMs: 300_000, cacheScope: 'public' });
    const { prompts } = listed;
    expect(prompts.map((p) => [p.name, p.title])).toEqual([['audit_site', 'Audit a site'], ['verify_fixes', 'Verify my fixes'], ['prepare_acr', 'Prepare an ACR']]);
    expect(prompts.find((p) => p.name === 'audit_site')!.arguments).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'siteUrl', required: true })]));
    expect((await legacy.listPrompts()).prompts.map((p) => p.name)).toEqual(['audit_site', 'verify_fixes', 'prepare_acr']);
  });

  it('audit a site: the scan call with the site filled in', async () => {
    const got = await modern.getPrompt({ name: 'audit_site', arguments: { siteUrl: 'https://www.example.com/', maxPages: '10' } });
    const body = (got.messages[0]!.content as { text: string }).text;
    expect(body).toContain('dashboard_scan_site {"siteUrl":"https://www.example.com/","scanMode":"site","maxPages":10,"standard":"WCAG2AA"}');
    expect(body).toContain('dashboard_get_report');
  });

  it('verify my fixes: a rescan by dashboard_verify_fixes, then the comparison, with the arguments filled in', async () => {
    const got = await legacy.getPrompt({ name: 'verify_fixes', arguments: { scanId, pageUrl: 'https://www.example.com/form.html' } });
    const body = (got.messages[0]!.content as { text: string }).text;
    expect(body).toContain(`dashboard_verify_fixes {"scanId":"${scanId}","pages":["https://www.example.com/form.html"]}`);
    expect(body).toContain(`dashboard_verify_fixes {"scanId":"${scanId}","againstScanId":"<that scanId>"}`);
    const whole = (await modern.getPrompt({ name: 'verify_fixes', arguments: { scanId } })).messages[0]!.content as { text: string };
    expect(whole.text).toContain(`dashboard_verify_fixes {"scanId":"${scanId}"}`);
  });

  it('prepare an ACR: the ACR tool, the marks and the reviewer\'s assessments, and the honest levels', async () => {
    const got = await modern.getPrompt({ name: 'prepare_acr', arguments: { scanId, productName: 'Acme shop' } });
    const body = (got.messages[0]!.content as { text: string }).text;
    expect(body).toContain('Acme shop');
    expect(body).toContain(`dashboard_get_acr {"scanId":"${scanId}"}`);
    expect(body).toContain(`pactum://acr/${scanId}`);
    expect(body).toContain(`dashboard_assess_criterion {"scanId":"${scanId}","criterion":"<the criterion>"`);
    expect(body).toContain('dashboard_mark_finding');
    expect(body).toMatch(/Not Evaluated for every criterion no check covers/);
    expect(body).toMatch(/never by default/);
  });

  it('refuses a prompt whose arguments do not fit, and an unknown prompt, with -32602', async () => {
    await expect(legacy.getPrompt({ name: 'audit_site', arguments: { siteUrl: 'not a url' } })).rejects.toMatchObject({ code: -32602 });
    await expect(legacy.getPrompt({ name: 'prepare_acr', arguments: { scanId: 'x', productName: 'p' } })).rejects.toMatchObject({ code: -32602 });
    await expect(legacy.getPrompt({ name: 'nope' })).rejects.toMatchObject({ code: -32602 });
  });
});
