/**
 * Scans as tasks: the `io.modelcontextprotocol/tasks` extension of MCP 2026-07-28. A client that
 * declares the extension in a request's capabilities gets a task handle for `dashboard_scan_site`
 * (`resultType: "task"`) instead of the queued scan, and follows it with `tasks/get` (status,
 * progress, the scan as the tool's result once it finished) and `tasks/cancel` (the scan stops and
 * its place in the org's queue frees). A client that does not declare it is answered as before.
 *
 * The task lives in the database (table mcp_tasks) and its progress in the scan's row, so any
 * instance answers for it. Its id is 192 random bits; a task of another org, an unknown id and an
 * id purged after expiry get the same answer.
 */
import { randomBytes } from 'node:crypto';
import * as z from 'zod/v4';
import { CLIENT_CAPABILITIES_META_KEY, MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, type CallToolResult, type Server } from '@modelcontextprotocol/server';
import type { Db } from '../db/knex.js';
import { findScan, toScan, type ScanRow } from '../db/scans.js';
import { cancelScan } from '../scans/execute.js';
import { lockClaims } from '../scans/claims.js';
import type { ScanRunner } from '../scans/runner.js';
import type { Identity } from '../domain/access/identity.js';
import { errorResult } from './dispatch.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The tools whose calls may become tasks: work that outlives a request (a site scan waits in its org's queue, then runs for up to SCAN_TIMEOUT_SECONDS). */
export const TASK_TOOLS: ReadonlySet<string> = new Set(['dashboard_scan_site']);

/**
 * How long a task can be polled, from its creation: a day, longer than a scan may wait and run
 * (SCAN_TIMEOUT_SECONDS defaults to an hour), so that a client that polls now and then still
 * finds the result. After that tasks/get answers "Task has expired" for another day, then the
 * task is purged and answered as unknown.
 */
export const TASK_TTL_MS = 24 * 3600 * 1000;
/** How often a client should poll: a scan reports a page at a time, seconds apart. */
export const TASK_POLL_INTERVAL_MS = 2000;

const CANCELLED_REASON = 'cancelled by its caller (tasks/cancel)';

interface TaskRow {
  id: string;
  org_id: string;
  subject: string;
  tool: string;
  scan_id: string | null;
  status: 'cancelled' | null;
  created_at: string;
  last_updated_at: string;
  expires_at: string;
}

/** The `Task` fields every answer carries. */
interface TaskShape {
  taskId: string;
  status: 'working' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  result?: CallToolResult;
}

/** Whether the request declared the extension in its per-request client capabilities. */
export function declaresTasks(envelope: unknown): boolean {
  const caps = (envelope as Record<string, { extensions?: Record<string, unknown> } | undefined> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  const declared = caps?.extensions?.[TASKS_EXTENSION];
  return typeof declared === 'object' && declared !== null;
}

const later = (a: string, b: string) => (a > b ? a : b);

/** The task as tasks/get tells it, from its row and its scan's. */
function detailed(task: TaskRow, scan: ScanRow | undefined): TaskShape {
  const base = { taskId: task.id, createdAt: task.created_at, ttlMs: TASK_TTL_MS, pollIntervalMs: TASK_POLL_INTERVAL_MS };
  if (task.status === 'cancelled') return { ...base, status: 'cancelled', statusMessage: 'Cancelled by its caller; the scan stopped.', lastUpdatedAt: task.last_updated_at };
  if (!scan) {
    return { ...base, status: 'completed', lastUpdatedAt: task.last_updated_at, result: errorResult('not_found', `The scan of this task no longer exists`) };
  }
  const lastUpdatedAt = later(task.last_updated_at, scan.last_updated);
  switch (scan.status) {
    case 'queued':
      return { ...base, status: 'working', lastUpdatedAt, statusMessage: `Scan ${scan.id} is waiting for its turn to run.` };
    case 'running':
      return {
        ...base, status: 'working', lastUpdatedAt,
        statusMessage: scan.total_pages === null ? `Scan ${scan.id} is finding the pages of ${scan.site_url}.` : `Scan ${scan.id}: ${scan.pages_scanned} of ${scan.total_pages} pages checked.`,
      };
    case 'failed':
      // The scan ran and could not finish: the tool's error result, as a task that completed.
      return { ...base, status: 'completed', lastUpdatedAt, statusMessage: `Scan ${scan.id} failed.`, result: errorResult('failed', `Scan ${scan.id} failed: ${scan.error ?? 'no reason recorded'}`) };
    default: {
      const output = toScan(scan);
      return {
        ...base, status: 'completed', lastUpdatedAt, statusMessage: `Scan ${scan.id} ${scan.status === 'completed' ? 'completed' : 'completed; some pages could not be checked'}: ${scan.total_issues ?? 0} issues on ${scan.pages_scanned} pages.`,
        result: { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output as unknown as Record<string, unknown> },
      };
    }
  }
}

export interface ScanTasks {
  /** Declares the extension and registers tasks/get, tasks/update and tasks/cancel on a 2026-07-28 server for `caller`. */
  register(server: Server, caller: Identity): void;
  /**
   * A tools/call answered: a task handle instead of `result` when the tool may become a task, the
   * request declared the extension, and the call queued a scan; otherwise `result` as it is.
   */
  answer(caller: Identity, tool: string, envelope: unknown, result: CallToolResult): Promise<CallToolResult>;
}

const TaskParams = z.looseObject({ taskId: z.string().min(1).max(200) });

export function createScanTasks({ db, scans }: { db: Db; scans: Pick<ScanRunner, 'cancelled'> }): ScanTasks {
  /** The caller's task `id`, or the one refusal every other case gets (unknown, another org's, purged). */
  async function own(caller: Identity, id: string, verb: string): Promise<TaskRow> {
    const row = await db<TaskRow>('mcp_tasks').where({ id }).first();
    if (!row || row.org_id !== caller.orgId) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to ${verb} task: Task not found`);
    if (row.expires_at <= new Date().toISOString()) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to ${verb} task: Task has expired`);
    return row;
  }

  /** tasks/* from a client that did not declare the extension on that request: -32021, naming it. */
  function requireDeclared(envelope: unknown) {
    if (!declaresTasks(envelope)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  }

  async function start(caller: Identity, tool: string, scanId: string): Promise<TaskShape> {
    const now = new Date();
    const t = now.toISOString();
    const row: TaskRow = {
      id: `task_${randomBytes(24).toString('base64url')}`, org_id: caller.orgId, subject: caller.subject, tool, scan_id: scanId, status: null,
      created_at: t, last_updated_at: t, expires_at: new Date(now.getTime() + TASK_TTL_MS).toISOString(),
    };
    // Tasks expired a TTL ago go: until then a poll is told "expired" rather than "not found".
    await db('mcp_tasks').where('expires_at', '<', new Date(now.getTime() - TASK_TTL_MS).toISOString()).delete();
    try {
      await db('mcp_tasks').insert(row);
    } catch (err) {
      // Nobody can follow the scan without its task: it does not run.
      if (await cancelScan(db, scanId, 'its task could not be stored')) scans.cancelled(scanId);
      throw err;
    }
    // Answered only once stored: a tasks/get through any instance finds it from here on.
    return detailed(row, await findScan(db, scanId));
  }

  return {
    async answer(caller, tool, envelope, result) {
      const scanId = (result.structuredContent as { scanId?: unknown } | undefined)?.scanId;
      if (!TASK_TOOLS.has(tool) || result.isError || typeof scanId !== 'string' || !declaresTasks(envelope)) return result;
      const { result: _none, ...task } = await start(caller, tool, scanId);
      return { ...task, resultType: 'task' } as unknown as CallToolResult;
    },

    register(server, caller) {
      server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
      server.setRequestHandler('tasks/get', { params: TaskParams }, async ({ taskId }, ctx) => {
        requireDeclared(ctx.mcpReq.envelope);
        const task = await own(caller, taskId, 'retrieve');
        return { ...detailed(task, task.scan_id ? await findScan(db, task.scan_id) : undefined) };
      });
      // No task of this server ever asks for input: an update is acknowledged and its responses ignored, as for keys not outstanding.
      server.setRequestHandler('tasks/update', { params: TaskParams }, async ({ taskId }, ctx) => {
        requireDeclared(ctx.mcpReq.envelope);
        await own(caller, taskId, 'update');
        return {};
      });
      server.setRequestHandler('tasks/cancel', { params: TaskParams }, async ({ taskId }, ctx) => {
        requireDeclared(ctx.mcpReq.envelope);
        const task = await own(caller, taskId, 'cancel');
        if (task.status === 'cancelled' || !task.scan_id) return {};
        // The scan's row and the task's change together, on whichever instance: a scan that
        // finished first keeps its result, and the task completes instead.
        const stopped = await db.transaction(async (tx) => {
          // Not between a claim's reading the scan as waiting and its marking it running.
          await lockClaims(db, tx);
          if (!(await cancelScan(tx, task.scan_id!, CANCELLED_REASON))) return false;
          await tx('mcp_tasks').where({ id: task.id }).update({ status: 'cancelled', last_updated_at: new Date().toISOString() });
          return true;
        });
        if (stopped) scans.cancelled(task.scan_id);
        return {};
      });
    },
  };
}
