/**
 * `pactum serve` runs with a setting only a process's start can make, so when it was started
 * without it, it replaces itself (same PID, same descriptors; process.execve) with one that has
 * it, before any module of the server loads: `MALLOC_ARENA_MAX=2` unless the environment sets it,
 * so that the threads (libuv's pool, V8's compiler and collector) share two malloc arenas instead
 * of one each, each of which would keep its peak resident. Node does not allow it in NODE_OPTIONS.
 * A runtime without process.execve serves as started.
 *
 * Optimized code is compiled on V8's background threads, as Node does by default. Compiling it
 * on the main thread instead (`--no-concurrent-recompilation`) saved 5-7 MB of peak memory under
 * a flood of anonymous bodies (idle + 26 against + 30-34), but every compilation then paused all
 * requests: at 32 connections of MCP calls, the first 10 s after a 2 s warm-up read p99 8.8-31.7
 * ms (median 17, fourteen rounds) against 7.2-9.3 ms (eleven) compiled in the background, and
 * /healthz under the flood p99 18-22 against 11-14 ms (`scripts/bench/mcp.ts`,
 * `scripts/bench/fairness.ts --only deep-json`).
 */
export const SERVING_MALLOC_ARENAS = '2';

/** The command line and environment to serve with, or null when this process already has them. */
export function servingRelaunch(
  execArgv: readonly string[],
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { args: string[]; env: NodeJS.ProcessEnv } | null {
  if (env.MALLOC_ARENA_MAX !== undefined) return null;
  return {
    args: [argv[0]!, ...execArgv, ...argv.slice(1)],
    env: { ...env, MALLOC_ARENA_MAX: SERVING_MALLOC_ARENAS },
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
