/**
 * Anonymous clients that send 4 MiB of nested arrays (`[[[[…`) to the endpoints anyone can
 * reach: POST /api/v1/mcp (credentials required) and POST /api/v1/auth/login (none needed).
 * Measured: /healthz latency seen by a bystander (one request at a time, as a load balancer
 * asks) idle and under 16 such requests at once, kept up for a few seconds; and the server's RSS
 * above idle. Goals: /healthz p99 under 50 ms; RSS within idle + 25 MB.
 */
import { spawn } from 'node:child_process';
import { fmt, record, rssOf } from '../lib.js';
import { startPactum } from '../pactum-process.js';
import { probeHealth } from './lib.js';

/**
 * The flooding clients, in a process of their own: writing 16 × 4 MiB bodies keeps an event
 * loop busy, and the bystander's probe in this process must not be the one that waits.
 */
const FLOOD = `
const { request } = require('node:http');
const [url, clients, seconds] = process.argv.slice(1);
const body = Buffer.from('['.repeat(4 << 20));
const until = Date.now() + Number(seconds) * 1000;
const statuses = {};
const post = (path) => new Promise((resolve) => {
  const u = new URL(url);
  const req = request({ host: u.hostname, port: u.port, path, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': body.length } }, (res) => {
    res.resume();
    res.once('end', () => resolve(res.statusCode));
    res.once('error', () => resolve(res.statusCode));
  });
  req.once('error', () => resolve(0));
  req.end(body);
});
Promise.all(Array.from({ length: Number(clients) }, async (_, i) => {
  while (Date.now() < until) {
    const s = await post(i % 2 ? '/api/v1/auth/login' : '/api/v1/mcp');
    statuses[s || 'cut'] = (statuses[s || 'cut'] ?? 0) + 1;
  }
})).then(() => console.log(JSON.stringify(statuses)));
`;

/** `clients` loops, each sending the body again as soon as it is answered, for `seconds`; their answers by status. */
function flood(url: string, clients: number, seconds: number): Promise<Record<string, number>> {
  const child = spawn(process.execPath, ['-e', FLOOD, url, String(clients), String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve) => child.once('exit', () => resolve(JSON.parse(out || '{}') as Record<string, number>)));
}

export default async function deepJson({ quick }: { quick: boolean }) {
  const seconds = quick ? 2 : 8;
  const pactum = await startPactum();
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const idleRss = rssOf(pactum.pid);
    const idle = await probeHealth(pactum.url, new Promise((r) => setTimeout(r, seconds * 500)));
    pactum.resetPeak();
    const flooding = flood(pactum.url, 16, seconds);
    const under = await probeHealth(pactum.url, flooding);
    const statuses = await flooding;
    const peakAbove = (pactum.peak() - idleRss) / 1e6;
    console.log(`/healthz idle               p50 ${fmt(idle.p50, 1)} ms   p99 ${fmt(idle.p99, 1)} ms   (${idle.samples.length} probes)`);
    console.log(`/healthz, 16 deep bodies    p50 ${fmt(under.p50, 1)} ms   p99 ${fmt(under.p99, 1)} ms   max ${fmt(under.max, 1)} ms   (${under.samples.length} probes; answers ${Object.entries(statuses).map(([s, n]) => `${n}×${s}`).join(', ')})`);
    console.log(`RSS idle ${fmt(idleRss / 1e6, 1)} MB, peak under the flood idle + ${fmt(peakAbove, 1)} MB`);
    record(
      { bench: 'fairness', measure: '/healthz p99 under 16 anonymous 4 MiB deep-JSON bodies', value: under.p99, unit: 'ms', baseline: { name: 'idle', value: idle.p99 }, goal: 'under 50 ms', met: under.p99 < 50 },
      { bench: 'fairness', measure: 'peak RSS above idle under the deep-JSON flood', value: peakAbove, unit: 'MB', goal: 'within idle + 25 MB', met: peakAbove <= 25 },
    );
  } finally {
    await pactum.stop();
  }
}
