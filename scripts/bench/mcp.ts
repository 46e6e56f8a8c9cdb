/**
 * tools/call throughput and latency at 32 concurrent clients, in both MCP revisions the endpoint
 * serves: pactum's dashboard_get_org (auth, validation, a database read, the audit row; a real
 * user's token; logging at info) against a bare MCP SDK server (v2, @modelcontextprotocol/server,
 * the SDK pactum's endpoint is built on) serving the same tool without a database, with the same
 * bearer check (jose, verified tokens kept), built the fastest way the SDK allows
 * (targets/mcp-servers.ts), in alternating rounds. Each target answers both requests:
 *   - 2025-11-25: a plain `tools/call` (no initialize: both servers are stateless);
 *   - 2026-07-28: the same call with the revision's `_meta` (protocol version, client info and
 *     capabilities) and its `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers.
 * Goals: ratio >= 2.0 at 2025-11-25, pactum p99 <= 10 ms; the 2026-07-28 ratio is reported.
 * Each round also reads the server's CPU time a call (user + system from /proc over the load):
 * on a machine shared with other work the rates follow the scheduler, the CPU a call much less.
 *
 *   npx tsx scripts/bench/mcp.ts [--rounds 3] [--duration 10]
 */
import { parseArgs } from 'node:util';
import { cpuOf, fmt, load, median, record, startTarget, type LoadResult } from './lib.js';
import { startPactum } from './pactum-process.js';

const MODERN = '2026-07-28';
const REVISIONS = ['2025-11-25', MODERN] as const;
type Revision = (typeof REVISIONS)[number];

/** What a target serves: its endpoint, the tool to call with its arguments, and the headers it needs. */
interface McpTarget {
  url: string;
  tool: string;
  arguments: Record<string, unknown>;
  headers: Record<string, string>;
  /** The server's process, whose CPU time a call is read from /proc. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * pactum as production runs it (`node dist/pactum/main.js serve`, logging at info to a file: see
 * pactum-process.ts for why not a pipe), an org admin made with the CLI and its token.
 */
async function pactumTarget(): Promise<McpTarget> {
  const p = await startPactum({ LOG_LEVEL: 'info' }, { role: 'org_admin' });
  const orgId = p.cli(['org', 'list']).split('\n').find((l) => l.startsWith('bench\t'))!.split('\t')[1]!;
  const token = p.cli(['token', '--user', 'bench', '--ttl', '1h']).trim();
  return { url: `${p.url}/api/v1/mcp`, tool: 'dashboard_get_org', arguments: { targetOrgId: orgId }, headers: { authorization: `Bearer ${token}` }, pid: p.pid, stop: () => p.stop() };
}

async function sdkTarget(): Promise<McpTarget> {
  const t = await startTarget(script, ['sdk']);
  const info = t.info as { tool: string; arguments: Record<string, unknown>; token: string };
  return { url: t.url, tool: info.tool, arguments: info.arguments, headers: { authorization: `Bearer ${info.token}` }, pid: t.child.pid!, stop: () => t.stop() };
}

/** The tools/call request of one revision to one target. */
function callRequest(t: McpTarget, revision: Revision) {
  const params: Record<string, unknown> = { name: t.tool, arguments: t.arguments };
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...t.headers };
  if (revision === MODERN) {
    params._meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': { name: 'pactum-bench', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    Object.assign(headers, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': t.tool });
  }
  return { url: t.url, method: 'POST' as const, headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }), connections: 32 };
}

// --revision measures one revision alone (a CPU profile of one path: BENCH_NODE_ARGS, profile-top.ts).
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '10' }, revision: { type: 'string' } } });
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const script = new URL('./targets/mcp-servers.ts', import.meta.url).href;

/** A round's load, and the server's CPU time a call in it (µs; user + system from /proc, which a loaded machine distorts less than the rate). */
type Round = LoadResult & { cpuUs: number };
const results: Record<Revision, Record<'sdk' | 'pactum', Round[]>> = { '2025-11-25': { sdk: [], pactum: [] }, [MODERN]: { sdk: [], pactum: [] } };
for (let round = 1; round <= rounds; round++) {
  for (const kind of ['sdk', 'pactum'] as const) {
    const t = kind === 'sdk' ? await sdkTarget() : await pactumTarget();
    try {
      for (const revision of REVISIONS.filter((r) => !values.revision || r === values.revision)) {
        const request = callRequest(t, revision);
        await load({ ...request, duration: 2 }); // warm-up
        const cpuBefore = cpuOf(t.pid);
        const loaded = await load({ ...request, duration });
        const r = { ...loaded, cpuUs: ((cpuOf(t.pid) - cpuBefore) * 1e6) / (loaded.rps * duration) };
        // The load counts statuses only: a JSON-RPC error or a failed tool also answers 200.
        const answer = await (await fetch(request.url, { method: 'POST', headers: request.headers, body: request.body })).text();
        const succeeded = answer.includes('"result"') && !answer.includes('"isError":true') && (revision !== MODERN || answer.includes('"resultType":"complete"'));
        if (!succeeded) throw new Error(`${kind} ${revision}: the call did not succeed after the load: ${answer.slice(0, 300)}`);
        if (r.errors || r.non2xx) throw new Error(`${kind} ${revision}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
        results[revision][kind].push(r);
        console.log(`round ${round} ${kind.padEnd(6)} ${revision} ${fmt(r.rps)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  CPU ${fmt(r.cpuUs)} µs a call`);
      }
    } finally {
      await t.stop();
    }
  }
}
// One revision alone is a probe (a profile), not a measurement: no ratios, nothing recorded.
if (values.revision) process.exit(0);
const summary = (xs: Round[]) => ({ rps: median(xs.map((x) => x.rps)), p50: median(xs.map((x) => x.p50)), p99: median(xs.map((x) => x.p99)), cpuUs: median(xs.map((x) => x.cpuUs)) });
const legacy = { sdk: summary(results['2025-11-25'].sdk), pactum: summary(results['2025-11-25'].pactum) };
const modern = { sdk: summary(results[MODERN].sdk), pactum: summary(results[MODERN].pactum) };
for (const [revision, s] of [['2025-11-25', legacy], [MODERN, modern]] as const) {
  console.log(`\n${revision}`);
  console.log(`bare SDK v2, get_org        ${fmt(s.sdk.rps)} req/s  p50 ${fmt(s.sdk.p50, 1)} ms  p99 ${fmt(s.sdk.p99, 1)} ms  CPU ${fmt(s.sdk.cpuUs)} µs a call`);
  console.log(`pactum dashboard_get_org    ${fmt(s.pactum.rps)} req/s  p50 ${fmt(s.pactum.p50, 1)} ms  p99 ${fmt(s.pactum.p99, 1)} ms  CPU ${fmt(s.pactum.cpuUs)} µs a call`);
}
console.log(`\nratio 2025-11-25            ${fmt(legacy.pactum.rps / legacy.sdk.rps, 2)} (goal >= 2.0; pactum p99 goal <= 10 ms)`);
console.log(`ratio 2026-07-28            ${fmt(modern.pactum.rps / modern.sdk.rps, 2)}`);
console.log(`CPU a call, bare SDK ÷ pactum: 2025-11-25 ${fmt(legacy.sdk.cpuUs / legacy.pactum.cpuUs, 2)}, 2026-07-28 ${fmt(modern.sdk.cpuUs / modern.pactum.cpuUs, 2)}`);
const baseline = 'bare MCP SDK v2 stateless, shared validator, jose bearer check';
record(
  { bench: 'mcp', measure: 'tools/call dashboard_get_org, 32 connections', value: legacy.pactum.rps, unit: 'req/s', baseline: { name: baseline, value: legacy.sdk.rps }, ratio: legacy.pactum.rps / legacy.sdk.rps, goal: '>= 2.0', met: legacy.pactum.rps / legacy.sdk.rps >= 2 },
  { bench: 'mcp', measure: 'tools/call p99', value: legacy.pactum.p99, unit: 'ms', baseline: { name: 'bare MCP SDK v2', value: legacy.sdk.p99 }, goal: '<= 10 ms', met: legacy.pactum.p99 <= 10 },
  { bench: 'mcp', measure: 'tools/call dashboard_get_org at 2026-07-28, 32 connections', value: modern.pactum.rps, unit: 'req/s', baseline: { name: `${baseline}, answering 2026-07-28`, value: modern.sdk.rps }, ratio: modern.pactum.rps / modern.sdk.rps },
  { bench: 'mcp', measure: 'tools/call p99 at 2026-07-28', value: modern.pactum.p99, unit: 'ms', baseline: { name: 'bare MCP SDK v2, answering 2026-07-28', value: modern.sdk.p99 } },
  { bench: 'mcp', measure: 'server CPU a tools/call', value: legacy.pactum.cpuUs, unit: 'µs', baseline: { name: 'bare MCP SDK v2', value: legacy.sdk.cpuUs }, ratio: legacy.sdk.cpuUs / legacy.pactum.cpuUs },
  { bench: 'mcp', measure: 'server CPU a tools/call at 2026-07-28', value: modern.pactum.cpuUs, unit: 'µs', baseline: { name: 'bare MCP SDK v2, answering 2026-07-28', value: modern.sdk.cpuUs }, ratio: modern.sdk.cpuUs / modern.pactum.cpuUs },
);
