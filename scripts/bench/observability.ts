/**
 * What metrics cost: MCP tools/call throughput (16 connections to each server, dashboard_get_org)
 * and basic upload throughput (curl PUTs of fresh objects), with metrics recorded and scraped every
 * second from METRICS_PORT ("on") against the same server with neither METRICS_PORT nor
 * METRICS_TOKEN ("off": nothing is recorded). Each round sends MCP calls to both at the same time,
 * then uploads the same objects to each in turn; the ratios are the medians of the rounds' ratios.
 * Goal: within 3%.
 *
 * Two ratios for each: throughput, and the server's CPU time per call or per MiB (from
 * /proc/<pid>/stat). On 2 cores shared with the load generator, throughput moves by several
 * percent from round to round whatever the server does; the CPU a call costs the server moves far
 * less, and is what metrics could add.
 *
 *   make build && npx tsx scripts/bench/observability.ts [--rounds 2] [--duration 8] [--mib 64] [--uploads 3]
 */
import { createServer } from 'node:net';
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { cpuOf, fmt, load, median, record } from './lib.js';
import { startPactum } from './pactum-process.js';
import { actionFor, curl, makeFile } from './transfers.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '2' }, duration: { type: 'string', default: '8' }, mib: { type: 'string', default: '64' }, uploads: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const size = Number(values.mib) * 1024 * 1024;
const uploads = Number(values.uploads);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const files = await Promise.all(Array.from({ length: uploads }, (_, i) => makeFile(size, `observability-${i}`)));

interface Served {
  metricsOn: boolean;
  p: Awaited<ReturnType<typeof startPactum>>;
  request: Parameters<typeof load>[0];
  scrapes: () => number;
  stop(): Promise<void>;
}

async function serve(metricsOn: boolean): Promise<Served> {
  const port = await freePort();
  const p = await startPactum({ LOG_LEVEL: 'info', ...(metricsOn ? { METRICS_PORT: String(port) } : {}) }, { role: 'org_admin' });
  let scrapes = 0;
  const scraper = metricsOn
    ? setInterval(() => {
        void fetch(`http://127.0.0.1:${port}/metrics`).then(async (r) => {
          await r.text();
          if (r.ok) scrapes++;
        });
      }, 1000)
    : null;
  const orgId = p.cli(['org', 'list']).split('\n').find((l) => l.startsWith('bench\t'))!.split('\t')[1]!;
  const token = p.cli(['token', '--user', 'bench', '--ttl', '1h']).trim();
  const request = {
    url: `${p.url}/api/v1/mcp`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_get_org', arguments: { targetOrgId: orgId } } }),
    connections: 16,
  };
  return {
    metricsOn,
    p,
    request,
    scrapes: () => scrapes,
    stop: async () => {
      if (scraper) clearInterval(scraper);
      await p.stop();
    },
  };
}

/** MCP calls against each server at once: calls/s and the server's CPU per call. */
async function mcpLoad(s: Served) {
  const cpu = cpuOf(s.p.pid);
  const r = await load({ ...s.request, duration });
  if (r.errors || r.non2xx) throw new Error(`MCP: ${r.errors} errors, ${r.non2xx} non-2xx`);
  return { rps: r.rps, usPerCall: ((cpuOf(s.p.pid) - cpu) * 1e6) / (r.rps * duration) };
}

/**
 * The same objects uploaded to each server in turn, one object at a time, the order alternating:
 * MiB/s and the server's CPU per MiB. Not at once: two uploads sharing the disk and both cores
 * make each other's reads smaller and more frequent, which moves the CPU a MiB costs more than
 * metrics could.
 */
async function uploadInTurn(servers: Served[]) {
  const speeds = servers.map(() => [] as number[]);
  const cpu = servers.map(() => 0);
  for (const [i, f] of files.entries()) {
    for (const k of i % 2 ? [...servers.keys()].reverse() : [...servers.keys()]) {
      const s = servers[k]!;
      const action = await actionFor(s.p, 'upload', f);
      const before = cpuOf(s.p.pid);
      const sent = await curl(action.href, 'PUT', action.header, f.path);
      cpu[k]! += cpuOf(s.p.pid) - before;
      if (sent.status !== 200) throw new Error(`upload answered ${sent.status}`);
      speeds[k]!.push(size / (1024 * 1024) / (sent.ms / 1000));
    }
  }
  return servers.map((_, k) => ({ mibs: median(speeds[k]!), msPerMib: (cpu[k]! * 1e3) / ((size / (1024 * 1024)) * files.length) }));
}

/**
 * One round: a server with metrics and one without, started together and loaded at the same time,
 * so that both meet the same machine. On 2 shared cores the machine's speed moves by ±10% from one
 * minute to the next; rounds taken one after the other compared those moves more than the metrics.
 */
async function round() {
  const servers = await Promise.all([serve(false), serve(true)]);
  try {
    await Promise.all(servers.map((s) => load({ ...s.request, duration: 2 }))); // warm-up
    const mcp = await Promise.all(servers.map(mcpLoad));
    const up = await uploadInTurn(servers);
    if (servers[1].scrapes() === 0) throw new Error('the metrics were never scraped');
    return { off: { ...mcp[0]!, ...up[0]! }, on: { ...mcp[1]!, ...up[1]!, scrapes: servers[1].scrapes() } };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

const results: Awaited<ReturnType<typeof round>>[] = [];
for (let i = 1; i <= rounds; i++) {
  const r = await round();
  results.push(r);
  for (const [name, x] of [['off', r.off], ['on ', r.on]] as const) {
    console.log(`round ${i} metrics ${name}  MCP ${fmt(x.rps)} calls/s, ${fmt(x.usPerCall, 1)} µs CPU a call  upload ${fmt(x.mibs, 1)} MiB/s, ${fmt(x.msPerMib, 2)} ms CPU a MiB${'scrapes' in x ? `  (${x.scrapes} scrapes)` : ''}`);
  }
}
for (const f of files) rmSync(f.path, { force: true });

// Each ratio is the median of the rounds' own ratios: a round compares two servers that met the same machine.
const ratio = (f: (r: (typeof results)[number]) => number) => median(results.map(f));
const mid = (side: 'on' | 'off', key: 'rps' | 'mibs' | 'usPerCall' | 'msPerMib') => median(results.map((r) => r[side][key]));
const mcpRatio = ratio((r) => r.on.rps / r.off.rps);
const callCpuRatio = ratio((r) => r.off.usPerCall / r.on.usPerCall);
const upRatio = ratio((r) => r.on.mibs / r.off.mibs);
const mibCpuRatio = ratio((r) => r.off.msPerMib / r.on.msPerMib);
console.log('');
console.log('                              metrics off   metrics on (scraped 1/s)   ratio (1.0 = no cost; median of the rounds\' ratios)');
console.log(`MCP tools/call                ${fmt(mid('off', 'rps')).padStart(8)}/s   ${fmt(mid('on', 'rps')).padStart(8)}/s                 ${fmt(mcpRatio, 3)}`);
console.log(`  server CPU a call           ${fmt(mid('off', 'usPerCall'), 1).padStart(7)} µs   ${fmt(mid('on', 'usPerCall'), 1).padStart(7)} µs                  ${fmt(callCpuRatio, 3)}`);
console.log(`basic upload                  ${fmt(mid('off', 'mibs'), 1).padStart(6)} MiB/s ${fmt(mid('on', 'mibs'), 1).padStart(6)} MiB/s               ${fmt(upRatio, 3)}`);
console.log(`  server CPU a MiB            ${fmt(mid('off', 'msPerMib'), 2).padStart(7)} ms   ${fmt(mid('on', 'msPerMib'), 2).padStart(7)} ms                  ${fmt(mibCpuRatio, 3)}`);
const figure = (measure: string, value: number, unit: string, baseline: number, ratio: number) => ({
  bench: 'observability', measure, value, unit, baseline: { name: 'metrics off (nothing recorded)', value: baseline }, ratio, goal: '>= 0.97', met: ratio >= 0.97,
});
record(
  figure('MCP tools/call with metrics recorded and scraped', mid('on', 'rps'), 'calls/s', mid('off', 'rps'), mcpRatio),
  figure('server CPU per MCP call with metrics (off / on)', mid('on', 'usPerCall'), 'µs', mid('off', 'usPerCall'), callCpuRatio),
  figure('basic upload with metrics recorded and scraped', mid('on', 'mibs'), 'MiB/s', mid('off', 'mibs'), upRatio),
  figure('server CPU per uploaded MiB with metrics (off / on)', mid('on', 'msPerMib'), 'ms', mid('off', 'msPerMib'), mibCpuRatio),
);
