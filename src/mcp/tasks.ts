/**
 * Long tools as tasks, in the two vocabularies the endpoint speaks, over one store. A task tool's
 * call queues a scan and the task follows it: `dashboard_scan_site` (the scan is its result) and
 * `dashboard_verify_fixes` (the rescan; its result is the comparison with the baseline, as the
 * tool answers it with `againstScanId` once the rescan has finished).
 *
 * - MCP 2026-07-28, the `io.modelcontextprotocol/tasks` extension: a client that declares the
 *   extension in a request's capabilities gets a task handle for a task tool's call
 *   (`resultType: "task"`) instead of the queued scan, and follows it with `tasks/get` (status,
 *   progress, the tool's result once the scan finished) and `tasks/cancel`.
 * - MCP 2025-11-25, Tasks of the core protocol: the server declares `capabilities.tasks`, the tool
 *   `execution.taskSupport: "optional"`; a `tools/call` with `params.task` is answered with a
 *   `CreateTaskResult`, followed with `tasks/get`, `tasks/result` (waits for the end, then answers
 *   the tool's result), `tasks/list` and `tasks/cancel`.
 *
 * Either way cancelling stops the scan and frees its place in the org's queue, and a client that
 * asks for no task is answered as before. The task lives in the database (table mcp_tasks) and its
 * progress in the scan's row, so any instance answers for it, whichever revision started it. Its id
 * is 192 random bits; the org's tasks are one id space: a task of another org, an unknown id and an
 * id purged after expiry get the same answer.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod/v4';
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type CreateTaskResult,
  type Server,
  type Task,
} from '@modelcontextprotocol/server';
import { CancelTaskRequestSchema, GetTaskPayloadRequestSchema, GetTaskRequestSchema, ListTasksRequestSchema } from '@modelcontextprotocol/core';
import { tools } from '../../generated/tools.js';
import type { Db } from '../db/knex.js';
import { findScan, toScan, type ScanRow } from '../db/scans.js';
import { cancelScan } from '../scans/execute.js';
import { lockClaims } from '../scans/claims.js';
import type { ScanRunner } from '../scans/runner.js';
import type { Identity } from '../domain/access/identity.js';
import { errorResult } from './dispatch.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * The tools whose calls may become tasks: work that outlives a request (a site scan, or the rescan
 * that verifies fixes, waits in its org's queue, then runs for up to SCAN_TIMEOUT_SECONDS).
 */
export const TASK_TOOLS: ReadonlySet<string> = new Set(['dashboard_scan_site', 'dashboard_verify_fixes']);

/** A task tool whose result, once its scan has finished, is not the scan itself but the tool called again about it. */
const RECALLED: Readonly<Record<string, (scan: ScanRow) => Record<string, unknown>>> = {
  dashboard_verify_fixes: (scan) => ({ scanId: scan.baseline_scan_id, againstScanId: scan.id }),
};

/**
 * Calls a tool as `caller` (the dispatch: permission, validation, audit), for the result of a
 * task whose scan has finished.
 */
export type Recall = (caller: Identity, tool: string, args: Record<string, unknown>) => Promise<CallToolResult>;

/**
 * How long a task can be polled, from its creation: a day, longer than a scan may wait and run
 * (SCAN_TIMEOUT_SECONDS defaults to an hour), so that a client that polls now and then still
 * finds the result. After that tasks/get answers "Task has expired" for another day, then the
 * task is purged and answered as unknown. A 2025-11-25 client's requested `ttl` is overridden
 * (the revision allows it) and the actual one answered.
 */
export const TASK_TTL_MS = 24 * 3600 * 1000;
/** How often a client should poll: a scan reports a page at a time, seconds apart. */
export const TASK_POLL_INTERVAL_MS = 2000;
/** How often a waiting tasks/result looks at the task again. */
const RESULT_WAIT_POLL_MS = 500;
/** tasks/list answers this many tasks a page, the newest first. */
export const TASK_LIST_PAGE = 50;

const CANCELLED_REASON = 'cancelled by its caller (tasks/cancel)';

interface TaskRow {
  id: string;
  org_id: string;
  subject: string;
  tool: string;
  scan_id: string | null;
  /**
   * null while the scan decides; 'cancelled' once tasks/cancel stopped it; 'failed' when the tool
   * refused the call at once, 'completed' when it answered at once or its recalled result is kept
   * (result holds the answer).
   */
  status: 'cancelled' | 'failed' | 'completed' | null;
  result?: string | null;
  created_at: string;
  last_updated_at: string;
  expires_at: string;
}

/**
 * Where a task stands, whichever revision tells it. `failed`: the tool's result is an error (the
 * scan failed, or the call was refused), `failure` saying why.
 */
interface TaskState {
  phase: 'working' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  failure?: string;
  lastUpdatedAt: string;
  result?: CallToolResult;
}

/** The task of the 2026-07-28 extension, as tasks/get tells it. */
interface ExtensionTask {
  taskId: string;
  status: 'working' | 'completed' | 'cancelled';
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

/** The `message` of a tool error result ({error, message} as text). */
function failureOf(result: CallToolResult): string | undefined {
  const first = result.content[0];
  if (first?.type !== 'text') return undefined;
  try {
    const message = (JSON.parse(first.text) as { message?: unknown }).message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}

/** What a finished task's statusMessage says of its result. */
function messageOf(tool: string, result: CallToolResult): string {
  const out = result.structuredContent as { scanId?: string | null; summary?: { fixed: number; still_present: number; new: number } | null } | undefined;
  if (tool === 'dashboard_verify_fixes' && out?.summary) {
    return `${out.scanId ? `Rescan ${out.scanId} compared with the baseline` : 'No page had a finding to verify'}: ${out.summary.fixed} fixed, ${out.summary.still_present} still present, ${out.summary.new} new.`;
  }
  return 'Completed.';
}

/** The task's state, from its row and its scan's. */
function stateOf(task: TaskRow, scan: ScanRow | undefined): TaskState {
  if (task.status === 'cancelled') return { phase: 'cancelled', statusMessage: 'Cancelled by its caller; the scan stopped.', lastUpdatedAt: task.last_updated_at };
  if (task.status === 'failed') {
    const result = task.result ? (JSON.parse(task.result) as CallToolResult) : errorResult('failed', 'The call failed; its answer was not kept');
    return { phase: 'failed', failure: failureOf(result), lastUpdatedAt: task.last_updated_at, result };
  }
  if (task.status === 'completed' && task.result) {
    const result = JSON.parse(task.result) as CallToolResult;
    return { phase: 'completed', statusMessage: messageOf(task.tool, result), lastUpdatedAt: task.last_updated_at, result };
  }
  if (!scan) {
    const result = errorResult('not_found', `The scan of this task no longer exists`);
    return { phase: 'failed', failure: failureOf(result), lastUpdatedAt: task.last_updated_at, result };
  }
  const lastUpdatedAt = later(task.last_updated_at, scan.last_updated);
  switch (scan.status) {
    case 'queued':
      return { phase: 'working', lastUpdatedAt, statusMessage: `Scan ${scan.id} is waiting for its turn to run.` };
    case 'running':
      return {
        phase: 'working', lastUpdatedAt,
        statusMessage: scan.total_pages === null ? `Scan ${scan.id} is finding the pages of ${scan.site_url}.` : `Scan ${scan.id}: ${scan.pages_scanned} of ${scan.total_pages} pages checked.`,
      };
    case 'failed': {
      // The scan ran and could not finish: the tool's error result.
      const result = errorResult('failed', `Scan ${scan.id} failed: ${scan.error ?? 'no reason recorded'}`);
      return { phase: 'failed', lastUpdatedAt, statusMessage: `Scan ${scan.id} failed.`, failure: failureOf(result), result };
    }
    default: {
      const output = toScan(scan);
      return {
        phase: 'completed', lastUpdatedAt, statusMessage: `Scan ${scan.id} ${scan.status === 'completed' ? 'completed' : 'completed; some pages could not be checked'}: ${scan.total_issues ?? 0} issues on ${scan.pages_scanned} pages.`,
        result: { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output as unknown as Record<string, unknown> },
      };
    }
  }
}

/**
 * The task in the 2026-07-28 extension's words: a tool's error result is a task `completed` with
 * that result (the extension keeps `failed` for JSON-RPC errors).
 */
function extensionTask(task: TaskRow, s: TaskState): ExtensionTask {
  return {
    taskId: task.id, createdAt: task.created_at, ttlMs: TASK_TTL_MS, pollIntervalMs: TASK_POLL_INTERVAL_MS,
    status: s.phase === 'failed' ? 'completed' : s.phase, lastUpdatedAt: s.lastUpdatedAt,
    ...(s.statusMessage !== undefined ? { statusMessage: s.statusMessage } : {}),
    ...(s.result ? { result: s.result } : {}),
  };
}

/**
 * The task in 2025-11-25's words: a tool's error result makes it `failed` (basic/utilities/tasks:
 * "when the tool result has isError set to true, the task should reach failed status"), its
 * statusMessage saying why; the result itself comes from tasks/result.
 */
function coreTask(task: TaskRow, s: TaskState): Task {
  const statusMessage = s.phase === 'failed' ? (s.failure ?? s.statusMessage) : s.statusMessage;
  return {
    taskId: task.id, status: s.phase, ...(statusMessage !== undefined ? { statusMessage } : {}),
    createdAt: task.created_at, lastUpdatedAt: s.lastUpdatedAt, ttl: TASK_TTL_MS, pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

/** A tasks/list cursor: the last task of a page (creation time and id), opaque to the client. */
const cursorOf = (t: TaskRow) => Buffer.from(JSON.stringify([t.created_at, t.id])).toString('base64url');
function afterCursor(cursor: string): [string, string] | undefined {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    return Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'string' && x.length <= 64) ? (v as [string, string]) : undefined;
  } catch {
    return undefined;
  }
}

export interface ScanTasks {
  /** Declares the extension and registers tasks/get, tasks/update and tasks/cancel on a 2026-07-28 server for `caller`. */
  register(server: Server, caller: Identity): void;
  /**
   * A 2026-07-28 tools/call answered: a task handle instead of `result` when the tool may become
   * a task, the request declared the extension, and the call queued a scan; otherwise `result` as
   * it is.
   */
  answer(caller: Identity, tool: string, envelope: unknown, result: CallToolResult): Promise<CallToolResult>;
  /**
   * Declares `capabilities.tasks` and serves tasks/get, tasks/result, tasks/list and tasks/cancel
   * of 2025-11-25 on a server for `caller`. `signal`: the request's; a client that goes away ends
   * the wait of its tasks/result.
   */
  serveCore(server: Server, caller: Identity, signal?: AbortSignal): void;
  /**
   * Why a 2025-11-25 tools/call may not run as a task (the tool's `execution.taskSupport` is
   * forbidden: -32601, as that revision says), or undefined. Unknown tools are left to the call.
   */
  refuseAsTask(tool: string): ProtocolError | undefined;
  /**
   * A task-augmented 2025-11-25 tools/call answered: the task that follows the scan it queued, or,
   * when the tool refused the call, a task that failed with the tool's error result.
   */
  create(caller: Identity, tool: string, result: CallToolResult): Promise<CreateTaskResult>;
}

const TaskParams = z.looseObject({ taskId: z.string().min(1).max(200) });

export function createScanTasks({ db, scans, heartbeatMs = 30_000, recall }: { db: Db; scans: Pick<ScanRunner, 'cancelled'>; heartbeatMs?: number; recall?: Recall }): ScanTasks {
  /** The caller's task `id`, or the one refusal every other case gets (unknown, another org's, purged). */
  async function own(caller: Identity, id: string, verb: string): Promise<TaskRow> {
    const row = await db<TaskRow>('mcp_tasks').where({ id }).first();
    if (!row || row.org_id !== caller.orgId) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to ${verb} task: Task not found`);
    if (row.expires_at <= new Date().toISOString()) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to ${verb} task: Task has expired`);
    return row;
  }

  /**
   * The task's state now. A recalled tool's task whose scan has finished gets its result from the
   * tool, called again as `caller`; a result that is not an error is kept in the row, so the task
   * stays completed with it.
   */
  async function stateNow(task: TaskRow, caller: Identity): Promise<TaskState> {
    const scan = task.scan_id ? await findScan(db, task.scan_id) : undefined;
    const state = stateOf(task, scan);
    const argsOf = RECALLED[task.tool];
    if (!argsOf || !recall || task.status !== null || !scan || state.phase === 'working') return state;
    const result = await recall(caller, task.tool, argsOf(scan));
    if (result.isError) return { ...state, phase: 'failed', failure: failureOf(result), statusMessage: failureOf(result) ?? state.statusMessage, result };
    await db('mcp_tasks').where({ id: task.id }).whereNull('status').update({ status: 'completed', result: JSON.stringify(result), last_updated_at: state.lastUpdatedAt });
    return { ...state, phase: 'completed', statusMessage: messageOf(task.tool, result), result };
  }

  /** tasks/* from a client that did not declare the extension on that request: -32021, naming it. */
  function requireDeclared(envelope: unknown) {
    if (!declaresTasks(envelope)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  }

  /** Stores a new task of `caller`'s: one that follows scan `scanId`, one that failed at once with `refused`, or one the tool `answered` at once. */
  async function store(caller: Identity, tool: string, follows: { scanId: string } | { refused: CallToolResult } | { answered: CallToolResult }): Promise<TaskRow> {
    const now = new Date();
    const t = now.toISOString();
    const row: TaskRow = {
      id: `task_${randomBytes(24).toString('base64url')}`, org_id: caller.orgId, subject: caller.subject, tool,
      scan_id: 'scanId' in follows ? follows.scanId : null,
      status: 'refused' in follows ? 'failed' : 'answered' in follows ? 'completed' : null,
      result: 'refused' in follows ? JSON.stringify(follows.refused) : 'answered' in follows ? JSON.stringify(follows.answered) : null,
      created_at: t, last_updated_at: t, expires_at: new Date(now.getTime() + TASK_TTL_MS).toISOString(),
    };
    // Tasks expired a TTL ago go: until then a poll is told "expired" rather than "not found".
    await db('mcp_tasks').where('expires_at', '<', new Date(now.getTime() - TASK_TTL_MS).toISOString()).delete();
    try {
      await db('mcp_tasks').insert(row);
    } catch (err) {
      // Nobody can follow the scan without its task: it does not run.
      if ('scanId' in follows && (await cancelScan(db, follows.scanId, 'its task could not be stored'))) scans.cancelled(follows.scanId);
      throw err;
    }
    // Answered only once stored: a tasks/get through any instance finds it from here on.
    return row;
  }

  /**
   * Stops the task's scan and marks the task cancelled, together, on whichever instance: false
   * when the scan had finished first (it keeps its result, and the task completes instead).
   */
  async function stop(task: TaskRow): Promise<boolean> {
    const stopped = await db.transaction(async (tx) => {
      // Not between a claim's reading the scan as waiting and its marking it running.
      await lockClaims(db, tx);
      if (!(await cancelScan(tx, task.scan_id!, CANCELLED_REASON))) return false;
      await tx('mcp_tasks').where({ id: task.id }).update({ status: 'cancelled', last_updated_at: new Date().toISOString() });
      return true;
    });
    if (stopped) scans.cancelled(task.scan_id!);
    return stopped;
  }

  /** The scan a task tool's call queued, which its task follows; undefined when the call was answered at once (refused, or nothing left to run). */
  const scanIdOf = (result: CallToolResult) => {
    const out = result.structuredContent as { scanId?: unknown; finished?: unknown } | undefined;
    return !result.isError && typeof out?.scanId === 'string' && out.finished !== true ? out.scanId : undefined;
  };

  return {
    async answer(caller, tool, envelope, result) {
      const scanId = scanIdOf(result);
      if (!TASK_TOOLS.has(tool) || scanId === undefined || !declaresTasks(envelope)) return result;
      const row = await store(caller, tool, { scanId });
      const { result: _none, ...task } = extensionTask(row, stateOf(row, await findScan(db, scanId)));
      return { ...task, resultType: 'task' } as unknown as CallToolResult;
    },

    register(server, caller) {
      server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
      server.setRequestHandler('tasks/get', { params: TaskParams }, async ({ taskId }, ctx) => {
        requireDeclared(ctx.mcpReq.envelope);
        const task = await own(caller, taskId, 'retrieve');
        return { ...extensionTask(task, await stateNow(task, caller)) };
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
        if (task.status !== null || !task.scan_id) return {};
        await stop(task);
        return {};
      });
    },

    refuseAsTask(tool) {
      if (TASK_TOOLS.has(tool) || !Object.hasOwn(tools, tool)) return undefined;
      return new ProtocolError(ProtocolErrorCode.MethodNotFound, `${tool} does not run as a task (its execution.taskSupport is forbidden): call it without params.task`);
    },

    async create(caller, tool, result) {
      const scanId = scanIdOf(result);
      const row = await store(caller, tool, scanId !== undefined ? { scanId } : result.isError ? { refused: result } : { answered: result });
      // A task begins working (basic/utilities/tasks: "Tasks MUST begin in the working status"):
      // a refused call is failed, and one answered at once completed, from the first tasks/get on.
      const state: TaskState = scanId === undefined ? { phase: 'working', lastUpdatedAt: row.created_at } : stateOf(row, await findScan(db, scanId));
      return { task: coreTask(row, state) };
    },

    serveCore(server, caller, signal) {
      server.registerCapabilities({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });
      // The params are checked by the SDK's schemas of 2025-11-25 (it types these methods as no
      // handler's, so they are registered with their schemas given); the answers are this store's.
      server.setRequestHandler('tasks/get', { params: GetTaskRequestSchema.shape.params }, async ({ taskId }) => {
        const task = await own(caller, taskId, 'retrieve');
        return coreTask(task, await stateNow(task, caller));
      });

      server.setRequestHandler('tasks/result', { params: GetTaskPayloadRequestSchema.shape.params }, async ({ taskId }, ctx) => {
        const gone = signal ? AbortSignal.any([ctx.mcpReq.signal, signal]) : ctx.mcpReq.signal;
        let told: { key: string; at: number } | undefined;
        for (;;) {
          const task = await own(caller, taskId, 'retrieve');
          const state = await stateNow(task, caller);
          // A cancelled call has no result; the client is answered an error rather than kept waiting.
          if (state.phase === 'cancelled') throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Task was cancelled: the scan stopped before it had a result');
          if (state.phase !== 'working') return { ...state.result!, _meta: { ...state.result!._meta, [RELATED_TASK_META_KEY]: { taskId } } };
          // Until the end, the task's progress on the response's stream: at each change, and now
          // and then without one, so that no idle timer closes a long wait.
          const shown = coreTask(task, state);
          const key = `${shown.status}\n${shown.statusMessage ?? ''}`;
          if (!told || told.key !== key || Date.now() - told.at >= heartbeatMs) {
            await ctx.mcpReq.notify({ method: 'notifications/tasks/status', params: shown });
            told = { key, at: Date.now() };
          }
          await sleep(RESULT_WAIT_POLL_MS, undefined, { signal: gone });
        }
      });

      server.setRequestHandler('tasks/list', { params: ListTasksRequestSchema.shape.params }, async (params) => {
        const cursor = params?.cursor;
        const after = cursor === undefined ? undefined : afterCursor(cursor);
        if (cursor !== undefined && !after) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to list tasks: the cursor is not one this server gave');
        let query = db<TaskRow>('mcp_tasks').where({ org_id: caller.orgId }).where('expires_at', '>', new Date().toISOString());
        if (after) {
          const [createdAt, id] = after;
          query = query.where((q) => void q.where('created_at', '<', createdAt).orWhere((same) => void same.where('created_at', createdAt).andWhere('id', '<', id)));
        }
        const rows = await query.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(TASK_LIST_PAGE + 1);
        const page = rows.slice(0, TASK_LIST_PAGE);
        const scanIds = page.flatMap((t) => (t.scan_id ? [t.scan_id] : []));
        const scanRows = scanIds.length ? await db<ScanRow>('scans').whereIn('id', scanIds) : [];
        const byId = new Map(scanRows.map((s) => [s.id, s]));
        return {
          tasks: page.map((t) => coreTask(t, stateOf(t, t.scan_id ? byId.get(t.scan_id) : undefined))),
          ...(rows.length > TASK_LIST_PAGE ? { nextCursor: cursorOf(page.at(-1)!) } : {}),
        };
      });

      server.setRequestHandler('tasks/cancel', { params: CancelTaskRequestSchema.shape.params }, async ({ taskId }) => {
        const terminal = (phase: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${phase}'`);
        const task = await own(caller, taskId, 'cancel');
        const before = await stateNow(task, caller);
        if (before.phase !== 'working' || !task.scan_id) throw terminal(before.phase);
        const stopped = await stop(task);
        const after = await own(caller, taskId, 'cancel');
        const state = await stateNow(after, caller);
        if (!stopped) throw terminal(state.phase);
        return coreTask(after, state);
      });
    },
  };
}
