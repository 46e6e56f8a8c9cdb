/**
 * dashboard_scan_page takes turns for the browser's page slots like the site scans' pages do: one
 * org's slow one-page scans hold at most its share of the slots (SCAN_PAGE_SLOTS_PER_ORG), so
 * another org's call is checked at once and answers before any of them; past
 * SCAN_PAGE_MAX_QUEUED_PER_ORG waiting calls the org is refused with rate_limited; and a waiting
 * call whose client goes away leaves the queue. Assertions are on the order of the answers and on
 * counts, never on durations.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, failure, mcpClient, ok } from '../helpers/mcp.js';
import { requireChromium } from '../helpers/chromium.js';
import { insertOrg } from '../../src/db/users.js';

/** A site with a slow page (its image is held until the test lets it go) and a quick one. */
const held = new Set<ServerResponse>();
let holding = true;
const seen: string[] = [];
let site: Server;
let origin = '';
const page = (title: string, body: string) => `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;

function release() {
  holding = false;
  for (const res of held) res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(8));
  held.clear();
}

let s: TestServer;
interface Org { id: string; token: string; client: Client }
let flood: Org;
let bystander: Org;

async function org(slug: string): Promise<Org> {
  const id = (await insertOrg(s.services.db, { name: slug, slug })).id;
  const token = await s.token({ sub: `svc_${slug}`, orgId: id, role: 'member', perms: [] });
  return { id, token, client: await mcpClient(s.url, bearer(token)) };
}

beforeAll(async () => {
  site = createServer((req, res) => {
    seen.push(req.url ?? '/');
    if (req.url === '/slow.png') {
      if (holding) held.add(res);
      else res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(8));
      return;
    }
    if (req.url === '/slow.html') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page('Slow', '<img src="/slow.png">'));
    res.writeHead(200, { 'content-type': 'text/html' }).end(page('Quick', '<img src="/quick.png">'));
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  s = await startTestServer({
    SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium', CHROMIUM_PATH: requireChromium(),
    // Stated, not left to the machine's cores: one slot per org, four more calls waiting.
    SCAN_PAGE_SLOTS_PER_ORG: '1', SCAN_PAGE_MAX_QUEUED_PER_ORG: '4',
    // Longer than the test: a held page must not time out and free its slot meanwhile.
    SCAN_PAGE_TIMEOUT_SECONDS: '120',
  });
  flood = await org('flood');
  bystander = await org('bystander');
}, 60_000);

afterAll(async () => {
  release();
  await flood?.client.close();
  await bystander?.client.close();
  await s?.stop();
  site?.closeAllConnections();
  await new Promise((r) => site?.close(r));
});
afterEach(() => s.expectConformant());

async function until(what: string, probe: () => boolean, seconds = 120): Promise<void> {
  for (let i = 0; i < seconds * 20 && !probe(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!probe()) throw new Error(`timed out waiting for ${what}`);
}

const scanPage = (o: Org, path: string) => o.client.callTool({ name: 'dashboard_scan_page', arguments: { url: `${origin}${path}` } }, undefined, { timeout: 300_000 }) as Promise<CallToolResult>;
const inProgress = (o: Org) => s.services.scans.pageCalls.inProgress(o.id);

describe('one-page scans of one org', () => {
  it("hold one page slot, not both: another org's page is checked at once and answers first; the calls past the queue are refused", async () => {
    const answers: string[] = [];
    const floodCalls = Array.from({ length: 6 }, () => scanPage(flood, '/slow.html').then((r) => {
      answers.push(r.isError ? `flood ${failure(r).error}` : 'flood ok');
      return r;
    }));
    // The first of them is loading its page (and holds a slot); the others wait or were refused.
    await until('a flood page to load', () => seen.includes('/slow.png'));
    await until('the flood calls to be admitted or refused', () => inProgress(flood) + answers.length === 6);
    expect(inProgress(flood)).toBe(5);

    const quick = ok(await scanPage(bystander, '/quick.html'));
    answers.push('bystander ok');
    expect(quick).toMatchObject({ engine: 'chromium', title: 'Quick' });
    expect(quick.issues.map((i: { code: string }) => i.code)).toContain('image-alt');
    // The bystander answered while every admitted flood call was still held or waiting.
    expect(answers).toEqual(['flood rate_limited', 'bystander ok']);
    expect(inProgress(flood)).toBe(5);

    // Let the slow page load: the flood's calls go through its one slot in turn.
    release();
    const refused = (await Promise.all(floodCalls)).filter((r) => r.isError);
    expect(refused).toHaveLength(1);
    const refusal = JSON.parse((refused[0]!.content[0] as { text: string }).text) as { error: string; message: string; retryAfterSeconds?: number };
    expect(refusal).toMatchObject({ error: 'rate_limited', message: expect.stringMatching(/SCAN_PAGE_MAX_QUEUED_PER_ORG/), retryAfterSeconds: expect.any(Number) });
    expect(refusal.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  }, 300_000);
});

// After the first test released the images: hold them again.
describe('a waiting call whose client goes away', () => {
  it('leaves the queue, and the calls behind it go on', async () => {
    holding = true;
    seen.length = 0;
    const first = scanPage(flood, '/slow.html');
    await until('the first page to load', () => seen.includes('/slow.png'));
    // The second call, from a client that will go away while it waits for the flood's slot.
    const gone = new AbortController();
    const request = fetch(`${s.url}/api/v1/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${flood.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_scan_page', arguments: { url: `${origin}/slow.html` } } }),
      signal: gone.signal,
    }).catch((err: unknown) => err);
    await until('the second call to have fetched its page', () => seen.filter((p) => p === '/slow.html').length === 2 && inProgress(flood) === 2);
    gone.abort();
    await request;
    await until('the call that lost its client to leave', () => inProgress(flood) === 1);
    release();
    expect(ok(await first)).toMatchObject({ title: 'Slow' });
    expect(inProgress(flood)).toBe(0);
    // Its page was never loaded: it left before its turn.
    expect(seen.filter((p) => p === '/slow.png')).toHaveLength(1);
  }, 300_000);
});
