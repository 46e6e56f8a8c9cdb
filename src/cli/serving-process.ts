/**
 * `pactum serve` runs with two settings only a process's start can make, so when it was started
 * without them it replaces itself (same PID, same descriptors; process.execve) with one that has
 * them, before any module of the server loads:
 *   - V8's `--no-concurrent-recompilation`: optimized code is compiled on the main thread. Compiled
 *     on background threads, each thread's compiler memory comes from a malloc arena of its own
 *     that stays resident afterwards: any load (16 clients of small requests as much as a flood of
 *     anonymous bodies) left the server 35-48 MB above idle, against 16-27 MB this way.
 *   - `MALLOC_ARENA_MAX=2` unless the environment sets it: the threads that remain (libuv's pool,
 *     V8's collector) share two arenas instead of one each.
 * Node allows neither in NODE_OPTIONS. A runtime without process.execve serves as started.
 * `scripts/bench/fairness.ts` (deep-json) and `mcp.ts` print the memory and the throughput.
 */
export const SERVING_V8_FLAGS = ['--no-concurrent-recompilation'] as const;
export const SERVING_MALLOC_ARENAS = '2';

/** The command line and environment to serve with, or null when this process already has them. */
export function servingRelaunch(
  execArgv: readonly string[],
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { args: string[]; env: NodeJS.ProcessEnv } | null {
  const missing = SERVING_V8_FLAGS.filter((f) => !execArgv.includes(f));
  if (!missing.length && env.MALLOC_ARENA_MAX !== undefined) return null;
  return {
    args: [argv[0]!, ...execArgv, ...missing, ...argv.slice(1)],
    env: { ...env, MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? SERVING_MALLOC_ARENAS },
  };
}

if (process.argv[2] === 'serve' && typeof process.execve === 'function') {
  const relaunch = servingRelaunch(process.execArgv, process.argv, process.env);
  if (relaunch) {
    try {
      process.execve(process.execPath, relaunch.args, relaunch.env);
    } catch {
      // Not replaced (a platform without execve): serve as started.
    }
  }
}
