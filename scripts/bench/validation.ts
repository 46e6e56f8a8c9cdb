/**
 * Request validation cost: req/s of pactum's spec router on a validated operation (POST
 * .../objects/batch: route match, media-type negotiation, parameter and body validation with the
 * generated validators) against a plain Koa + @koa/router route that only parses the body, run
 * side by side in alternating rounds. Goal: ratio >= 0.8. Also openapi-backend doing the same
 * (matching by the library, validation by the same generated validators): it was asked for
 * as the binder if it reached 0.8 of the plain route.
 *
 * Each target's CPU time a request (user + system from /proc over the load) is printed too: on a
 * shared machine the rate follows whatever else runs, the CPU a request far less.
 *
 *   npx tsx scripts/bench/validation.ts [--rounds 3] [--duration 5] [--only router]
 *
 * --only measures one target alone (a CPU profile of it: BENCH_NODE_ARGS, profile-top.ts).
 */
import { parseArgs } from 'node:util';
import { cpuOf, fmt, load, median, record, startTarget } from './lib.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' }, only: { type: 'string' } } });
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const target = new URL('./targets/validation-servers.ts', import.meta.url).href;

const body = JSON.stringify({
  operation: 'download',
  transfers: ['basic', 'lfs-standalone-file', 'ssh'],
  ref: { name: 'refs/heads/main' },
  objects: Array.from({ length: 10 }, (_, i) => ({ oid: i.toString(16).padStart(64, 'a'), size: 1024 * i })),
  hash_algo: 'sha256',
});
const request = {
  method: 'POST' as const,
  path: '/acme/site.git/info/lfs/objects/batch',
  headers: { 'content-type': 'application/vnd.git-lfs+json; charset=utf-8', accept: 'application/vnd.git-lfs+json' },
  body,
};

const kinds = (['plain', 'router', 'backend'] as const).filter((k) => !values.only || values.only === k);
/** Per target: req/s and server CPU µs a request, one entry a round. */
const results: Record<string, { rps: number[]; cpuUs: number[] }> = { plain: { rps: [], cpuUs: [] }, router: { rps: [], cpuUs: [] }, backend: { rps: [], cpuUs: [] } };
for (let round = 1; round <= rounds; round++) {
  for (const kind of kinds) {
    const t = await startTarget(target, [kind]);
    await load({ url: t.url + request.path, ...request, duration: 1 }); // warm-up
    const cpuBefore = cpuOf(t.child.pid!);
    const r = await load({ url: t.url + request.path, ...request, duration });
    const cpuUs = ((cpuOf(t.child.pid!) - cpuBefore) * 1e6) / (r.rps * duration);
    await t.stop();
    if (r.errors || r.non2xx) throw new Error(`${kind}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
    results[kind]!.rps.push(r.rps);
    results[kind]!.cpuUs.push(cpuUs);
    console.log(`round ${round} ${kind.padEnd(7)} ${fmt(r.rps)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  CPU ${fmt(cpuUs, 1)} µs a request`);
  }
}
if (values.only) process.exit(0);
const [plain, router, backend] = (['plain', 'router', 'backend'] as const).map((k) => ({ rps: median(results[k]!.rps), cpuUs: median(results[k]!.cpuUs) })) as [{ rps: number; cpuUs: number }, { rps: number; cpuUs: number }, { rps: number; cpuUs: number }];
/** The rate ratio, and the same read from CPU: the plain route's CPU a request over the target's. */
const ratios = (t: { rps: number; cpuUs: number }) => `ratio ${fmt(t.rps / plain.rps, 2)}  CPU ${fmt(t.cpuUs, 1)} µs a request, ratio ${fmt(plain.cpuUs / t.cpuUs, 2)}`;
console.log(`\nplain Koa + @koa/router route                   ${fmt(plain.rps)} req/s  CPU ${fmt(plain.cpuUs, 1)} µs a request (medians of ${rounds})`);
console.log(`validated spec route (route table, @koa/router) ${fmt(router.rps)} req/s  ${ratios(router)} (goal >= 0.80)`);
console.log(`validated route through openapi-backend 5.21    ${fmt(backend.rps)} req/s  ${ratios(backend)} (the binder is kept only at >= 0.80)`);
record(
  { bench: 'validation', measure: 'validated spec route (route table through @koa/router)', value: router.rps, unit: 'req/s', baseline: { name: 'plain Koa + @koa/router', value: plain.rps }, ratio: router.rps / plain.rps, goal: '>= 0.80', met: router.rps / plain.rps >= 0.8 },
  { bench: 'validation', measure: 'validated spec route, server CPU a request', value: router.cpuUs, unit: 'µs', baseline: { name: 'plain Koa + @koa/router', value: plain.cpuUs }, ratio: plain.cpuUs / router.cpuUs, goal: '>= 0.80', met: plain.cpuUs / router.cpuUs >= 0.8 },
  { bench: 'validation', measure: 'validated route through openapi-backend 5.21', value: backend.rps, unit: 'req/s', baseline: { name: 'plain Koa + @koa/router', value: plain.rps }, ratio: backend.rps / plain.rps },
);
