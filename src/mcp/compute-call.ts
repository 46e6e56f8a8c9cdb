/**
 * A tool's compute task (compute/tasks.ts) run in the compute pool, its refusals answered as
 * tool errors: a full queue is rate_limited (with when to retry), a task past its time limit is
 * timed_out, a worker thread that died is failed. Each message names the setting behind it.
 */
import type { ComputeKind, ComputeOutput, ComputeTask } from '../compute/compute.js';
import { WorkerPoolError } from '../compute/worker-pool.js';
import { ToolFailure, type ToolContext } from './tool-context.js';

/** `what` says what was being done, for the messages ("drafting the fix"). */
export async function computed<K extends ComputeKind>(ctx: ToolContext, task: Extract<ComputeTask, { kind: K }>, what: string): Promise<ComputeOutput<K>> {
  const { compute, config } = ctx.services;
  try {
    return (await compute.run(task)).value;
  } catch (err) {
    if (!(err instanceof WorkerPoolError)) throw err;
    switch (err.code) {
      case 'queue-full': {
        const retryAfterSeconds = compute.retryAfterSeconds();
        throw new ToolFailure('rate_limited', `The server is busy: ${config.compute.maxQueue} tasks already wait for its ${config.compute.threads} compute thread(s) (COMPUTE_QUEUE); retry ${what} in ${retryAfterSeconds} s`, undefined, retryAfterSeconds);
      }
      case 'timeout':
        throw new ToolFailure('timed_out', `${capitalised(what)} took longer than ${config.compute.timeoutMs} ms (COMPUTE_TIMEOUT_MS) and was stopped; a smaller input will do`);
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
