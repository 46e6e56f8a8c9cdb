/**
 * Request validation cost: req/s of pactum's spec router on a validated operation (POST
 * .../objects/batch: route match, media-type negotiation, parameter and body validation with the
 * generated validators) against a plain Koa + @koa/router route that only parses the body, run
 * side by side in alternating rounds. Goal: ratio >= 0.8. Also openapi-backend doing the same
 * (matching by the library, validation by the same generated validators): it was asked for
 * as the binder if it reached 0.8 of the plain route.
 *
 *   npx tsx scripts/bench/validation.ts [--rounds 3] [--duration 5]
 */
import { parseArgs } from 'node:util';
import { fmt, load, median, record, startTarget } from './lib.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' } } });
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

const kinds = ['plain', 'router', 'backend'] as const;
const results: Record<string, number[]> = { plain: [], router: [], backend: [] };
for (let round = 1; round <= rounds; round++) {
  for (const kind of kinds) {
    const t = await startTarget(target, [kind]);
    await load({ url: t.url + request.path, ...request, duration: 1 }); // warm-up
    const r = await load({ url: t.url + request.path, ...request, duration });
    await t.stop();
    if (r.errors || r.non2xx) throw new Error(`${kind}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
    results[kind]!.push(r.rps);
    console.log(`round ${round} ${kind.padEnd(7)} ${fmt(r.rps)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms`);
  }
}
const plain = median(results.plain!);
const router = median(results.router!);
const backend = median(results.backend!);
console.log(`\nplain Koa + @koa/router route                 ${fmt(plain)} req/s (median of ${rounds})`);
console.log(`validated spec route (route table, @koa/router) ${fmt(router)} req/s   ratio ${fmt(router / plain, 2)} (goal >= 0.80)`);
console.log(`validated route through openapi-backend 5.21    ${fmt(backend)} req/s   ratio ${fmt(backend / plain, 2)} (the binder is kept only at >= 0.80)`);
record(
  { bench: 'validation', measure: 'validated spec route (route table through @koa/router)', value: router, unit: 'req/s', baseline: { name: 'plain Koa + @koa/router', value: plain }, ratio: router / plain, goal: '>= 0.80', met: router / plain >= 0.8 },
  { bench: 'validation', measure: 'validated route through openapi-backend 5.21', value: backend, unit: 'req/s', baseline: { name: 'plain Koa + @koa/router', value: plain }, ratio: backend / plain },
);
