/**
 * The young generation's limit (src/cli/startup-heap.ts): a process that keeps objects alive
 * across many collections makes V8 grow its young generation; governed, it stops at the limit,
 * ungoverned (V8's own ceiling) it grows far past it. Each case runs in a fresh process, since V8
 * flags are per process.
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const module = pathToFileURL(join(import.meta.dirname, '..', '..', 'src', 'cli', 'startup-heap.ts')).href;

/** The young generation's size (MiB) after a workload whose survivors make V8 grow it. */
function youngGenerationAfterLoad(limitMb: number): Promise<number> {
  const script = `
    import { governYoungGeneration } from ${JSON.stringify(module)};
    import { getHeapSpaceStatistics } from 'node:v8';
    governYoungGeneration(${limitMb});
    const size = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
    const kept = [];
    let round = 0;
    // Turns of the event loop, as a server's requests are: a collection's entry is seen between them.
    const step = () => {
      for (let i = 0; i < 20000; i++) kept.push({ i, s: 'x' + i });
      if (kept.length > 200000) kept.splice(0, 100000);
      if (++round < 300) setImmediate(step);
      else console.log(size());
    };
    step();`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`exit ${code}`))));
  });
}

it('stops the young generation growing past its limit, where V8 alone grows it far beyond', async () => {
  const governed = await youngGenerationAfterLoad(8);
  const ungoverned = await youngGenerationAfterLoad(256);
  // One doubling may land between a collection and its entry being seen.
  expect(governed).toBeLessThanOrEqual(16);
  expect(governed).toBeGreaterThanOrEqual(2);
  expect(ungoverned).toBeGreaterThan(32);
});

/** The young generation (MiB) and the heap's committed size (MiB) after a start-up's garbage, then `release`. */
function afterStartup(release: boolean): Promise<{ young: number; committed: number }> {
  const script = `
    import { governYoungGeneration } from ${JSON.stringify(module)};
    import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
    // A start-up's garbage: parsed documents kept for a while (promoted), then dropped.
    let kept = [];
    for (let i = 0; i < 40; i++) kept.push(JSON.parse(JSON.stringify(Array.from({ length: 5000 }, (_, j) => ({ j, s: 'x' + j })))));
    kept = null;
    if (${release}) governYoungGeneration(8);
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
    console.log(JSON.stringify({ young, committed: getHeapStatistics().total_heap_size / 1048576 }));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim()) as { young: number; committed: number }) : reject(new Error(`exit ${code}`))));
  });
}

it('gives back what starting left behind once the server listens: the young generation at its least, the heap smaller', async () => {
  const kept = await afterStartup(false);
  const released = await afterStartup(true);
  expect(released.young).toBeLessThanOrEqual(1);
  expect(kept.young).toBeGreaterThan(released.young);
  expect(released.committed).toBeLessThan(kept.committed - 4);
});
