/**
 * A tool's compute task (compute/tasks.ts) run in the compute pool for the caller's organization,
 * its refusals answered as tool errors: a full queue, or an organization with as many tasks as it
 * may have, is rate_limited (with when to retry); a task past its time limit, or one that waited
 * too long for its turn, is timed_out; a worker thread that died is failed. Each message names the
 * setting behind it. A client that goes away withdraws its task.
 */
import type { ComputeKind, ComputeOutput, ComputeTask } from '../compute/compute.js';
import { WorkerPoolError } from '../compute/worker-pool.js';
import { ToolFailure, type ToolContext } from './tool-context.js';
import type { McpDeps } from './services.js';

/** `what` says what was being done, for the messages ("drafting the fix"). */
export async function computed<K extends ComputeKind>({ compute, config }: Pick<McpDeps, 'compute' | 'config'>, ctx: ToolContext, task: Extract<ComputeTask, { kind: K }>, what: string): Promise<ComputeOutput<K>> {
  const owner = ctx.caller.orgId;
  try {
    return (await compute.run(task, { owner, signal: ctx.signal })).value;
  } catch (err) {
    if (!(err instanceof WorkerPoolError)) throw err;
    switch (err.code) {
      case 'queue-full': {
        const retryAfterSeconds = compute.retryAfterSeconds();
        throw new ToolFailure('rate_limited', `The server is busy: ${config.compute.maxQueue} tasks already wait for its ${config.compute.threads} compute thread(s) (COMPUTE_QUEUE); retry ${what} in ${retryAfterSeconds} s`, undefined, retryAfterSeconds);
      }
      case 'owner-busy': {
        const retryAfterSeconds = compute.retryAfterSeconds(owner);
        const most = config.compute.maxRunningPerOrg + config.compute.maxQueuedPerOrg;
        throw new ToolFailure(
          'rate_limited',
          `Your organization already has ${most} compute tasks running or waiting (COMPUTE_MAX_RUNNING_PER_ORG ${config.compute.maxRunningPerOrg}, COMPUTE_MAX_QUEUED_PER_ORG ${config.compute.maxQueuedPerOrg}); retry ${what} in ${retryAfterSeconds} s`,
          undefined,
          retryAfterSeconds,
        );
      }
      case 'waited':
        throw new ToolFailure('timed_out', `${capitalised(what)} waited longer than ${config.compute.waitMs} ms (COMPUTE_WAIT_MS) for a compute thread and was withdrawn; the server is busy, retry in ${compute.retryAfterSeconds()} s`);
      case 'timeout':
        throw new ToolFailure('timed_out', `${capitalised(what)} took longer than ${config.compute.timeoutMs} ms (COMPUTE_TIMEOUT_MS) and was stopped; a smaller input will do`);
      case 'withdrawn':
        // Nobody reads this answer: the client is gone. The audit row records it.
        throw new ToolFailure('unavailable', `The client went away before ${what} was done; it was withdrawn`);
      case 'crashed':
        ctx.log.error({ kind: task.kind, reason: err.message }, 'a compute thread died; it was replaced');
        throw new ToolFailure('failed', `${capitalised(what)} failed: the thread doing it stopped and was replaced; the request id ${ctx.requestId} identifies it in the server log`);
      case 'closed':
        throw new ToolFailure('unavailable', 'The server is shutting down; retry in a moment');
      case 'failed':
        // The task itself threw (a bug, or an input the engine cannot take): as if it had run here.
        throw new Error(err.message, { cause: err });
    }
  }
}

const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
