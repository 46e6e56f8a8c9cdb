/**
 * Load: concurrent clients against `pactum serve` in its own process (so its resident memory is
 * its own), each looping: upload an object through a batch and a basic PUT, verify it, download
 * it through a batch action and check its SHA-256, and call MCP tools with a bearer token.
 * Some objects are shared by every client (the same oid uploaded at once by several), most are
 * distinct. Every answer gets the conformance runner's checks (declared status, content type,
 * body schema, required headers); every tool result its output schema.
 *
 * Asserted: no errors at all, every download verifies, nothing at level error or 5xx in the
 * server's log, and memory flat: resident memory at the end grows less than 150 MB over a sample
 * taken after the warm-up. No timing is asserted.
 *
 * Size: RELIABILITY=full runs 50 clients for 60 s; the quick form 10 clients for 8 s.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools, type ToolSpec } from '../../generated/tools.js';
import { checkAnswer } from '../../src/conformance/index.js';
import { send, type ConformanceRequest, type ConformanceResponse } from '../../src/conformance/http.js';
import type { Target } from '../../src/conformance/cases.js';
import { messageOf } from '../../src/conformance/mcp.js';
import {
  FULL, GIT_LFS, basicHeader, cliToken, content, count, freePort, histogram, installEnv, newDataDir, prepareInstall, removeDir, report, sha256, sized, spawnServer, type ChildServer, type Content,
} from './support.js';

const CLIENTS = sized(10, 50);
const DURATION_MS = sized(8_000, 60_000);
const WARMUP_MS = sized(2_500, 10_000);
const RSS_GROWTH_LIMIT = 150 * 1024 * 1024;
const PASSWORD = 'wally-load-password-1';
const AUTH = basicHeader('wally', PASSWORD);

let dataDir: string;
let server: ChildServer;
let target: Target;
let token: string;
let orgId: string;

beforeAll(async () => {
  dataDir = newDataDir('load');
  const port = await freePort();
  // PORT is fixed up front: the CLI signs tokens for the audience the server will have.
  const env = await installEnv(dataDir, { PORT: String(port), LOG_LEVEL: 'info' });
  await prepareInstall(env, {
    org: 'acme',
    repo: 'site',
    users: [
      { username: 'wally', password: PASSWORD, access: 'write' },
      { username: 'olga', password: 'olga-load-password-1', role: 'org_admin' },
    ],
  });
  token = await cliToken(env, 'olga');
  orgId = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).orgId;
  server = await spawnServer({ dataDir, port, env });
  target = { base: server.url, repo: 'acme/site', credentials: { token, basic: `wally:${PASSWORD}` } };
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (dataDir) removeDir(dataDir);
});

const requests = new Map<string, number>();
const statuses = new Map<number, number>();
const errors: string[] = [];
let errorCount = 0;
let verified = 0;
let uploads = 0;
let dedupedUploads = 0;
let toolCalls = 0;

function fail(what: string) {
  errorCount++;
  if (errors.length < 30) errors.push(what);
}

/** Sends a request and applies the conformance runner's checks to the answer. */
async function call(kind: string, req: ConformanceRequest): Promise<ConformanceResponse | null> {
  count(requests, kind);
  let res: ConformanceResponse;
  try {
    res = await send(req, 60_000);
  } catch (err) {
    fail(`${kind}: no answer: ${(err as Error).message}`);
    return null;
  }
  count(statuses, res.status);
  const problems = checkAnswer(target, req, res, 'any');
  if (problems.length) fail(`${kind}: ${problems.join('; ')}`);
  return res;
}

const lfsBase = () => `${target.base}/acme/site.git/info/lfs`;
const lfsJson = (url: string, body: unknown, headers: Record<string, string> = { authorization: AUTH }): ConformanceRequest => ({
  method: 'POST',
  url,
  headers: { ...headers, accept: GIT_LFS, 'content-type': GIT_LFS },
  body: JSON.stringify(body),
});
const parse = (res: ConformanceResponse) => JSON.parse(res.body.toString('utf8'));

async function uploadAndCheck(c: Content): Promise<void> {
  const announce = await call('batch upload', lfsJson(`${lfsBase()}/objects/batch`, { operation: 'upload', transfers: ['basic'], objects: [{ oid: c.oid, size: c.size }] }));
  if (!announce) return;
  if (announce.status !== 200) return fail(`batch upload answered ${announce.status}: ${announce.body.toString().slice(0, 200)}`);
  const obj = parse(announce).objects[0];
  if (obj.error) return fail(`batch upload: object error ${JSON.stringify(obj.error)}`);
  if (obj.actions?.upload) {
    const { upload, verify } = obj.actions;
    const put = await call('basic PUT', { method: 'PUT', url: upload.href, headers: { ...upload.header, 'content-type': 'application/octet-stream' }, body: c.bytes });
    if (!put) return;
    if (put.status === 409) {
      // Another client committed the same object between this batch and this PUT: the href is
      // spent. As git-lfs does, ask the batch again, which must now ask for nothing.
      const again = await call('batch upload', lfsJson(`${lfsBase()}/objects/batch`, { operation: 'upload', transfers: ['basic'], objects: [{ oid: c.oid, size: c.size }] }));
      if (!again) return;
      const o = again.status === 200 ? parse(again).objects[0] : null;
      if (!o || o.error || o.actions?.upload) return fail(`after a 409 PUT, the batch still asks for an upload: ${again.body.toString().slice(0, 200)}`);
      dedupedUploads++;
    } else if (put.status !== 200) return fail(`basic PUT answered ${put.status}: ${put.body.toString().slice(0, 200)}`);
    else uploads++;
    if (put.status === 200 && verify) {
      const v = await call('verify', lfsJson(verify.href, { oid: c.oid, size: c.size }, verify.header));
      if (v && v.status !== 200) return fail(`verify answered ${v.status}: ${v.body.toString().slice(0, 200)}`);
    }
  } else dedupedUploads++;

  const dl = await call('batch download', lfsJson(`${lfsBase()}/objects/batch`, { operation: 'download', objects: [{ oid: c.oid, size: c.size }] }));
  if (!dl) return;
  const d = parse(dl).objects[0];
  if (!d.actions?.download) return fail(`batch download of a stored object: ${JSON.stringify(d.error)}`);
  const got = await call('basic GET', { method: 'GET', url: d.actions.download.href, headers: d.actions.download.header });
  if (!got) return;
  if (got.status !== 200) return fail(`basic GET answered ${got.status}`);
  if (got.body.length !== c.size || sha256(got.body) !== c.oid) return fail(`the downloaded bytes of ${c.oid} do not hash to it (${got.body.length} bytes)`);
  verified++;
}

let rpcId = 1;
async function mcpCall(name: string, args: Record<string, unknown>): Promise<void> {
  toolCalls++;
  const res = await call(`tools/call ${name}`, {
    method: 'POST',
    url: `${target.base}/api/v1/mcp`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name, arguments: args } }),
  });
  if (!res) return;
  if (res.status !== 200) return fail(`tools/call ${name} answered HTTP ${res.status}`);
  const m = messageOf(res) as { error?: unknown; result?: { isError?: boolean; content: { text: string }[]; structuredContent?: unknown } } | null;
  if (!m?.result) return fail(`tools/call ${name}: ${JSON.stringify(m?.error ?? m)}`);
  if (m.result.isError) return fail(`tools/call ${name}: ${m.result.content[0]?.text}`);
  const tool = (tools as Record<string, ToolSpec>)[name]!;
  if (!tool.validateOutput(m.result.structuredContent)) fail(`tools/call ${name}: structuredContent breaks the output schema`);
}

const MCP_CALLS: [string, () => Record<string, unknown>][] = [
  ['dashboard_list_orgs', () => ({ limit: 5 })],
  ['dashboard_get_org', () => ({ targetOrgId: orgId })],
  ['dashboard_list_wcag_criteria', () => ({ version: '2.2', level: 'AA' })],
  ['dashboard_list_regulations', () => ({ jurisdiction: 'EU', limit: 5 })],
  ['dashboard_list_users', () => ({ limit: 10 })],
  ['dashboard_list_reports', () => ({ limit: 5 })],
];

describe('load', () => {
  it(`${CLIENTS} clients upload, download, verify and call tools; no errors, memory flat`, async () => {
    const shared = Array.from({ length: 6 }, (_, i) => content(64 * 1024 * (i + 1)));
    const started = Date.now();
    const end = started + DURATION_MS;
    let rssStart = 0;
    let rssMax = 0;
    let iterations = 0;
    const sampler = setInterval(() => {
      const rss = server.rss();
      rssMax = Math.max(rssMax, rss);
      if (!rssStart && Date.now() - started >= WARMUP_MS) rssStart = rss;
    }, 250);

    const client = async (n: number) => {
      for (let i = 0; Date.now() < end; i++) {
        iterations++;
        // A third of the uploads share content with other clients (the same oid at once).
        const c = (i + n) % 3 === 0 ? shared[(i * 7 + n) % shared.length]! : content(1024 + (randomBytes(2).readUInt16BE() % 128) * 1024);
        await uploadAndCheck(c);
        const [name, args] = MCP_CALLS[(i + n) % MCP_CALLS.length]!;
        await mcpCall(name, args());
      }
    };
    try {
      await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
    } finally {
      clearInterval(sampler);
    }
    const rssEnd = server.rss();
    rssMax = Math.max(rssMax, rssEnd);
    if (!rssStart) rssStart = rssEnd;

    const total = [...requests.values()].reduce((a, b) => a + b, 0);
    const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
    report(`load: ${CLIENTS} clients for ${DURATION_MS / 1000} s${FULL ? '' : ' (quick)'}: ${total} requests, ${errorCount} errors, ${verified} downloads verified, ${uploads} uploads (${dedupedUploads} already stored), ${toolCalls} tool calls, ${iterations} iterations`);
    report(`load: server RSS after warm-up ${mb(rssStart)}, at the end ${mb(rssEnd)} (growth ${mb(rssEnd - rssStart)}), peak ${mb(rssMax)}`);
    report(`load: statuses: ${histogram(statuses)}`);
    report(`load: requests: ${histogram(requests)}`);
    for (const e of errors) report(`load error: ${e.slice(0, 500)}`);
    const trouble = [...server.trouble.errors, ...server.trouble.serverErrors];
    for (const t of trouble.slice(0, 10)) report(`load server log: ${t.slice(0, 500)}`);

    expect(errors, `${errorCount} errors`).toEqual([]);
    expect(verified).toBeGreaterThan(0);
    expect(verified, 'every upload ends in a verified download').toBe(iterations);
    expect(trouble, 'errors or 5xx in the server log').toEqual([]);
    expect(rssEnd - rssStart, `RSS growth from ${mb(rssStart)} to ${mb(rssEnd)}`).toBeLessThan(RSS_GROWTH_LIMIT);
    // The server is still healthy.
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    await health.body?.cancel();
  });
});
