/**
 * Scans as tasks, as clients use them, in both revisions the endpoint speaks.
 *
 * 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): a site scan started as a task and
 * polled with tasks/get to its result; another cancelled with tasks/cancel, after which the org's
 * next scan starts; the refusals (an unknown task id, another org's, a tasks/get whose Mcp-Name
 * disagrees with its taskId, a client that did not declare the extension); a client that does not
 * declare it gets today's answer. The v2 SDK Client (2.4) refuses a result whose `resultType` is
 * "task" (UnsupportedResultType), so the tools/call that starts a task is sent as a raw request;
 * tasks/get and tasks/cancel go through the Client's `request` with our own result schemas.
 *
 * 2025-11-25 (Tasks of the core protocol), through the v1 SDK Client's `experimental.tasks`: a
 * scan run as a task to its result (callToolStream, tasks/result waiting with status
 * notifications, tasks/list), one cancelled, a call the tool refuses, the same refusals for an
 * unknown task and another org's, and a client that sends no `task` answered as before.
 *
 * Then a task started through one instance polled and cancelled through another one on the same
 * database, in both revisions.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, TaskStatusNotificationSchema, type Task as Task2025 } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, topology, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient } from '../helpers/mcp.js';
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

/** One raw 2025-11-25 POST (no _meta version): the HTTP status and the JSON-RPC body. */
async function post2025(url: string, token: string, method: string, params: Record<string, unknown>) {
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  const text = await res.text();
  // tasks/result answers on a stream: its last message is the response.
  const body = (res.headers.get('content-type') ?? '').startsWith('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { id?: unknown }).filter((m) => m.id !== undefined).at(-1)
    : JSON.parse(text);
  return { status: res.status, body: body as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } };
}

/** dashboard_scan_site as a 2025-11-25 task, through the v1 Client: the task it created (the stream is left before it polls). */
async function startScanTask2025(c: Client2025, args: Record<string, unknown>): Promise<Task2025> {
  const stream = c.experimental.tasks.callToolStream({ name: 'dashboard_scan_site', arguments: args }, CallToolResultSchema, { task: { ttl: 60_000 } });
  const first = (await stream.next()).value;
  await stream.return(undefined);
  expect(first).toMatchObject({ type: 'taskCreated' });
  return (first as { task: Task2025 }).task;
}

/** Polls a 2025-11-25 task until it leaves `working`. */
const settled2025 = (c: Client2025, taskId: string) => until(`task ${taskId} to settle`, async () => {
  const t = await c.experimental.tasks.getTask(taskId);
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
  let legacy: Client2025;
  let legacyGlobex: Client2025;

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
    legacy = await mcpClient(s.url, bearer(acme));
    legacyGlobex = await mcpClient(s.url, bearer(globex));
  });
  afterAll(async () => {
    await client?.close();
    await plain?.close();
    await globexClient?.close();
    await legacy?.close();
    await legacyGlobex?.close();
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

  it('declares Tasks to a 2025-11-25 client in initialize, and dashboard_scan_site and dashboard_verify_fixes as tools that may run as one', async () => {
    expect(legacy.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await legacy.listTools();
    expect(tools.filter((t) => t.execution !== undefined).map((t) => [t.name, t.execution])).toEqual([['dashboard_scan_site', { taskSupport: 'optional' }], ['dashboard_verify_fixes', { taskSupport: 'optional' }]]);
    // Under 2026-07-28 the extension says it instead.
    expect((await client.listTools()).tools.some((t) => 'execution' in t)).toBe(false);
  });

  it('runs a site scan as a 2025-11-25 task to its result (callToolStream, tasks/result, tasks/list)', { timeout: 120_000 }, async () => {
    const messages: { type: string }[] = [];
    // The Client polls tasks/get at the task's pollInterval, then asks tasks/result.
    for await (const m of legacy.experimental.tasks.callToolStream({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/'), scanMode: 'site', maxPages: 4 } }, CallToolResultSchema, { task: { ttl: 60_000 } })) messages.push(m);
    const created = messages[0] as { type: string; task: Task2025 };
    expect(created.type).toBe('taskCreated');
    // The requested ttl is overridden, and the actual one answered.
    expect(created.task).toMatchObject({ status: 'working', ttl: 86_400_000, pollInterval: 2000, statusMessage: expect.stringMatching(/^Scan scn_[0-9a-z]+ /) });
    expect(Object.keys(created.task).sort()).toEqual(['createdAt', 'lastUpdatedAt', 'pollInterval', 'status', 'statusMessage', 'taskId', 'ttl']);
    expect(created.task.taskId).toMatch(/^task_[A-Za-z0-9_-]{32}$/);
    const last = messages.at(-1) as { type: string; result: { structuredContent: { scanId: string; status: string; pagesScanned: number; totalIssues: number }; content: { text: string }[]; isError?: boolean } };
    expect(messages.map((m) => m.type)).toEqual(['taskCreated', ...messages.slice(1, -1).map(() => 'taskStatus'), 'result']);
    const scan = last.result.structuredContent;
    expect(last.result.isError).toBeUndefined();
    expect(scan).toMatchObject({ status: 'completed', siteUrl: site.url('/'), pagesScanned: 4 });
    expect(JSON.parse(last.result.content[0]!.text)).toEqual(scan);

    const taskId = created.task.taskId;
    expect(await legacy.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed', createdAt: created.task.createdAt, statusMessage: `Scan ${scan.scanId} completed: ${scan.totalIssues} issues on 4 pages.` });
    // tasks/result again: the tool's result, tied to its task.
    const again = await legacy.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(again.structuredContent).toEqual(scan);
    expect(again._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId } });
    expect((await legacy.experimental.tasks.listTasks()).tasks).toContainEqual(expect.objectContaining({ taskId, status: 'completed' }));
    // The same task under 2026-07-28's vocabulary: one store.
    expect(await getTask(client, taskId)).toMatchObject({ taskId, status: 'completed', result: { structuredContent: scan } });
  });

  it('waits in tasks/result until the scan ends, telling its status on the way', { timeout: 120_000 }, async () => {
    // Each page after 1.5 s: the wait outlasts a few looks at the scan.
    const task = await startScanTask2025(legacy, { siteUrl: slow.url('/'), scanMode: 'site', maxPages: 2 });
    const told: Task2025[] = [];
    legacy.setNotificationHandler(TaskStatusNotificationSchema, (n) => void told.push(n.params as Task2025));
    try {
      const result = await legacy.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ status: 'completed', pagesScanned: 2 });
      expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
    } finally {
      legacy.removeNotificationHandler('notifications/tasks/status');
    }
    expect(told.length).toBeGreaterThan(0);
    expect(told.every((t) => t.taskId === task.taskId && t.status === 'working' && t.ttl === 86_400_000)).toBe(true);
  });

  it('stops waiting in tasks/result for a client that went away', { timeout: 120_000 }, async () => {
    const task = await startScanTask2025(legacy, { siteUrl: slow.url('/'), scanMode: 'site', maxPages: 3 });
    const looks: string[] = [];
    const counting = (q: { sql: string }) => void (q.sql.includes('mcp_tasks') && looks.push(q.sql));
    s.services.db.on('query', counting);
    try {
      const gone = new AbortController();
      const res = await fetch(`${s.url}/api/v1/mcp`, {
        method: 'POST',
        headers: { ...bearer(acme), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/result', params: { taskId: task.taskId } }),
        signal: gone.signal,
      });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      // The first status on the stream, then the client is gone.
      expect(new TextDecoder().decode((await res.body!.getReader().read()).value)).toContain('"method":"notifications/tasks/status"');
      gone.abort();
      await until('the wait to look at the task', () => Promise.resolve(looks.length > 0 ? true : undefined));
      await new Promise((r) => setTimeout(r, 1500));
      const after = looks.length;
      // Three of its half-second looks would have come by now: none does.
      await new Promise((r) => setTimeout(r, 1500));
      expect(looks.length).toBe(after);
    } finally {
      s.services.db.off('query', counting);
    }
    expect((await legacy.experimental.tasks.getTask(task.taskId)).status).toBe('working');
    expect(s.logLines.filter((l) => l.includes('"level":50'))).toEqual([]);
    await legacy.experimental.tasks.cancelTask(task.taskId);
  });

  it('cancels a running 2025-11-25 task: it answers cancelled from then on, and the org\'s next scan starts', { timeout: 120_000 }, async () => {
    const task = await startScanTask2025(legacy, { siteUrl: slow.url('/'), scanMode: 'site', maxPages: 10 });
    await until('the scan to run', async () => {
      const t = await legacy.experimental.tasks.getTask(task.taskId);
      return t.statusMessage?.includes('pages checked') || t.statusMessage?.includes('finding the pages') ? t : undefined;
    });
    // The one worker and the org's one running place are taken: a call without a task waits, as before.
    const next = (await legacy.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/clean.html'), scanMode: 'single' } })).structuredContent as { scanId: string; status: string };
    expect(next.status).toBe('queued');

    const cancelled = await legacy.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled', statusMessage: 'Cancelled by its caller; the scan stopped.', createdAt: task.createdAt });
    expect(await legacy.experimental.tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    // A terminal task is not cancelled again, and a cancelled call has no result (-32602 both).
    await expect(legacy.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("Cannot cancel task: already in terminal status 'cancelled'") });
    await expect(legacy.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Task was cancelled') });

    const nextDone = await until('the next scan to finish', async () => {
      const p = (await legacy.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId: next.scanId } })).structuredContent as { status: string };
      return p.status === 'completed' ? p : undefined;
    });
    expect(nextDone.status).toBe('completed');
    const row = await s.services.db('scans').where({ id: (await s.services.db('mcp_tasks').where({ id: task.taskId }).first()).scan_id }).first();
    expect(row).toMatchObject({ status: 'failed', error: 'cancelled by its caller (tasks/cancel)' });
    // A finished task is not cancelled either.
    const done = await startScanTask2025(legacy, { siteUrl: site.url('/clean.html'), scanMode: 'single' });
    expect((await settled2025(legacy, done.taskId)).status).toBe('completed');
    await expect(legacy.experimental.tasks.cancelTask(done.taskId)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("Cannot cancel task: already in terminal status 'completed'") });
  });

  it('answers a 2025-11-25 task call the tool refuses with a task that failed with the tool\'s error result', async () => {
    const task = await startScanTask2025(legacy, { siteUrl: 'ftp://example.com/' });
    expect(task.status).toBe('working');
    const failed = await legacy.experimental.tasks.getTask(task.taskId);
    expect(failed).toMatchObject({ status: 'failed', statusMessage: expect.stringContaining('siteUrl') });
    const result = await legacy.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({ error: 'invalid_arguments', message: failed.statusMessage });
    await expect(legacy.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("already in terminal status 'failed'") });
    // Under 2026-07-28 the same task completed with the error result.
    expect(await getTask(client, task.taskId)).toMatchObject({ status: 'completed', result: { isError: true } });
  });

  it('refuses a task for a tool that does not run as one (-32601), and an unknown tool as always (-32602)', async () => {
    const other = await post2025(s.url, acme, 'tools/call', { name: 'dashboard_list_orgs', arguments: {}, task: {} });
    expect(other).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'dashboard_list_orgs does not run as a task (its execution.taskSupport is forbidden): call it without params.task' } } });
    const unknown = await post2025(s.url, acme, 'tools/call', { name: 'dashboard_nope', arguments: {}, task: {} });
    expect(unknown.body.error).toEqual({ code: -32602, message: 'Unknown tool: dashboard_nope' });
    const malformed = await post2025(s.url, acme, 'tools/call', { name: 'dashboard_scan_site', arguments: {}, task: { ttl: 'soon' } });
    expect(malformed.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid params for tools\/call: params\.task\.ttl: /) });
    // tasks/* params are checked by the revision's schemas.
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      expect((await post2025(s.url, acme, method, { taskId: 42 })).body.error).toMatchObject({ code: -32602, message: expect.stringMatching(new RegExp(`^Invalid params for ${method}: .*taskId`)) });
    }
    expect((await post2025(s.url, acme, 'tasks/list', { cursor: 7 })).body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid params for tasks\/list: .*cursor/) });
  });

  it('answers an unknown 2025-11-25 task id and another org\'s alike, and lists only the org\'s tasks', async () => {
    const task = await startScanTask2025(legacy, { siteUrl: site.url('/clean.html'), scanMode: 'single' });
    const unknown = `task_${'A'.repeat(32)}`;
    for (const [method, verb] of [['tasks/get', 'retrieve'], ['tasks/result', 'retrieve'], ['tasks/cancel', 'cancel']] as const) {
      const theirs = await post2025(s.url, globex, method, { taskId: task.taskId });
      const none = await post2025(s.url, globex, method, { taskId: unknown });
      expect(theirs).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 7, error: { code: -32602, message: `Failed to ${verb} task: Task not found` } } });
      expect(none).toEqual(theirs);
    }
    // Through the v1 Client too.
    await expect(legacyGlobex.experimental.tasks.getTask(task.taskId)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Failed to retrieve task: Task not found') });
    await expect(legacyGlobex.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Failed to cancel task: Task not found') });
    expect((await legacyGlobex.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(task.taskId);
    // The owner's task was not touched by the other org's cancel.
    expect((await settled2025(legacy, task.taskId)).status).toBe('completed');
  });

  it('pages tasks/list, newest first, and refuses a cursor it did not give', async () => {
    // Tasks the tool refused at once: 51 tasks without queueing a scan.
    const made: string[] = [];
    for (let i = 0; i < 51; i++) made.push((await startScanTask2025(legacyGlobex, { siteUrl: 'ftp://example.com/' })).taskId);
    const first = await legacyGlobex.experimental.tasks.listTasks();
    expect(first.tasks).toHaveLength(50);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await legacyGlobex.experimental.tasks.listTasks(first.nextCursor);
    const listed = [...first.tasks, ...second.tasks].map((t) => t.taskId);
    expect(new Set(listed)).toEqual(new Set(made));
    const created = [...first.tasks, ...second.tasks].map((t) => t.createdAt);
    expect(created).toEqual([...created].sort().reverse());
    expect(second.nextCursor).toBeUndefined();
    await expect(legacyGlobex.experimental.tasks.listTasks('bm90LW91cnM')).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Failed to list tasks: the cursor is not one this server gave') });
  });

  it('answers a 2025-11-25 client that sends no task as before: the queued scan', async () => {
    const call = await post2025(s.url, acme, 'tools/call', { name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/clean.html'), scanMode: 'single' } });
    expect(call.body.result).toMatchObject({ structuredContent: { status: 'queued', siteUrl: site.url('/clean.html') } });
    expect(Object.keys(call.body.result!).sort()).toEqual(['content', 'structuredContent']);
    const scan = await legacy.callTool({ name: 'dashboard_scan_site', arguments: { siteUrl: site.url('/clean.html'), scanMode: 'single' } });
    expect(scan.structuredContent).toMatchObject({ status: 'queued' });
    expect(scan).not.toHaveProperty('task');
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

  it('a 2025-11-25 task started through one instance is polled and cancelled through the other', { timeout: 120_000 }, async () => {
    const here = await mcpClient(one.url, bearer(one.token));
    const there = await mcpClient(other.url, bearer(other.token));
    try {
      const task = await startScanTask2025(here, { siteUrl: slow.url('/'), scanMode: 'site', maxPages: 10 });
      expect(await there.experimental.tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'working', createdAt: task.createdAt });
      expect((await there.experimental.tasks.listTasks()).tasks).toContainEqual(expect.objectContaining({ taskId: task.taskId }));
      expect(await there.experimental.tasks.cancelTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
      expect(await here.experimental.tasks.getTask(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
      expect(await servers[0]!.services.db('scans').where({ id: (await servers[0]!.services.db('mcp_tasks').where({ id: task.taskId }).first()).scan_id }).first()).toMatchObject({ status: 'failed', error: 'cancelled by its caller (tasks/cancel)' });
    } finally {
      await here.close();
      await there.close();
    }
  });

  it('a 2025-11-25 task started through one instance is waited for to its result through the other', { timeout: 120_000 }, async () => {
    const here = await mcpClient(one.url, bearer(one.token));
    const there = await mcpClient(other.url, bearer(other.token));
    try {
      const task = await startScanTask2025(there, { siteUrl: site.url('/clean.html'), scanMode: 'single' });
      const result = await here.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ status: 'completed', pagesScanned: 1 });
      expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
    } finally {
      await here.close();
      await there.close();
    }
  });
});
