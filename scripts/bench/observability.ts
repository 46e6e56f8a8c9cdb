/**
 * What metrics cost: MCP tools/call throughput (32 connections, dashboard_get_org) and basic
 * upload throughput (curl PUTs of fresh objects), with metrics scraped every second from
 * METRICS_PORT ("on") against the same server without a scraper ("off"), in alternating rounds,
 * side by side as a ratio. Goal: within 3%.
 *
 *   make build && npx tsx scripts/bench/observability.ts [--rounds 2] [--duration 8] [--mib 64] [--uploads 3]
 */
import { createServer } from 'node:net';
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
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
    const mcp = await load({ ...request, duration });
    if (mcp.errors || mcp.non2xx) throw new Error(`MCP: ${mcp.errors} errors, ${mcp.non2xx} non-2xx`);
    const speeds: number[] = [];
    for (const f of files) {
      const action = await actionFor(p, 'upload', f);
      const sent = await curl(action.href, 'PUT', action.header, f.path);
      if (sent.status !== 200) throw new Error(`upload answered ${sent.status}`);
      speeds.push(size / (1024 * 1024) / (sent.ms / 1000));
    }
    if (metricsOn && scrapes === 0) throw new Error('the metrics were never scraped');
    return { rps: mcp.rps, mibs: median(speeds), scrapes };
  } finally {
    if (scraper) clearInterval(scraper);
    await p.stop();
  }
}

const on: { rps: number; mibs: number }[] = [];
const off: { rps: number; mibs: number }[] = [];
for (let round = 1; round <= rounds; round++) {
  // Alternating which goes first, so neither always meets a warmer machine.
  for (const metricsOn of round % 2 ? [false, true] : [true, false]) {
    const r = await measure(metricsOn);
    (metricsOn ? on : off).push(r);
    console.log(`round ${round} metrics ${metricsOn ? 'on ' : 'off'}  MCP ${fmt(r.rps)} calls/s  upload ${fmt(r.mibs, 1)} MiB/s${metricsOn ? `  (${r.scrapes} scrapes)` : ''}`);
  }
}
for (const f of files) rmSync(f.path, { force: true });

const mcpOn = median(on.map((r) => r.rps));
const mcpOff = median(off.map((r) => r.rps));
const upOn = median(on.map((r) => r.mibs));
const upOff = median(off.map((r) => r.mibs));
console.log('');
console.log('                       metrics off   metrics on (scraped 1/s)   on / off');
console.log(`MCP tools/call         ${fmt(mcpOff).padStart(8)}/s   ${fmt(mcpOn).padStart(8)}/s                 ${fmt(mcpOn / mcpOff, 3)}`);
console.log(`basic upload           ${fmt(upOff, 1).padStart(6)} MiB/s ${fmt(upOn, 1).padStart(6)} MiB/s               ${fmt(upOn / upOff, 3)}`);
record(
  { bench: 'observability', measure: 'MCP tools/call with metrics scraped', value: mcpOn, unit: 'calls/s', baseline: { name: 'metrics not scraped', value: mcpOff }, ratio: mcpOn / mcpOff, goal: '>= 0.97', met: mcpOn / mcpOff >= 0.97 },
  { bench: 'observability', measure: 'basic upload with metrics scraped', value: upOn, unit: 'MiB/s', baseline: { name: 'metrics not scraped', value: upOff }, ratio: upOn / upOff, goal: '>= 0.97', met: upOn / upOff >= 0.97 },
);
