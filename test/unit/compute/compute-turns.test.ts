/**
 * The compute pool's turns: organizations take turns for the threads (a bystander's task runs
 * next, not after a flood's queue), each has a cap on what it may have running and waiting, a
 * task waits for its turn at most COMPUTE_WAIT_MS (and is answered then, never left waiting),
 * and a caller that goes away withdraws its task. Ordering is asserted, not durations.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCompute, type Compute, type ComputeTask } from '../../../src/compute/compute.js';
import { WorkerPoolError } from '../../../src/compute/worker-pool.js';
import type { TestTask } from './test-tasks.js';

let compute: Compute | undefined;
afterEach(async () => {
  await compute?.close();
  compute = undefined;
});

interface Limits {
  threads?: number;
  maxQueue?: number;
  maxRunningPerOrg?: number;
  maxQueuedPerOrg?: number;
  waitMs?: number;
}

function open(limits: Limits = {}): Compute {
  const threads = limits.threads ?? 1;
  compute = createCompute(
    {
      compute: {
        threads,
        maxQueue: limits.maxQueue ?? 100,
        timeoutMs: 60_000,
        nice: 0,
        maxRunningPerOrg: limits.maxRunningPerOrg ?? threads,
        maxQueuedPerOrg: limits.maxQueuedPerOrg ?? 100,
        waitMs: limits.waitMs ?? 60_000,
      },
    },
    { module: new URL('./test-tasks.ts', import.meta.url) },
  );
  return compute;
}

/** Runs a test task as `owner`; the compute pool's types name its own tasks. */
const run = (c: Compute, owner: string, task: TestTask, signal?: AbortSignal) =>
  c.run(task as unknown as ComputeTask & { kind: 'digest' }, { owner, signal }).then((r) => r.value as unknown as string);

const failureOf = (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err);

describe('compute turns', () => {
  it("runs another organization's task next, not after one organization's 20 queued tasks", async () => {
    const c = open({ threads: 1 });
    await run(c, 'warm', { kind: 'echo', value: 'warm' }); // the thread is up
    const finished: string[] = [];
    const note = (p: Promise<string>) => p.then((v) => void finished.push(v));
    const flood = [note(run(c, 'org-a', { kind: 'wait', ms: 300 }).then(() => 'a-running'))];
    for (let i = 0; i < 20; i++) flood.push(note(run(c, 'org-a', { kind: 'echo', value: `a-queued-${i}` })));
    const bystander = note(run(c, 'org-b', { kind: 'echo', value: 'b' }));
    await Promise.all([...flood, bystander]);
    expect(finished[0]).toBe('a-running');
    expect(finished[1]).toBe('b');
    expect(finished.slice(2)).toEqual(Array.from({ length: 20 }, (_, i) => `a-queued-${i}`));
  });

  it('leaves a thread for the others: one organization runs at most COMPUTE_MAX_RUNNING_PER_ORG tasks at once', async () => {
    const c = open({ threads: 2, maxRunningPerOrg: 1 });
    const finished: string[] = [];
    const note = (p: Promise<string>) => p.then((v) => void finished.push(v));
    // Org A's endless task holds one thread; its second task waits for A's turn, not for a thread.
    const stopA = new AbortController();
    const endless = failureOf(run(c, 'org-a', { kind: 'spin' }, stopA.signal));
    const second = note(run(c, 'org-a', { kind: 'echo', value: 'a-second' }));
    await note(run(c, 'org-b', { kind: 'echo', value: 'b' }));
    expect(finished).toEqual(['b']); // answered on the other thread while A's task runs
    stopA.abort();
    expect(await endless).toMatchObject({ code: 'withdrawn' });
    await second;
    expect(finished).toEqual(['b', 'a-second']);
  });

  it('refuses at once what one organization has beyond its caps, and takes the others', async () => {
    const c = open({ threads: 1, maxRunningPerOrg: 1, maxQueuedPerOrg: 2 });
    const held = run(c, 'org-a', { kind: 'wait', ms: 500 });
    const queued = [run(c, 'org-a', { kind: 'echo', value: 'a1' }), run(c, 'org-a', { kind: 'echo', value: 'a2' })];
    const refused = await failureOf(run(c, 'org-a', { kind: 'echo', value: 'a3' }));
    expect(refused).toBeInstanceOf(WorkerPoolError);
    expect(refused).toMatchObject({ code: 'owner-busy' });
    expect(c.retryAfterSeconds('org-a')).toBeGreaterThanOrEqual(1);
    expect(await run(c, 'org-b', { kind: 'echo', value: 'b' })).toBe('b');
    expect(await Promise.all([held, ...queued])).toEqual(['waited', 'a1', 'a2']);
  });

  it('answers a task that waits past COMPUTE_WAIT_MS with waited while the task ahead still runs, never leaving it waiting', async () => {
    const c = open({ threads: 1, waitMs: 300 });
    const stopA = new AbortController();
    const endless = failureOf(run(c, 'org-a', { kind: 'spin' }, stopA.signal));
    const behind = await failureOf(run(c, 'org-b', { kind: 'echo', value: 'never ran' }));
    expect(behind).toBeInstanceOf(WorkerPoolError);
    expect(behind).toMatchObject({ code: 'waited', message: expect.stringMatching(/waited longer than 300 ms/) });
    stopA.abort();
    expect(await endless).toMatchObject({ code: 'withdrawn' });
    expect(await run(c, 'org-b', { kind: 'echo', value: 'after' })).toBe('after');
  });

  it('withdraws a waiting task whose caller goes away: it never runs, and the next one takes its turn', async () => {
    const c = open({ threads: 1 });
    const finished: string[] = [];
    const note = (p: Promise<string>) => p.then((v) => void finished.push(v));
    const long = note(run(c, 'org-a', { kind: 'wait', ms: 500 }).then(() => 'a-long'));
    const client = new AbortController();
    const gone = failureOf(run(c, 'org-b', { kind: 'echo', value: 'b-gone' }, client.signal));
    const next = note(run(c, 'org-c', { kind: 'echo', value: 'c' }));
    client.abort();
    expect(await gone).toMatchObject({ code: 'withdrawn' });
    await Promise.all([long, next]);
    expect(finished).toEqual(['a-long', 'c']);
    expect(c.pending).toBe(0);
  });

  it('abandons a running task whose caller goes away, and its thread takes the next', async () => {
    const c = open({ threads: 1 });
    await run(c, 'warm', { kind: 'echo', value: 'warm' });
    const client = new AbortController();
    const spinning = failureOf(run(c, 'org-a', { kind: 'spin' }, client.signal));
    const next = run(c, 'org-b', { kind: 'echo', value: 'next' });
    setTimeout(() => client.abort(), 100);
    expect(await spinning).toMatchObject({ code: 'withdrawn' });
    expect(await next).toBe('next');
  });
});
