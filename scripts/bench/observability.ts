/**
 * What metrics cost: MCP tools/call throughput (32 connections, dashboard_get_org) and basic
 * upload throughput (curl PUTs of fresh objects), with metrics recorded and scraped every second
 * from METRICS_PORT ("on") against the same server with neither METRICS_PORT nor METRICS_TOKEN
 * ("off": nothing is recorded), in alternating rounds, side by side as ratios. Goal: within 3%.
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
import { readFileSync } from 'node:fs';
import { fmt, load, median, record } from './lib.js';
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

/** The CPU time (user + system) process `pid` has used, in seconds (the kernel counts in 1/100 s). */
const cpuOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

const files = await Promise.all(Array.from({ length: uploads }, (_, i) => makeFile(size, `observability-${i}`)));

async function measure(metricsOn: boolean) {
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
  try {
    const orgId = p.cli(['org', 'list']).split('\n').find((l) => l.startsWith('bench\t'))!.split('\t')[1]!;
    const token = p.cli(['token', '--user', 'bench', '--ttl', '1h']).trim();
    const request = {
      url: `${p.url}/api/v1/mcp`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_get_org', arguments: { targetOrgId: orgId } } }),
      connections: 32,
    };
    await load({ ...request, duration: 2 }); // warm-up
    const mcpCpu = cpuOf(p.pid);
    const mcp = await load({ ...request, duration });
    // Calls served: the rate over the measured window.
    const usPerCall = ((cpuOf(p.pid) - mcpCpu) * 1e6) / (mcp.rps * duration);
    if (mcp.errors || mcp.non2xx) throw new Error(`MCP: ${mcp.errors} errors, ${mcp.non2xx} non-2xx`);
    const speeds: number[] = [];
    const uploadCpu = cpuOf(p.pid);
    for (const f of files) {
      const action = await actionFor(p, 'upload', f);
      const sent = await curl(action.href, 'PUT', action.header, f.path);
      if (sent.status !== 200) throw new Error(`upload answered ${sent.status}`);
      speeds.push(size / (1024 * 1024) / (sent.ms / 1000));
    }
    const msPerMib = ((cpuOf(p.pid) - uploadCpu) * 1e3) / ((size / (1024 * 1024)) * files.length);
    if (metricsOn && scrapes === 0) throw new Error('the metrics were never scraped');
    return { rps: mcp.rps, mibs: median(speeds), usPerCall, msPerMib, scrapes };
  } finally {
    if (scraper) clearInterval(scraper);
    await p.stop();
  }
}

type Round = Awaited<ReturnType<typeof measure>>;
const on: Round[] = [];
const off: Round[] = [];
for (let round = 1; round <= rounds; round++) {
  // Alternating which goes first, so neither always meets a warmer machine.
  for (const metricsOn of round % 2 ? [false, true] : [true, false]) {
    const r = await measure(metricsOn);
    (metricsOn ? on : off).push(r);
    console.log(`round ${round} metrics ${metricsOn ? 'on ' : 'off'}  MCP ${fmt(r.rps)} calls/s, ${fmt(r.usPerCall, 1)} µs CPU a call  upload ${fmt(r.mibs, 1)} MiB/s, ${fmt(r.msPerMib, 2)} ms CPU a MiB${metricsOn ? `  (${r.scrapes} scrapes)` : ''}`);
  }
}
for (const f of files) rmSync(f.path, { force: true });

const mcpOn = median(on.map((r) => r.rps));
const mcpOff = median(off.map((r) => r.rps));
const upOn = median(on.map((r) => r.mibs));
const upOff = median(off.map((r) => r.mibs));
const callCpuOn = median(on.map((r) => r.usPerCall));
const callCpuOff = median(off.map((r) => r.usPerCall));
const mibCpuOn = median(on.map((r) => r.msPerMib));
const mibCpuOff = median(off.map((r) => r.msPerMib));
console.log('');
console.log('                              metrics off   metrics on (scraped 1/s)   ratio (1.0 = no cost)');
console.log(`MCP tools/call                ${fmt(mcpOff).padStart(8)}/s   ${fmt(mcpOn).padStart(8)}/s                 ${fmt(mcpOn / mcpOff, 3)}`);
console.log(`  server CPU a call           ${fmt(callCpuOff, 1).padStart(7)} µs   ${fmt(callCpuOn, 1).padStart(7)} µs                  ${fmt(callCpuOff / callCpuOn, 3)}`);
console.log(`basic upload                  ${fmt(upOff, 1).padStart(6)} MiB/s ${fmt(upOn, 1).padStart(6)} MiB/s               ${fmt(upOn / upOff, 3)}`);
console.log(`  server CPU a MiB            ${fmt(mibCpuOff, 2).padStart(7)} ms   ${fmt(mibCpuOn, 2).padStart(7)} ms                  ${fmt(mibCpuOff / mibCpuOn, 3)}`);
const figure = (measure: string, value: number, unit: string, baseline: number, ratio: number) => ({
  bench: 'observability', measure, value, unit, baseline: { name: 'metrics off (nothing recorded)', value: baseline }, ratio, goal: '>= 0.97', met: ratio >= 0.97,
});
record(
  figure('MCP tools/call with metrics recorded and scraped', mcpOn, 'calls/s', mcpOff, mcpOn / mcpOff),
  figure('server CPU per MCP call with metrics (off / on)', callCpuOn, 'µs', callCpuOff, callCpuOff / callCpuOn),
  figure('basic upload with metrics recorded and scraped', upOn, 'MiB/s', upOff, upOn / upOff),
  figure('server CPU per uploaded MiB with metrics (off / on)', mibCpuOn, 'ms', mibCpuOff, mibCpuOff / mibCpuOn),
);
