/**
 * /docs in a real browser (Debian's chromium, headless, as .ci/run installs it): Swagger UI renders
 * the served specs with this server in `servers` and without the red "jsonSchemaDialect" warning
 * it shows for the specs as they are in specs/ (checked too, so this test can tell the two apart).
 * The pages' Content-Security-Policy is enough for them (no violation reported while they render)
 * and keeps them out of frames on other sites.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_FLAGS } from '../../src/domain/scan/chromium/engine.js';
import { requireChromium } from '../helpers/chromium.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The page's DOM once its scripts ran (Swagger UI fetches and renders the spec). */
async function renderedDom(url: string): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), 'pactum-chromium-'));
  try {
    const { stdout } = await promisify(execFile)(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, '--virtual-time-budget=20000', '--dump-dom', url], { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
    return stdout;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe('the documentation page in Chromium', () => {
  it('renders the dashboard spec with this server in servers, and no jsonSchemaDialect warning', async () => {
    const dom = await renderedDom(`${s.url}/docs`);
    expect(dom).toContain('Dashboard MCP endpoint');
    expect(dom).toMatch(new RegExp(`<option value="${s.url}">${s.url} - This server\\.`));
    expect(dom).not.toContain('jsonSchemaDialect');
    expect(dom).not.toContain('127.0.0.1:8080');
  }, 150_000);

  it('would show the warning for the spec as it is in specs/ (the check above can fail)', async () => {
    // The same page, given the bundled contract itself through a data: URL of the spec.
    const raw = await (await fetch(`${s.url}/docs/openapi/dashboard-mcp`)).json();
    const { loadBundledSpec } = await import('../../src/spec/documents.js');
    const contract = loadBundledSpec('dashboard');
    expect(raw).not.toHaveProperty('jsonSchemaDialect');
    expect(contract).toHaveProperty('jsonSchemaDialect');
    // A page of its own, on a port of its own, that hands Swagger UI the contract unchanged.
    const page = `<!doctype html><html><head><link rel="stylesheet" href="${s.url}/docs/assets/swagger-ui.css"></head><body><div id="ui"></div>
<script src="${s.url}/docs/assets/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: 'contract.json', dom_id: '#ui' });</script></body></html>`;
    const side = createServer((req, res) => {
      const json = req.url === '/contract.json';
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'text/html' });
      res.end(json ? JSON.stringify(contract) : page);
    });
    await new Promise<void>((r) => side.listen(0, '127.0.0.1', r));
    let dom: string;
    try {
      dom = await renderedDom(`http://127.0.0.1:${(side.address() as AddressInfo).port}/`);
    } finally {
      side.close();
    }
    expect(dom).toContain('Dashboard');
    expect(dom).toContain('jsonSchemaDialect');
  }, 150_000);
});

describe('the pages under their Content-Security-Policy', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: requireChromium(), args: [...CHROMIUM_FLAGS] });
  }, 60_000);
  afterAll(() => browser?.close());

  /** Every console message of `page` from now on. */
  function consoleOf(page: Page): string[] {
    const messages: string[] = [];
    page.on('console', (m) => messages.push(m.text()));
    page.on('pageerror', (e) => messages.push(e.message));
    return messages;
  }

  it.each([
    ['/docs', '.swagger-ui .opblock-tag', 'Dashboard MCP endpoint'],
    ['/', 'h1', 'pactum'],
  ])('%s renders with no Content-Security-Policy violation', async (path, rendered, text) => {
    const page = await browser.newPage();
    const messages = consoleOf(page);
    const violations: string[] = [];
    await page.exposeFunction('reportViolation', (v: string) => void violations.push(v));
    // Listens from the first script on, in the page's own world, which the policy does not govern.
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => void (window as unknown as { reportViolation: (v: string) => void }).reportViolation(`${e.violatedDirective} ${e.blockedURI}`));
    });
    const res = await page.goto(`${s.url}${path}`);
    expect(res?.headers()['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    await page.waitForSelector(rendered, { timeout: 60_000 });
    expect(await page.content()).toContain(text);
    expect(violations).toEqual([]);
    expect(messages.filter((m) => /Content Security Policy/i.test(m))).toEqual([]);
    await page.close();
  }, 120_000);

  it('is not shown in a frame of another site', async () => {
    const framer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><iframe src="${s.url}/docs"></iframe>`));
    await new Promise<void>((r) => framer.listen(0, '127.0.0.1', r));
    const page = await browser.newPage();
    const messages = consoleOf(page);
    try {
      // localhost: another site than the server's 127.0.0.1.
      await page.goto(`http://localhost:${(framer.address() as AddressInfo).port}/`);
      await expect.poll(() => messages.some((m) => m.includes("frame-ancestors 'none'")), { timeout: 30_000 }).toBe(true);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      expect(frame?.url()).not.toContain(s.url);
    } finally {
      await page.close();
      framer.close();
    }
  }, 120_000);
});
