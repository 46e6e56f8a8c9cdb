/**
 * An MCP client signs in by itself: the MCP SDK's own OAuth support (the v1 Client with an
 * OAuthClientProvider) meets a fresh server with no token, follows the 401 to the protected
 * resource metadata and the authorization server's metadata, identifies itself with a Client ID
 * Metadata Document served over HTTPS by a server of the test's, and opens the authorization URL
 * in headless Chromium, where a person signs in and allows it using only the keyboard. Then the
 * client lists the tools and calls one with the token it got, refreshes it, and is refused once
 * its grant is revoked.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { CHROMIUM_FLAGS } from '../../src/domain/scan/chromium/engine.js';
import { requireChromium } from '../helpers/chromium.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { MemoryOAuthProvider, clientDocument, startCallback, startMetadataHost, userWithPassword, type MetadataHost } from '../helpers/oauth.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's WCAG 2.x A and AA violations of the page as it is (evaluated past the page's CSP, as a tool does). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const { axe } = window as unknown as { axe: { run(o: object): Promise<{ violations: { id: string; nodes: unknown[] }[] }> } };
    const r = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } });
    return r.violations.map((v) => `${v.id} (${v.nodes.length})`);
  });
}

let s: TestServer;
let host: MetadataHost;
let callback: Awaited<ReturnType<typeof startCallback>>;
let browser: Browser;
/** The sign-in and consent pages as a person saw them, for pactum's own scan. */
const shownPages: { name: string; html: string }[] = [];

beforeAll(async () => {
  host = await startMetadataHost();
  callback = await startCallback();
  // The metadata host is on loopback: the operator's setting for outbound calls lets it through.
  // Its scans run in Chromium and may reach loopback: the pages a person saw are scanned at the end.
  s = await startTestServer({
    OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', OAUTH_CLIENT_METADATA_CA_FILE: host.caFile,
    SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium', CHROMIUM_PATH: requireChromium(),
  });
  await userWithPassword(s.services.db, { org: 'acme', username: 'ada', password: 'ada-password-123' });
  browser = await chromium.launch({ executablePath: requireChromium(), args: [...CHROMIUM_FLAGS, '--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await host?.close();
  await callback?.close();
});

/** Signs in and allows the client, keyboard only, as a person would in the browser the client opened. */
async function signInAndAllow(page: Page, url: URL): Promise<URLSearchParams> {
  const back = callback.next();
  const shown = await page.goto(url.href);
  expect(await page.locator('h1').textContent()).toBe('Sign in to pactum');
  // The page's own policy: forms may post here and be followed back to the client, nothing inline.
  const csp = shown!.headers()['content-security-policy']!;
  expect(csp).toContain(`form-action 'self' ${new URL(callback.url).origin}`);
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(await axeViolations(page)).toEqual([]);
  shownPages.push({ name: 'sign-in', html: await page.content() });
  expect(await page.content()).toContain('Test MCP client');
  // The username field has the focus; Tab leads to the password, Enter sends the form.
  await page.keyboard.type('ada');
  await page.keyboard.press('Tab');
  await page.keyboard.type('ada-password-123');
  await page.keyboard.press('Enter');
  await page.waitForSelector('h1:text("Allow access?")');
  const consent = await page.locator('main').textContent();
  expect(consent).toContain('acme team');
  expect(consent).toContain('not verified');
  expect(consent).toContain('reports.view');
  expect(await axeViolations(page)).toEqual([]);
  shownPages.push({ name: 'consent', html: await page.content() });
  // Tab to the Allow button (the first control of the page), Enter.
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(() => document.activeElement?.textContent)) === 'Allow') break;
  }
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Allow');
  await page.keyboard.press('Enter');
  return back;
}

describe('an MCP client signs in by itself with a Client ID Metadata Document', () => {
  it('discovers, signs in in the browser, lists and calls tools, refreshes, and is refused once revoked', async () => {
    const clientId = `${host.url}/clients/test.json`;
    host.documents.set('/clients/test.json', clientDocument(clientId, callback.url));
    const auth = new MemoryOAuthProvider(callback.url, clientId);
    const mcpUrl = new URL(`${s.url}/api/v1/mcp`);

    const first = new Client({ name: 'oauth-test', version: '1.0.0' });
    await expect(first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth }))).rejects.toThrow(UnauthorizedError);
    const authorizationUrl = auth.authorizationUrl!;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${s.url}/oauth/authorize`);
    expect(authorizationUrl.searchParams.get('client_id')).toBe(clientId);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl.href);

    const page = await browser.newPage();
    const answer = await signInAndAllow(page, authorizationUrl);
    await page.close();
    expect(answer.get('iss')).toBe(s.url);
    const code = answer.get('code')!;
    expect(code).toBeTruthy();
    expect(host.fetched).toContain('/clients/test.json');

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: auth });
    await transport.finishAuth(code);
    expect(auth.saved?.access_token).toBeTruthy();
    expect(auth.saved?.refresh_token).toBeTruthy();
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(transport);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('dashboard_list_reports');
    const listed = await client.callTool({ name: 'dashboard_list_reports', arguments: {} });
    expect(listed.isError).toBeFalsy();
    // The member's role holds no admin permission, whatever the client asked for.
    const admin = await client.callTool({ name: 'dashboard_list_users', arguments: {} });
    expect(admin.isError).toBe(true);
    await client.close();

    // A refresh: a new access token and a new refresh token; the spent one is refused.
    const spent = auth.saved!.refresh_token!;
    const refreshed = await fetch(`${s.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: spent, client_id: clientId, resource: mcpUrl.href }),
    });
    expect(refreshed.status).toBe(200);
    const fresh = (await refreshed.json()) as { access_token: string; refresh_token: string };
    expect(fresh.refresh_token).not.toBe(spent);
    const call = (token: string) =>
      fetch(mcpUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await call(fresh.access_token)).status).toBe(200);

    // The spent refresh token presented again: refused, and the whole grant ends with it.
    const replay = await fetch(`${s.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: spent, client_id: clientId }),
    });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe('invalid_grant');
    const revoked = await call(fresh.access_token);
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get('www-authenticate')).toContain('resource_metadata=');
    s.expectConformant();
  }, 120_000);
});

describe('the sign-in and consent pages', () => {
  it("pass pactum's own Chromium scan with no error, as a person saw them", async () => {
    expect(shownPages.map((p) => p.name)).toEqual(expect.arrayContaining(['sign-in', 'consent']));
    // Served as they were shown (their stylesheet and script still from pactum), each scanned like any page.
    const base = `<base href="${s.url}/">`;
    const pages = new Map(shownPages.map((p) => [`/${p.name}.html`, p.html.replace(/<head>/i, `<head>${base}`)]));
    // A control: the sign-in page with its username field's label taken away, which the scan must report.
    const control = pages.get('/sign-in.html')!.replace(/<label[^>]*for="username"[^>]*>[\s\S]*?<\/label>/i, '');
    expect(control).not.toBe(pages.get('/sign-in.html'));
    pages.set('/control.html', control);
    const site: Server = createServer((req, res) => {
      const html = pages.get(req.url ?? '');
      if (html) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
    const { org } = await userWithPassword(s.services.db, { org: 'audit', username: 'auditor', password: 'auditor-password-1' });
    const client = await mcpClient(s.url, bearer(await s.token({ orgId: org.id, perms: ['scans.create', 'reports.view'] })));
    try {
      for (const name of pages.keys()) {
        const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}${name}`;
        const scanId = ok(await client.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: url, scanMode: 'single' } })).scanId;
        let progress: { finished: boolean; status: string } = { finished: false, status: '' };
        for (let i = 0; i < 1200 && !progress.finished; i++) {
          await new Promise((r) => setTimeout(r, 50));
          progress = ok(await client.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId } }));
        }
        expect(progress.status, name).toBe('completed');
        const report = ok(await client.callTool({ name: 'dashboard_get_report', arguments: { scanId } })).report;
        expect(report.engine).toBe('chromium');
        const errors = report.pages.flatMap((p: { issues: { type: string; code: string }[] }) => p.issues).filter((i: { type: string }) => i.type === 'error');
        expect(report.summary).toMatchObject({ pagesScanned: 1, pagesFailed: 0 });
        if (name === '/control.html') expect(errors.map((e: { code: string }) => e.code)).toContain('label');
        else expect(errors.map((e: { code: string }) => e.code), name).toEqual([]);
      }
    } finally {
      await client.close();
      await new Promise((r) => site.close(r));
    }
  }, 120_000);
});
