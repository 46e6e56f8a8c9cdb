/**
 * /docs in a real browser (Debian's chromium, headless, as .ci/run installs it): Swagger UI renders
 * the served specs with this server in `servers` and without the red "jsonSchemaDialect" warning
 * it shows for the specs as they are in specs/ (checked too, so this test can tell the two apart).
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
