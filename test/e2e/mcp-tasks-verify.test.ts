/**
 * dashboard_verify_fixes as a task, in both revisions, over the same store as scans
 * (test/e2e/mcp-tasks.test.ts): the rescan followed to its end, where the task's result is the
 * comparison the tool answers synchronously (`againstScanId`); a rescan cancelled, which frees the
 * org's place for its next scan; a call with nothing left to rescan answered as a completed task;
 * another org's task id answered like an unknown one.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import type { Client as Client2025 } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type Task as Task2025 } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bearer, mcpClient, ok } from '../helpers/mcp.js';
import { imagesPage, page, startChangingSite, type ChangingSite } from '../helpers/changing-site.js';
import { insertOrg } from '../../src/db/users.js';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };

let s: TestServer;
let site: ChangingSite;
let acme: string;
let globex: string;
let legacy: Client2025;
let legacyGlobex: Client2025;
let baseline: string;

/** One raw 2026-07-28 POST that declares the Tasks extension: the JSON-RPC body. */
async function post(token: string, method: string, params: Record<string, unknown>, name: string) {
  const res = await fetch(`${s.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': method, 'mcp-name': name },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { result?: Record<string, unknown> & { result?: { structuredContent?: Record<string, unknown>; isError?: boolean } }; error?: { code: number; message: string } };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, seconds = 90): Promise<T> {
  for (let i = 0; i < seconds * 10; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const TaskBody = z.looseObject({ status: z.string() });
const get2026 = async (token: string, taskId: string) => (await post(token, 'tasks/get', { taskId }, taskId));

/** The comparison the tool answers without a task, for the rescan the task followed. */
async function synchronous(rescanId: string) {
  return ok(await legacy.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: baseline, againstScanId: rescanId } })) as Record<string, unknown>;
}

const rescanOf = async (taskId: string) => (await s.services.db('mcp_tasks').where({ id: taskId }).first()).scan_id as string;

async function scanToEnd(args: Record<string, unknown>): Promise<string> {
  const scanId = ok(await legacy.callTool({ name: 'dashboard_scan_site', arguments: args })).scanId as string;
  await until('the scan to finish', async () => (ok(await legacy.callTool({ name: 'dashboard_get_scan_progress', arguments: { scanId } })).finished ? true : undefined));
  return scanId;
}

beforeAll(async () => {
  site = await startChangingSite({ '/': imagesPage(2), '/other': imagesPage(0), '/clean': page('Clean', '<p>Nothing to fix here.</p>') });
  // One scan runs at a time in the org: a cancelled rescan must give its place back for the next one to start.
  s = await startTestServer({ SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom', SCAN_CONCURRENCY: '1', SCAN_MAX_RUNNING_PER_ORG: '1' });
  const acmeOrg = (await insertOrg(s.services.db, { name: 'Acme', slug: 'acme' })).id;
  const globexOrg = (await insertOrg(s.services.db, { name: 'Globex', slug: 'globex' })).id;
  acme = await s.token({ sub: 'svc_acme', orgId: acmeOrg, role: 'org_admin', perms: [] });
  globex = await s.token({ sub: 'svc_globex', orgId: globexOrg, role: 'org_admin', perms: [] });
  legacy = await mcpClient(s.url, bearer(acme));
  legacyGlobex = await mcpClient(s.url, bearer(globex));
  baseline = await scanToEnd({ siteUrl: site.url('/'), scanMode: 'single' });
  // The release fixes one of the three images.
  site.pages.set('/', imagesPage(1));
}, 120_000);
afterAll(async () => {
  await legacy?.close();
  await legacyGlobex?.close();
  await s?.stop();
  await site?.close();
});
afterEach(() => s.expectConformant());

describe('dashboard_verify_fixes as a task', () => {
  it('is listed as a tool that may run as a 2025-11-25 task', async () => {
    const { tools } = await legacy.listTools();
    expect(tools.find((t) => t.name === 'dashboard_verify_fixes')!.execution).toEqual({ taskSupport: 'optional' });
  });

  it('runs to its result with the v1 Client (callToolStream): the comparison the synchronous call answers', { timeout: 120_000 }, async () => {
    const messages: { type: string }[] = [];
    for await (const m of legacy.experimental.tasks.callToolStream({ name: 'dashboard_verify_fixes', arguments: { scanId: baseline } }, CallToolResultSchema, { task: {} })) messages.push(m);
    expect(messages.map((m) => m.type)).toEqual(['taskCreated', ...messages.slice(1, -1).map(() => 'taskStatus'), 'result']);
    const task = (messages[0] as unknown as { task: Task2025 }).task;
    expect(task).toMatchObject({ status: 'working', statusMessage: expect.stringMatching(/^Scan scn_/) });
    const result = (messages.at(-1) as unknown as { result: { structuredContent: Record<string, unknown>; content: { text: string }[]; isError?: boolean } }).result;
    expect(result.isError).toBeUndefined();
    const rescan = await rescanOf(task.taskId);
    expect(result.structuredContent).toMatchObject({ baselineScanId: baseline, scanId: rescan, finished: true, summary: { fixed: 1, still_present: 2, new: 0 } });
    expect(result.structuredContent).toEqual(await synchronous(rescan));
    expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent);
    expect(await legacy.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'completed', statusMessage: `Rescan ${rescan} compared with the baseline: 1 fixed, 2 still present, 0 new.` });
    // The same task in 2026-07-28's words: one store, the same result.
    const modern = await get2026(acme, task.taskId);
    expect(modern.result).toMatchObject({ status: 'completed', result: { structuredContent: result.structuredContent } });
  });

  it('is cancelled with the v1 Client: the rescan stops and the org\'s next scan runs', { timeout: 120_000 }, async () => {
    site.delayMs = 3000;
    const stream = legacy.experimental.tasks.callToolStream({ name: 'dashboard_verify_fixes', arguments: { scanId: baseline } }, CallToolResultSchema, { task: {} });
    const task = ((await stream.next()).value as { task: Task2025 }).task;
    await stream.return(undefined);
    const cancelled = await legacy.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled', statusMessage: 'Cancelled by its caller; the scan stopped.' });
    await expect(legacy.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Task was cancelled') });
    expect(await s.services.db('scans').where({ id: await rescanOf(task.taskId) }).first()).toMatchObject({ status: 'failed', error: 'cancelled by its caller (tasks/cancel)' });
    site.delayMs = 0;
    // The org's one running place is free again.
    expect(await scanToEnd({ siteUrl: site.url('/other'), scanMode: 'single' })).toMatch(/^scn_/);
  });

  it('runs to its result and is cancelled through raw 2026-07-28 requests', { timeout: 120_000 }, async () => {
    const started = await post(acme, 'tools/call', { name: 'dashboard_verify_fixes', arguments: { scanId: baseline } }, 'dashboard_verify_fixes');
    expect(started.result).toMatchObject({ resultType: 'task', status: 'working', taskId: expect.stringMatching(/^task_/) });
    const taskId = started.result!.taskId as string;
    const done = await until('the task to complete', async () => {
      const t = (await get2026(acme, taskId)).result!;
      return TaskBody.parse(t).status === 'working' ? undefined : t;
    });
    expect(done.status).toBe('completed');
    expect(done.result!.structuredContent).toEqual(await synchronous(await rescanOf(taskId)));

    site.delayMs = 3000;
    const slow = await post(acme, 'tools/call', { name: 'dashboard_verify_fixes', arguments: { scanId: baseline } }, 'dashboard_verify_fixes');
    const slowId = slow.result!.taskId as string;
    expect((await post(acme, 'tasks/cancel', { taskId: slowId }, slowId)).result).toMatchObject({});
    expect((await get2026(acme, slowId)).result).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled by its caller; the scan stopped.' });
    expect(await s.services.db('scans').where({ id: await rescanOf(slowId) }).first()).toMatchObject({ status: 'failed', error: 'cancelled by its caller (tasks/cancel)' });
    site.delayMs = 0;
  });

  it('answers a call with nothing to rescan as a task completed with the tool\'s answer', { timeout: 60_000 }, async () => {
    // A baseline without open findings: no page to rescan, the answer comes at once.
    const clean = await scanToEnd({ siteUrl: site.url('/clean'), scanMode: 'single' });
    const messages: { type: string }[] = [];
    for await (const m of legacy.experimental.tasks.callToolStream({ name: 'dashboard_verify_fixes', arguments: { scanId: clean } }, CallToolResultSchema, { task: {} })) messages.push(m);
    expect(messages.map((m) => m.type)).toEqual(['taskCreated', ...messages.slice(1, -1).map(() => 'taskStatus'), 'result']);
    const result = (messages.at(-1) as unknown as { result: { structuredContent: Record<string, unknown> } }).result;
    const direct = ok(await legacy.callTool({ name: 'dashboard_verify_fixes', arguments: { scanId: clean } })) as Record<string, unknown>;
    expect(direct).toMatchObject({ scanId: null, finished: true, pages: [] });
    expect(result.structuredContent).toEqual(direct);
    // Under 2026-07-28 the answer comes at once, without a task.
    const modern = await post(acme, 'tools/call', { name: 'dashboard_verify_fixes', arguments: { scanId: clean } }, 'dashboard_verify_fixes');
    expect(modern.result).toMatchObject({ structuredContent: direct });
    expect(modern.result!.resultType).toBe('complete');
  });

  it('answers another org\'s task id as an unknown one, in both revisions', { timeout: 60_000 }, async () => {
    const started = await post(acme, 'tools/call', { name: 'dashboard_verify_fixes', arguments: { scanId: baseline } }, 'dashboard_verify_fixes');
    const taskId = started.result!.taskId as string;
    const unknown = `task_${'A'.repeat(32)}`;
    for (const id of [taskId, unknown]) {
      expect((await post(globex, 'tasks/get', { taskId: id }, id)).error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
      expect((await post(globex, 'tasks/cancel', { taskId: id }, id)).error).toEqual({ code: -32602, message: 'Failed to cancel task: Task not found' });
      await expect(legacyGlobex.experimental.tasks.getTask(id)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Failed to retrieve task: Task not found') });
      await expect(legacyGlobex.experimental.tasks.cancelTask(id)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Failed to cancel task: Task not found') });
    }
    // The owner's task went on untouched.
    const done = await until('the task to complete', async () => {
      const t = (await get2026(acme, taskId)).result!;
      return TaskBody.parse(t).status === 'working' ? undefined : t;
    });
    expect(done.status).toBe('completed');
  });
});
