/**
 * tools/call throughput and latency at 32 concurrent clients: pactum's dashboard_get_org (auth,
 * validation, a database read, the audit row; a real user's token; logging at info) against a bare
 * MCP SDK stateless server with one trivial tool built the fast way the SDK allows, in
 * alternating rounds. Goals: ratio >= 2.0, pactum p99 <= 10 ms.
 *
 *   npx tsx scripts/bench/mcp.ts [--rounds 3] [--duration 10]
 */
import { parseArgs } from 'node:util';
import { fmt, load, median, record, startTarget, type LoadResult } from './lib.js';
import { startPactum } from './pactum-process.js';

/**
 * pactum as production runs it (`node dist/pactum/main.js serve`, logging at info to a file: see
 * pactum-process.ts for why not a pipe), an org admin made with the CLI and its token.
 */
async function pactumTarget() {
  const p = await startPactum({ LOG_LEVEL: 'info' }, { role: 'org_admin' });
  const orgId = p.cli(['org', 'list']).split('\n').find((l) => l.startsWith('bench\t'))!.split('\t')[1]!;
  const token = p.cli(['token', '--user', 'bench', '--ttl', '1h']).trim();
  return {
    url: `${p.url}/api/v1/mcp`,
    info: { body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_get_org', arguments: { targetOrgId: orgId } } }, headers: { authorization: `Bearer ${token}` } },
    stop: () => p.stop(),
  };
}

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '10' } } });
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const script = new URL('./targets/mcp-servers.ts', import.meta.url).href;

const results: Record<'sdk' | 'pactum', LoadResult[]> = { sdk: [], pactum: [] };
for (let round = 1; round <= rounds; round++) {
  for (const kind of ['sdk', 'pactum'] as const) {
    const t = kind === 'sdk' ? await startTarget(script, ['sdk']) : await pactumTarget();
    const info = t.info as { body: unknown; headers: Record<string, string> };
    const request = {
      url: t.url,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...info.headers },
      body: JSON.stringify(info.body),
      connections: 32,
    };
    await load({ ...request, duration: 2 }); // warm-up
    const r = await load({ ...request, duration });
    // The load counts statuses only: a JSON-RPC error or a failed tool also answers 200.
    const answer = await (await fetch(request.url, { method: 'POST', headers: request.headers, body: request.body })).text();
    if (!answer.includes('"result"') || answer.includes('"isError":true')) throw new Error(`${kind}: the call did not succeed after the load: ${answer.slice(0, 300)}`);
    await t.stop();
    if (r.errors || r.non2xx) throw new Error(`${kind}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
    results[kind].push(r);
    console.log(`round ${round} ${kind.padEnd(6)} ${fmt(r.rps)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms`);
  }
}
const summary = (xs: LoadResult[]) => ({ rps: median(xs.map((x) => x.rps)), p50: median(xs.map((x) => x.p50)), p99: median(xs.map((x) => x.p99)) });
const sdk = summary(results.sdk);
const pactum = summary(results.pactum);
console.log(`\nbare SDK, trivial tool      ${fmt(sdk.rps)} req/s  p50 ${fmt(sdk.p50, 1)} ms  p99 ${fmt(sdk.p99, 1)} ms`);
console.log(`pactum dashboard_get_org    ${fmt(pactum.rps)} req/s  p50 ${fmt(pactum.p50, 1)} ms  p99 ${fmt(pactum.p99, 1)} ms`);
console.log(`ratio                       ${fmt(pactum.rps / sdk.rps, 2)} (goal >= 2.0; pactum p99 goal <= 10 ms)`);
record(
  { bench: 'mcp', measure: 'tools/call dashboard_get_org, 32 connections', value: pactum.rps, unit: 'req/s', baseline: { name: 'bare MCP SDK stateless, shared validator', value: sdk.rps }, ratio: pactum.rps / sdk.rps, goal: '>= 2.0', met: pactum.rps / sdk.rps >= 2 },
  { bench: 'mcp', measure: 'tools/call p99', value: pactum.p99, unit: 'ms', baseline: { name: 'bare MCP SDK', value: sdk.p99 }, goal: '<= 10 ms', met: pactum.p99 <= 10 },
);
