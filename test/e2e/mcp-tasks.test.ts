/**
 * Scans as tasks (the `io.modelcontextprotocol/tasks` extension of MCP 2026-07-28), as a client
 * uses them: a site scan started as a task and polled with tasks/get to its result; another
 * cancelled with tasks/cancel, after which the org's next scan starts; the refusals (an unknown
 * task id, another org's, a tasks/get whose Mcp-Name disagrees with its taskId, a client that did
 * not declare the extension); a client that does not declare it gets today's answer; and a task
 * started through one instance polled and cancelled through another one on the same database.
 *
 * The v2 SDK Client (2.4) refuses a result whose `resultType` is "task" (UnsupportedResultType), so
 * the tools/call that starts a task is sent as a raw request; tasks/get and tasks/cancel go through
 * the Client's `request` with our own result schemas.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startTestServer, topology, type TestServer } from '../helpers/server.js';
import { bearer } from '../helpers/mcp.js';
import { startFixtureSite, type FixtureSite } from '../helpers/site.js';
import { insertOrg } from '../../src/db/users.js';
import { cancelScan } from '../../src/scans/execute.js';
import { databaseUrlFor, ensureDatabase, TEST_DB_PREFIX } from '../helpers/backends.js';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

const TaskSchema = z.looseObject({
  taskId: z.string(),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.number().nullable(),
  pollIntervalMs: z.number().optional(),
  result: z.looseObject({ content: z.array(z.any()), structuredContent: z.any().optional(), isError: z.boolean().optional() }).optional(),
});
const EmptySchema = z.looseObject({});

let site: FixtureSite;
let slow: FixtureSite;

/** A 2026-07-28 Client that declares the Tasks extension (or not). */
async function tasksClient(url: string, token: string, declare = true): Promise<Client> {
  const client = new Client(
    { name: 'pactum-tests-tasks', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } }, capabilities: declare ? { extensions: { [TASKS]: {} } } : {} },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/api/v1/mcp`), { requestInit: { headers: bearer(token) } }));
  return client;
}

const envelope = (declare: boolean) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': declare ? { extensions: { [TASKS]: {} } } : {},
});

/** One raw 2026-07-28 POST: the HTTP status and the JSON-RPC body. */
async function post(url: string, token: string, method: string, params: Record<string, unknown>, name?: string, declare = true) {
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: {
      ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope(declare) } }),
  });
  return { status: res.status, body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } };
}

/** dashboard_scan_site as a task: the CreateTaskResult. */
async function startScanTask(url: string, token: string, args: Record<string, unknown>) {
  const res = await post(url, token, 'tools/call', { name: 'dashboard_scan_site', arguments: args }, 'dashboard_scan_site');
  expect(res.status).toBe(200);
  expect(res.body.error).toBeUndefined();
  return res.body.result!;
}

const getTask = (c: Client, taskId: string) => c.request({ method: 'tasks/get', params: { taskId } }, TaskSchema);
/** tasks/cancel: its acknowledgement without the server identity every result carries in `_meta`. */
async function cancelTask(c: Client, taskId: string) {
  const { _meta, ...ack } = await c.request({ method: 'tasks/cancel', params: { taskId } }, EmptySchema);
  expect(_meta).toEqual({ 'io.modelcontextprotocol/serverInfo': expect.objectContaining({ name: 'pactum-dashboard' }) });
  return ack;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, seconds = 60): Promise<T> {
  for (let i = 0; i < seconds * 10; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Polls the task until it leaves `working`. */
const settled = (c: Client, taskId: string) => until(`task ${taskId} to settle`, async () => {
  const t = await getTask(c, taskId);
  return t.status === 'working' ? undefined : t;
});

beforeAll(async () => {
  site = await startFixtureSite(0);
  // Each page answered after 1.5 s: a scan that is still running when it is cancelled.
  slow = await startFixtureSite(1500);
});
afterAll(async () => {
  await site?.close();
  await slow?.close();
});

describe('scans as tasks, one server', () => {
  let s: TestServer;
  let acme: string;
  let globex: string;
  let client: Client;
  let plain: Client;
  let globexClient: Client;

  beforeAll(async () => {
    // One scan runs at a time: the next one starts only once a cancelled scan has stopped and given
    // back both its org's running place and the worker.
    s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom', SCAN_CONCURRENCY: '1', SCAN_MAX_RUNNING_PER_ORG: '1' });
    const acmeOrg = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
    const globexOrg = (await insertOrg(s.services.db, { name: 'Globex', slug: 'globex' })).id;
    acme = await s.token({ sub: 'svc_acme', orgId: acmeOrg, role: 'org_admin', perms: [] });
    globex = await s.token({ sub: 'svc_globex', orgId: globexOrg, role: 'org_admin', perms: [] });
    client = await tasksClient(s.url, acme);
    plain = await tasksClient(s.url, acme, false);
    globexClient = await tasksClient(s.url, globex);
  });
  afterAll(async () => {
    await client?.close();
    await plain?.close();
    await globexClient?.close();
    await s?.stop();
  });
  afterEach(() => s.expectConformant());

  it('declares the extension in server/discover', async () => {
    const res = await post(s.url, acme, 'server/discover', {});
    expect(res.body.result!.capabilities).toEqual({ tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false }, extensions: { 'io.modelcontextprotocol/ui': {}, [TASKS]: {} } });
  });

  it('runs a site scan as a task to its result', { timeout: 120_000 }, async () => {
    const created = await startScanTask(s.url, acme, { siteUrl: site.url('/'), scanMode: 'site', maxPages: 4 });
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 86_400_000, pollIntervalMs: 2000 });
    // The SDK gives every tools/call result a content array: here an empty one.
    expect(Object.keys(created).sort()).toEqual(['_meta', 'content', 'createdAt', 'lastUpdatedAt', 'pollIntervalMs', 'resultType', 'status', 'statusMessage', 'taskId', 'ttlMs']);
    expect(created.content).toEqual([]);
    expect(created.taskId).toMatch(/^task_[A-Za-z0-9_-]{32}$/);
    const done = await settled(client, created.taskId as string);
    expect(done.status).toBe('completed');
    expect(done.createdAt).toBe(created.createdAt);
    const scan = done.result!.structuredContent as { scanId: string; status: string; pagesScanned: number; siteUrl: string };
    expect(done.result!.isError).toBeUndefined();
    expect(JSON.parse((done.result!.content[0] as { text: string }).text)).toEqual(scan);
    expect(scan.status).toBe('completed');
    expect(scan.siteUrl).toBe(site.url('/'));
    expect(scan.pagesScanned).toBe(4);
    expect(done.statusMessage).toBe(`Scan ${scan.scanId} completed: ${(scan as unknown as { totalIssues: number }).totalIssues} issues on 4 pages.`);
    // The scan is the one the scan tools know.
    const progress = await client.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId: scan.scanId } });
    expect(progress.structuredContent).toMatchObject({ scanId: scan.scanId, status: 'completed', finished: true });
  });

  it('cancels a running scan: the task says cancelled, and the org\'s next scan starts', { timeout: 120_000 }, async () => {
    const created = await startScanTask(s.url, acme, { siteUrl: slow.url('/'), scanMode: 'site', maxPages: 10 });
    const taskId = created.taskId as string;
    const running = await until('the scan to run', async () => {
      const t = await getTask(client, taskId);
      return t.statusMessage?.includes('pages checked') || t.statusMessage?.includes('finding the pages') ? t : undefined;
    });
    expect(running.status).toBe('working');
    // The one worker and the org's one running place are taken: a second scan (from a client without tasks) waits.
    const next = (await plain.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/clean.html'), scanMode: 'single' } })).structuredContent as { scanId: string; status: string };
    expect(next.status).toBe('queued');

    expect(await cancelTask(client, taskId)).toEqual({});
    const cancelled = await getTask(client, taskId);
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled', statusMessage: 'Cancelled by its caller; the scan stopped.' });
    expect(cancelled.result).toBeUndefined();
    // Polled again, and cancelled again: still cancelled.
    expect(await cancelTask(client, taskId)).toEqual({});
    expect((await getTask(client, taskId)).status).toBe('cancelled');

    const nextDone = await until('the next scan to finish', async () => {
      const p = (await client.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId: next.scanId } })).structuredContent as { status: string };
      return p.status === 'completed' ? p : undefined;
    });
    expect(nextDone.status).toBe('completed');
    const row = await s.services.db('scans').where({ id: (await s.services.db('mcp_tasks').where({ id: taskId }).first()).scan_id }).first();
    // The stopped scan stays as its cancellation left it.
    expect(row).toMatchObject({ status: 'failed', error: 'cancelled by its caller (tasks/cancel)' });
  });

  it('stops a running scan cancelled through another instance at its next look at the row', { timeout: 120_000 }, async () => {
    // Each page answered after 5 s: the site's 6 pages would take the scan half a minute.
    const slower = await startFixtureSite(5000);
    const first = (await plain.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: slower.url('/'), scanMode: 'site', maxPages: 10 } })).structuredContent as { scanId: string };
    await until('the scan to run', async () => ((await s.services.db('scans').where({ id: first.scanId }).first()).status === 'running' ? true : undefined));
    const next = (await plain.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/clean.html'), scanMode: 'single' } })).structuredContent as { scanId: string; status: string };
    expect(next.status).toBe('queued');
    // What tasks/cancel on another instance does to the shared database; this instance is not told.
    expect(await cancelScan(s.services.db, first.scanId, 'cancelled elsewhere')).toBe(true);
    // With one worker, the next scan runs only once the cancelled one has stopped.
    await until('the next scan to finish', async () => ((await s.services.db('scans').where({ id: next.scanId }).first()).status === 'completed' ? true : undefined));
    expect(await s.services.db('scans').where({ id: first.scanId }).first()).toMatchObject({ status: 'failed', error: 'cancelled elsewhere' });
    // It stopped rather than ran to its end: it had not asked the site for all of its pages.
    expect(slower.requests).toBeLessThan(6);
    await slower.close();
  });

  it('completes a task whose scan failed with the tool\'s error result', { timeout: 60_000 }, async () => {
    const closed = await startFixtureSite(0);
    const url = closed.url('/');
    await closed.close();
    const created = await startScanTask(s.url, acme, { siteUrl: url, scanMode: 'single' });
    const done = await settled(client, created.taskId as string);
    expect(done.status).toBe('completed');
    expect(done.result!.isError).toBe(true);
    expect(done.result!.structuredContent).toBeUndefined();
    const error = JSON.parse((done.result!.content[0] as { text: string }).text) as { error: string; message: string };
    expect(error.error).toBe('failed');
    expect(error.message).toMatch(/^Scan scn_[0-9a-z]+ failed: /);
    expect(done.statusMessage).toMatch(/^Scan scn_[0-9a-z]+ failed\.$/);
  });

  it('answers an unknown task id and another org\'s alike', async () => {
    const created = await startScanTask(s.url, acme, { siteUrl: site.url('/clean.html'), scanMode: 'single' });
    const unknown = `task_${'A'.repeat(32)}`;
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update'] as const) {
      const verb = method === 'tasks/get' ? 'retrieve' : method.slice(6);
      const params = (taskId: string) => (method === 'tasks/update' ? { taskId, inputResponses: {} } : { taskId });
      const theirs = await post(s.url, globex, method, params(created.taskId as string), created.taskId as string);
      const none = await post(s.url, globex, method, params(unknown), unknown);
      expect(theirs).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 1, error: { code: -32602, message: `Failed to ${verb} task: Task not found` } } });
      expect(none).toEqual(theirs);
    }
    // Through the SDK Client too.
    await expect(getTask(globexClient, created.taskId as string)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Failed to retrieve task: Task not found') });
    // The owner's task was not touched by the other org's cancel.
    expect((await settled(client, created.taskId as string)).status).toBe('completed');
  });

  it('refuses a tasks/get whose taskId is not a string', async () => {
    const res = await post(s.url, acme, 'tasks/get', { taskId: 42 }, '42');
    expect(res).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params for tasks/get: taskId: Invalid input: expected string, received number' } } });
  });

  it('refuses a tasks/get whose Mcp-Name disagrees with its taskId', async () => {
    const created = await startScanTask(s.url, acme, { siteUrl: site.url('/clean.html'), scanMode: 'single' });
    const res = await post(s.url, acme, 'tasks/get', { taskId: created.taskId }, 'task_other');
    expect(res.status).toBe(400);
    expect(res.body.error!.code).toBe(-32020);
    const missing = await post(s.url, acme, 'tasks/get', { taskId: created.taskId });
    expect(missing.status).toBe(400);
    expect(missing.body.error!.code).toBe(-32020);
  });

  it('refuses tasks/* from a request that does not declare the extension (-32021)', async () => {
    const created = await startScanTask(s.url, acme, { siteUrl: site.url('/clean.html'), scanMode: 'single' });
    const res = await post(s.url, acme, 'tasks/get', { taskId: created.taskId }, created.taskId as string, false);
    // The SDK answers this refusal with 400, as the other refusals of a 2026-07-28 request.
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
  });

  it('answers a client that does not declare the extension as before: the queued scan', async () => {
    const res = await post(s.url, acme, 'tools/call', { name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/clean.html'), scanMode: 'single' } }, 'dashboard_scan_site', false);
    expect(res.body.result).toMatchObject({ resultType: 'complete', structuredContent: { status: 'queued', siteUrl: site.url('/clean.html') } });
    expect(res.body.result).not.toHaveProperty('taskId');
    const scan = await plain.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/clean.html'), scanMode: 'single' } });
    expect(scan.structuredContent).toMatchObject({ status: 'queued' });
  });

  it('offers no tasks to a 2025-11-25 client: its scan call and tasks/get are answered as before', async () => {
    const created = await startScanTask(s.url, acme, { siteUrl: site.url('/clean.html'), scanMode: 'single' });
    const legacy = async (method: string, params: object) => {
      const res = await fetch(`${s.url}/api/v1/mcp`, {
        method: 'POST',
        headers: { ...bearer(acme), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
      });
      return { status: res.status, body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } } };
    };
    const get = await legacy('tasks/get', { taskId: created.taskId });
    expect(get.status).toBe(200);
    expect(get.body.error).toMatchObject({ code: -32601 });
    const call = await legacy('tools/call', { name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/clean.html'), scanMode: 'single' } });
    expect(call.body.result).toMatchObject({ structuredContent: { status: 'queued' } });
    expect(call.body.result).not.toHaveProperty('taskId');
    expect(call.body.result).not.toHaveProperty('resultType');
  });

  it('answers a tool error of a task-capable tool as the error result, without a task', async () => {
    const res = await post(s.url, acme, 'tools/call', { name: 'dashboard_scan_site', arguments: { siteUrl: 'ftp://example.com/' } }, 'dashboard_scan_site');
    expect(res.body.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(res.body.result).not.toHaveProperty('taskId');
  });

  it('reports an expired task as expired', async () => {
    const created = await startScanTask(s.url, acme, { siteUrl: site.url('/clean.html'), scanMode: 'single' });
    await s.services.db('mcp_tasks').where({ id: created.taskId }).update({ expires_at: new Date(Date.now() - 1000).toISOString() });
    await expect(getTask(client, created.taskId as string)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Failed to retrieve task: Task has expired') });
  });
});

describe('scans as tasks, two instances on one database', () => {
  const servers: TestServer[] = [];
  /** Each instance's URL and a token it accepts (the same caller). */
  let one: { url: string; token: string };
  let other: { url: string; token: string };

  beforeAll(async () => {
    const env = { SCAN_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom', SCAN_QUEUE_POLL_SECONDS: '1' };
    if (topology === 'pair') {
      // Behind the round-robin proxy, consecutive requests reach the two instances in turn.
      servers.push(await startTestServer(env));
    } else {
      // Two servers sharing one PostgreSQL database (and the secrets), as a deployment has them.
      const name = `${TEST_DB_PREFIX}tasks_${Date.now()}`;
      await ensureDatabase(name);
      const shared = { ...env, DATABASE_URL: databaseUrlFor(name), JWT_SECRET: 'tasks-two-instances-secret-0123456789abcdef', TRANSFER_TOKEN_SECRET: 'a'.repeat(64), SECRETS_KEY: 'b'.repeat(64) };
      servers.push(await startTestServer(shared), await startTestServer(shared));
    }
    const org = (await insertOrg(servers[0]!.services.db, { name: 'Initech', slug: 'initech' })).id;
    // A token names the server it is for (its audience): each instance gets its own, for the same caller.
    const reached = await Promise.all(servers.map(async (s) => ({ url: s.url, token: await s.token({ sub: 'svc_initech', orgId: org, role: 'org_admin', perms: [] }) })));
    one = reached[0]!;
    other = reached[1] ?? one;
  });
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });
  afterEach(() => servers.forEach((s) => s.expectConformant()));

  it(`a task started through one instance is polled and cancelled through the other`, { timeout: 120_000 }, async () => {
    const created = await startScanTask(one.url, one.token, { siteUrl: slow.url('/'), scanMode: 'site', maxPages: 10 });
    const there = await tasksClient(other.url, other.token);
    const polled = await getTask(there, created.taskId as string);
    expect(polled).toMatchObject({ taskId: created.taskId, status: 'working', createdAt: created.createdAt });
    expect(await cancelTask(there, created.taskId as string)).toEqual({});
    const back = await tasksClient(one.url, one.token);
    expect(await getTask(back, created.taskId as string)).toMatchObject({ taskId: created.taskId, status: 'cancelled' });
    await there.close();
    await back.close();
  });

  it('a task completes wherever it is polled', { timeout: 120_000 }, async () => {
    const created = await startScanTask(other.url, other.token, { siteUrl: site.url('/clean.html'), scanMode: 'single' });
    const here = await tasksClient(one.url, one.token);
    const done = await settled(here, created.taskId as string);
    expect(done).toMatchObject({ status: 'completed', result: { structuredContent: { status: 'completed', pagesScanned: 1 } } });
    await here.close();
  });
});
