/**
 * The worker pool behind the scan checker and the compute pool: work runs on another thread, a
 * task past its time limit is abandoned and its thread replaced, a full queue refuses at once, a
 * thread that dies fails its task and the next task gets a new thread.
 */
import { threadId as mainThreadId } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorkerPool, taskModule, WorkerPoolError, type WorkerPool } from '../../../src/compute/worker-pool.js';
import type { TestTask } from './test-tasks.js';

let pool: WorkerPool<TestTask, string> | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

const open = (options: { threads?: number; maxQueue?: number; timeoutMs?: number } = {}) =>
  (pool = createWorkerPool<TestTask, string>({
    module: taskModule(import.meta.url, 'test-tasks'),
    threads: options.threads ?? 1,
    maxQueue: options.maxQueue ?? 10,
    timeoutMs: options.timeoutMs ?? 60_000,
  }));

const failureOf = (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err);

describe('worker pool', () => {
  it('starts no thread until the first task, then runs tasks on a thread other than the main one', async () => {
    const p = open();
    expect(p.threads).toBe(0);
    let timerFired = false;
    const running = p.run({ kind: 'echo', value: 'hi' });
    setTimeout(() => (timerFired = true), 0);
    const ran = await running;
    expect(ran.value).toBe('hi');
    expect(ran.threadId).not.toBe(mainThreadId);
    // The event loop kept turning while the task ran elsewhere.
    expect(timerFired).toBe(true);
  });

  it('abandons a task past its time limit, replaces its thread, and runs the next task', async () => {
    const p = open({ timeoutMs: 300 });
    const before = await p.run({ kind: 'echo', value: 'first' });
    const spinning = failureOf(p.run({ kind: 'spin' }));
    const queued = p.run({ kind: 'echo', value: 'queued behind it' });
    const err = await spinning;
    expect(err).toBeInstanceOf(WorkerPoolError);
    expect(err).toMatchObject({ code: 'timeout', message: expect.stringMatching(/longer than 300 ms/) });
    expect((await queued).value).toBe('queued behind it'); // the replacement thread takes the queue
    const after = await p.run({ kind: 'echo', value: 'next' });
    expect(after.value).toBe('next');
    expect(after.threadId).not.toBe(before.threadId); // the spinning thread was terminated
  });

  it('counts the time limit from when a thread starts the task, not from when it was queued', async () => {
    const p = open({ timeoutMs: 3_000 });
    // The second waits 2.5 s behind the first, then runs 1.5 s: 4 s after it was queued, within its limit of its start.
    const [first, second] = await Promise.all([p.run({ kind: 'wait', ms: 2_500 }), p.run({ kind: 'wait', ms: 1_500 })]);
    expect([first.value, second.value]).toEqual(['waited', 'waited']);
  });

  it('refuses a task at once when the queue is full', async () => {
    const p = open({ maxQueue: 1 });
    const running = p.run({ kind: 'wait', ms: 1_000 });
    const queued = p.run({ kind: 'wait', ms: 10 });
    const refused = await failureOf(p.run({ kind: 'echo', value: 'one too many' }));
    expect(refused).toMatchObject({ code: 'queue-full' });
    expect((await running).value).toBe('waited');
    expect((await queued).value).toBe('waited');
    // Background work waits however long the queue is.
    const a = p.run({ kind: 'wait', ms: 200 });
    const b = p.run({ kind: 'echo', value: 'x' });
    const c = p.run({ kind: 'echo', value: 'background' }, { background: true });
    expect((await Promise.all([a, b, c])).map((r) => r.value)).toEqual(['waited', 'x', 'background']);
  });

  it('fails the task of a thread that dies, and gives the next task a new thread', async () => {
    const p = open();
    const before = await p.run({ kind: 'echo', value: 'first' });
    const crashing = failureOf(p.run({ kind: 'crash' }));
    const queued = p.run({ kind: 'echo', value: 'queued behind it' });
    const err = await crashing;
    expect(err).toMatchObject({ code: 'crashed', message: expect.stringMatching(/simulated crash of the thread/) });
    expect((await queued).value).toBe('queued behind it');
    const after = await p.run({ kind: 'echo', value: 'next' });
    expect(after.value).toBe('next');
    expect(after.threadId).not.toBe(before.threadId);
  });

  it('answers a task that throws as failed, on the same thread', async () => {
    const p = open();
    const before = await p.run({ kind: 'echo', value: 'first' });
    expect(await failureOf(p.run({ kind: 'throw' }))).toMatchObject({ code: 'failed', message: 'the task refused its input' });
    expect((await p.run({ kind: 'echo', value: 'next' })).threadId).toBe(before.threadId);
  });

  it('withdraws a task whose signal aborts, and fails pending tasks on close', async () => {
    const p = open();
    const running = p.run({ kind: 'wait', ms: 500 });
    const controller = new AbortController();
    const queued = failureOf(p.run({ kind: 'echo', value: 'x' }, { signal: controller.signal }));
    controller.abort(new Error('caller went away'));
    expect(await queued).toMatchObject({ message: 'caller went away' });
    expect((await running).value).toBe('waited');
    const pending = failureOf(p.run({ kind: 'wait', ms: 5_000 }));
    await p.close();
    expect(await pending).toMatchObject({ code: 'closed' });
    expect(await failureOf(p.run({ kind: 'echo', value: 'late' }))).toMatchObject({ code: 'closed' });
  });
});
