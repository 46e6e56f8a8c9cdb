/**
 * docs/mcp.md's "Connect your MCP client", verbatim, with the MCP Inspector's web UI: pactum
 * runs with nothing but OAUTH_DCR=true, the Inspector's web UI runs beside it, and headless
 * Chromium enters the server URL, presses Connect, and follows the Inspector through OAuth
 * discovery, registration, pactum's sign-in and consent pages and back, to the list of tools.
 * No token is pasted anywhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHROMIUM_FLAGS } from '../../src/domain/scan/chromium/engine.js';
import { requireChromium } from '../helpers/chromium.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { userWithPassword } from '../helpers/oauth.js';

const launcher = fileURLToPath(import.meta.resolve('@modelcontextprotocol/inspector/package.json')).replace(/package\.json$/, 'clients/launcher/build/index.js');

let s: TestServer;
let inspector: ChildProcess;
let inspectorUrl: string;
let browser: Browser;
let home: string;
const output: string[] = [];

const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  s = await startTestServer({ OAUTH_DCR: 'true' });
  await userWithPassword(s.services.db, { org: 'acme', username: 'ada', password: 'ada-password-123' });
  home = mkdtempSync(join(tmpdir(), 'pactum-inspector-'));
  const [port, sandbox, appOrigin] = [await freePort(), await freePort(), await freePort()];
  inspector = spawn(process.execPath, [launcher, '--web'], {
    env: {
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      HOME: home,
      CLIENT_PORT: String(port),
      MCP_SANDBOX_PORT: String(sandbox),
      MCP_APP_ORIGIN_PORT: String(appOrigin),
      MCP_AUTO_OPEN_ENABLED: 'false',
      MCP_STORAGE_DIR: join(home, 'storage'),
      MCP_INSPECTOR_SECRET_STORE: 'memory',
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  inspectorUrl = await new Promise<string>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output.push(String(chunk));
      const m = /running at:\s+(\S+)/.exec(output.join(''));
      if (m) resolve(m[1]!);
    };
    inspector.stdout!.on('data', seen);
    inspector.stderr!.on('data', (c: Buffer) => output.push(String(c)));
    inspector.once('exit', (code) => reject(new Error(`the Inspector exited (${code}): ${output.join('')}`)));
  });
  browser = await chromium.launch({ executablePath: requireChromium(), args: [...CHROMIUM_FLAGS, '--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  inspector?.kill('SIGTERM');
  await s?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** The Inspector's web UI, in Chromium, as a person uses it: the page it printed, with its own API token. */
it('connects with OAuth, signs in on pactum, and lists the tools', async () => {
  const page = await browser.newPage();
  await page.goto(inspectorUrl);
  // Add the server by its URL, as docs/mcp.md says.
  await page.getByRole('button', { name: 'Add Servers' }).click();
  await page.getByRole('menuitem', { name: 'Add manually' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Server ID').fill('pactum');
  await dialog.getByRole('textbox', { name: 'Transport' }).click();
  await page.getByRole('option', { name: 'streamable-http' }).click();
  await dialog.getByLabel('URL').fill(`${s.url}/api/v1/mcp`);
  await dialog.getByRole('button', { name: 'Add' }).click();
  // Connect: pactum answers 401, the Inspector discovers, registers, and sends the browser to pactum.
  await dialog.waitFor({ state: 'hidden' });
  // Mantine's switch: the input itself is visually hidden under its track.
  await page.getByRole('switch', { name: 'Connect or disconnect "pactum"' }).check({ force: true });
  await page.waitForSelector('h1:text("Sign in to pactum")', { timeout: 30_000 }).catch(async (err: unknown) => {
    // What the Inspector shows, and what pactum answered, say why it did not get there.
    const answered = s.logLines.filter((l) => l.includes('"msg":"request"')).map((l) => { const j = JSON.parse(l) as { method: string; path: string; status: number }; return `${j.method} ${j.path} ${j.status}`; });
    throw new Error(`${(err as Error).message}\n${page.url()}\n${await page.locator('body').innerText()}\n${answered.join('\n')}\n${output.join('')}`);
  });
  const authorize = new URL(page.url());
  expect(authorize.origin).toBe(s.url);
  expect(await page.locator('main').innerText()).toContain('MCP Inspector asks to use pactum for you');
  await page.getByLabel('Username').fill('ada');
  await page.getByLabel('Password').fill('ada-password-123');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForSelector('h1:text("Allow access?")');
  const consent = await page.locator('main').innerText();
  expect(consent).toContain('reports.view');
  // The Inspector asks for every scope of the metadata; ada's role (member) holds no admin one.
  expect(consent).toMatch(/admin\.system/);
  await page.getByRole('button', { name: 'Allow' }).click();
  // Back in the Inspector, connected with the token it got.
  await page.waitForURL((u) => u.origin === new URL(inspectorUrl).origin, { timeout: 30_000 });
  await page.getByText('Authorization complete').waitFor({ timeout: 30_000 });
  await page.getByText('Connected').first().waitFor();
  await page.getByText('Tools', { exact: true }).first().click();
  await page.getByText('dashboard_list_reports').first().waitFor({ timeout: 30_000 });
  const shown = await page.locator('body').innerText();
  expect(shown).toContain('dashboard_get_report');
  // Only what ada's role holds: no tool of an administrator.
  expect(shown).not.toContain('dashboard_create_org');
  // pactum saw one grant for ada, to the client the Inspector registered, with her scopes only.
  const grants = await s.services.db('oauth_models').where({ model: 'Grant' });
  expect(grants).toHaveLength(1);
  const grant = JSON.parse(String(grants[0].payload)) as { accountId: string; clientId: string; resources: Record<string, string> };
  expect(grant.resources[`${s.url}/api/v1/mcp`]!.split(' ')).toContain('reports.view');
  expect(grant.resources[`${s.url}/api/v1/mcp`]).not.toContain('admin');
  const client = await s.services.db('oauth_models').where({ model: 'Client', id: grant.clientId }).first();
  expect(JSON.parse(String(client.payload))).toMatchObject({ client_name: expect.stringContaining('Inspector'), redirect_uris: [`${new URL(inspectorUrl).origin}/oauth/callback`] });
  // What the Inspector (as a client) sent pactum, in order: the steps of the MCP authorization flow.
  const flow = s.logLines
    .map((l) => JSON.parse(l) as { msg?: string; method: string; path: string; status: number })
    .filter((j) => j.msg === 'request' && !j.path.startsWith('/docs/') && j.path !== '/favicon.ico')
    .map((j) => `${j.method} ${j.path.replace(/\/oauth\/(interaction|authorize)\/[^/]+/, '/oauth/$1/{uid}')} ${j.status}`);
  expect(flow.slice(0, 14)).toEqual([
    'POST /api/v1/mcp 401',
    'GET /.well-known/oauth-protected-resource 200',
    'GET /.well-known/openid-configuration 200',
    'POST /oauth/register 201',
    'GET /oauth/authorize 303',
    'GET /oauth/interaction/{uid} 200',
    'POST /oauth/interaction/{uid}/sign-in 303',
    'GET /oauth/authorize/{uid} 303',
    'GET /oauth/interaction/{uid} 200',
    'POST /oauth/interaction/{uid}/consent 303',
    'GET /oauth/authorize/{uid} 303',
    'POST /oauth/token 200',
    'POST /api/v1/mcp 200',
    'POST /api/v1/mcp 202',
  ]);
  s.expectConformant();
}, 180_000);
