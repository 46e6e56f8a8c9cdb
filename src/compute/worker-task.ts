/**
 * The worker side of a worker pool (worker-pool.ts): a task module's default export is
 * workerTask(handler). It tells the pool when a task starts (its time limit counts from then),
 * and answers a handler's error as a value, so that a rejected task on the pool's side always
 * means the thread itself died.
 */
import { parentPort, threadId } from 'node:worker_threads';

export interface TaskMessage<In> {
  key: number;
  input: In;
}

export type TaskReply<Out> = { ok: true; value: Out; threadId: number } | { ok: false; error: string; threadId: number };

/** Posted on the thread's parent port when a task starts (piscina emits it as the pool's 'message'). */
export interface TaskStarted {
  started: number;
}

export function workerTask<In, Out>(handler: (input: In) => Out | Promise<Out>): (message: TaskMessage<In>) => Promise<TaskReply<Out>> {
  return async ({ key, input }) => {
    parentPort?.postMessage({ started: key } satisfies TaskStarted);
    try {
      return { ok: true, value: await handler(input), threadId };
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err), threadId };
    }
  };
}
