/**
 * Scanned pages and one-page scans that try to take the browser from everyone else. A member of
 * org A scans hostile pages of its own site (test/fixtures/hostile, served here on loopback): one
 * that starts 200 spinning Web Workers, one that spins in every frame; then it fires six
 * dashboard_scan_page calls at once at a page that never finishes loading. Meanwhile a member of
 * org B scans one page of an unrelated site with dashboard_scan_page, and /healthz is probed.
 *
 * Each line gives B's scan times and outcomes beside its idle ones, and /healthz's p99. A hole is
 * B's scan failing or taking more than twice its idle time (the goal), or /healthz p99 over
 * 100 ms.
 *
 *   make build && npx tsx scripts/security-replay.ts dist shared-service-pages
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startHostileSite } from '../../test/helpers/hostile-site.js';
import { call, mcp, report, withPactum } from './harness.js';

/** B's scans per part: their median is compared with the idle median. */
const RUNS = Number(process.env.REPLAY_RUNS ?? 5);
const GOAL_RATIO = 2;
const GOAL_HEALTHZ_P99_MS = 100;

/**
 * B's unrelated site (one page with one fault), and A's slow page: its images arrive 9 s after
 * they are asked for (inside the engine's 10 s for a subresource) and each one that arrives asks
 * for another before the load event, so the page never finishes loading within its deadline.
 */
async function sites() {
  const held = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path.startsWith('/slow.png')) {
      held.add(res);
      setTimeout(() => { held.delete(res); if (!res.writableEnded) res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(8)); }, 9000).unref();
      return;
    }
    const body = path === '/slow.html'
      ? '<!doctype html><html lang="en"><title>Slow</title><main><h1>Slow</h1><img src="/slow.png?1" alt="" onload="more(this)" onerror="more(this)"></main><script>let n = 1; function more() { const i = new Image(); i.alt = ""; i.onload = i.onerror = more; i.src = "/slow.png?" + ++n; document.querySelector("main").append(i); }</script></html>'
      : '<!doctype html><html lang="en"><title>Unrelated</title><main><h1>An unrelated site</h1><p>Nothing odd here.</p><img src="/logo.png"></main></html>';
    if (path === '/logo.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(8));
    res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    unrelated: `${origin}/`,
    slow: `${origin}/slow.html`,
    close: () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

interface Outcome { seconds: number; outcome: string }

/** One dashboard_scan_page call: how long it took and what it answered (ok with its issues, or the error). */
async function scanPage(client: Client, url: string): Promise<Outcome> {
  const t0 = performance.now();
  const answer = await call(client, 'dashboard_scan_page', { url }).catch((err: Error) => ({ ok: false, text: JSON.stringify({ error: 'no answer', message: err.message }) }));
  const seconds = (performance.now() - t0) / 1000;
  if (answer.ok) return { seconds, outcome: `ok (${(JSON.parse(answer.text) as { issueCount: number }).issueCount} issues)` };
  const err = JSON.parse(answer.text) as { error: string; message: string };
  return { seconds, outcome: `${err.error}: ${err.message.slice(0, 90)}` };
}

/** /healthz probed one at a time every 20 ms until `done` settles: its latencies (ms). */
async function probeHealth(url: string, done: Promise<unknown>): Promise<number[]> {
  let over = false;
  void done.finally(() => (over = true));
  const times: number[] = [];
  while (!over) {
    const t0 = performance.now();
    await fetch(`${url}/healthz`).then((r) => r.arrayBuffer()).catch(() => null);
    times.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  return times;
}

const p99 = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] ?? 0;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const tally = (xs: string[]) => [...new Set(xs)].map((x) => `${xs.filter((y) => y === x).length}× ${x}`).join('; ');

/** B's RUNS scans, one after another, with /healthz probed meanwhile. */
async function bystander(url: string, b: Client, page: string) {
  const runs: Outcome[] = [];
  const work = (async () => {
    for (let i = 0; i < RUNS; i++) runs.push(await scanPage(b, page));
  })();
  const health = await probeHealth(url, work);
  await work;
  return { runs, median: median(runs.map((r) => r.seconds)), p99: p99(health) };
}

function verdict(part: Awaited<ReturnType<typeof bystander>>, idle: number | null) {
  const times = part.runs.map((r) => r.seconds.toFixed(1)).join(', ');
  const failed = part.runs.some((r) => !r.outcome.startsWith('ok'));
  const ratio = idle ? part.median / idle : 1;
  const holes = [failed && 'B\'s scan failed', ratio > GOAL_RATIO && `over ${GOAL_RATIO}× idle`, part.p99 > GOAL_HEALTHZ_P99_MS && `/healthz p99 over ${GOAL_HEALTHZ_P99_MS} ms`].filter(Boolean);
  return `B: ${tally(part.runs.map((r) => r.outcome))}; ${times} s, median ${part.median.toFixed(2)} s${idle ? ` (${ratio.toFixed(2)}× idle)` : ''}; /healthz p99 ${part.p99.toFixed(1)} ms${holes.length ? ` (hole: ${holes.join(', ')})` : ''}`;
}

export default async function sharedServicePages(dist: string) {
  const hostile = await startHostileSite();
  const other = await sites();
  try {
    await withPactum(dist, { SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'chromium' }, async ({ run, start }) => {
      for (const org of ['hostile', 'bystander']) {
        run(['org', 'create', org]);
        run(['user', 'create', `${org}-member`, '--org', org, '--role', 'member', '--password-stdin'], `${org}-password-123\n`);
      }
      const { url } = await start();
      const a = await mcp(url, run(['token', '--user', 'hostile-member']));
      const b = await mcp(url, run(['token', '--user', 'bystander-member']));
      await scanPage(b, other.unrelated); // the browser is started: only the scans are measured

      const idle = await bystander(url, b, other.unrelated);
      report(`org B's one-page scan of an unrelated site, idle (${RUNS} runs)`, verdict(idle, null));

      /** A scans `page` again and again until B's runs are done: its outcomes. */
      const beside = async (page: string) => {
        let stop = false;
        const outcomes: string[] = [];
        const hog = (async () => {
          while (!stop) outcomes.push((await scanPage(a, hostile.url(page))).outcome.replace(/\d+(\.\d+)? s of CPU/, 'N s of CPU'));
        })();
        await new Promise((r) => setTimeout(r, 500)); // A's page is loaded and doing its worst
        const part = await bystander(url, b, other.unrelated);
        stop = true;
        await hog;
        return { part, a: tally(outcomes) };
      };

      // The reference: what sharing the browser with another org's ordinary pages costs B.
      const ordinary = await beside('/innocent.html');
      report("org A scans an ordinary page again and again; B's one-page scan beside it", `${verdict(ordinary.part, idle.median)}; A's pages: ${ordinary.a}`);
      const workers = await beside('/workers.html');
      report("org A's page starts 200 spinning Web Workers; B's one-page scan beside it", `${verdict(workers.part, idle.median)}; A's pages: ${workers.a}`);
      const frames = await beside('/spin-frames.html');
      report("org A's page spins in four frames (two sites); B's one-page scan beside it", `${verdict(frames.part, idle.median)}; A's pages: ${frames.a}`);
      const escapes = await beside('/escapes.html');
      report("org A's page tries workers from every realm; B's one-page scan beside it", `${verdict(escapes.part, idle.median)}; A's pages: ${escapes.a}`);

      // Six at once on a page that never finishes loading; B asks once they are all under way.
      const t0 = performance.now();
      const floodAnswers: string[] = [];
      const flood = Promise.all(Array.from({ length: 6 }, () => scanPage(a, other.slow).then((o) => floodAnswers.push(`${o.outcome.split(':')[0]} after ${Math.round(o.seconds)} s`))));
      await new Promise((r) => setTimeout(r, 1500));
      const slots = await bystander(url, b, other.unrelated);
      // Every one of A's calls is answered: none waits without end.
      await Promise.race([flood, new Promise((r) => setTimeout(r, 150_000))]);
      const waiting = 6 - floodAnswers.length;
      report("org A: six concurrent dashboard_scan_page calls on a slow page; B's scan_page", `${verdict(slots, idle.median)}; A's calls: ${tally(floodAnswers.sort())}${waiting ? `; ${waiting} unanswered after ${Math.round((performance.now() - t0) / 1000)} s (hole)` : ''}`);
      await a.close().catch(() => undefined);
      await b.close().catch(() => undefined);
    });
  } finally {
    await hostile.close();
    await other.close();
  }
}
