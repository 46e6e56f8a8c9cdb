/**
 * CPU-heavy tools on a shared service: members drafting fixes for large markup must not stall
 * everyone else's requests. /healthz is probed throughout; its worst latency over 1 s is a hole
 * (a load balancer's health check gives up at about that).
 *
 * Then markup whose drafting grew with the cube of its nesting (700 nested <div>, 3.5 kB) or with
 * the square of its fields (2,000 <input>), alone and as one member's flood of 17 calls, while a
 * member of another org reads its report page and SARIF export: that page must stay within twice
 * its idle time, /healthz within 100 ms at p99, and every call of the flood must be answered.
 *
 *   make build && npx tsx scripts/security-replay.ts dist shared-service-cpu
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, mcp, report, withPactum } from './harness.js';

const HOLE_MS = 1000;
/** 100 kB, 6,000 images without alt: about 1.5 s of drafting each. */
const LARGE = Array.from({ length: 6000 }, (_, i) => `<img src="/i${i}.png">`).join('').slice(0, 100_000);
/** 6,000 images one a line: every line of the diff changes, so the diff runs far longer than the draft. */
const RUNAWAY = Array.from({ length: 6000 }, (_, i) => `<img src="/i${i}.png">`).join('\n').slice(0, 100_000);

/** 700 nested <div> around a fake heading: 3.5 kB whose drafting took the 30 s compute limit. */
const NESTED = `${'<div>'.repeat(700)}<p><b>Opening hours</b></p>${'</div>'.repeat(700)}`;
/** 2,000 unlabelled fields: their labels took minutes to draft. */
const FIELDS = Array.from({ length: 2000 }, (_, i) => `<input name="field_${i}">`).join('');
const DEEP_FIX = { wcagCriterion: '1.3.1', issueMessage: 'Heading markup should be used', htmlContext: NESTED };
const WIDE_FIX = { wcagCriterion: '4.1.2', issueMessage: 'Form elements must have labels', htmlContext: FIELDS };
/** How long a client of the flood waits for its answer. */
const CLIENT_PATIENCE_MS = 120_000;

type DraftArgs = { wcagCriterion: string; issueMessage: string; htmlContext: string };

/** dashboard_generate_fix as plain JSON-RPC; ok, or the tool error's code, or no answer within `patienceMs`. */
async function draft(url: string, token: string, htmlContext: string | DraftArgs, patienceMs?: number): Promise<string> {
  const args = typeof htmlContext === 'string' ? { wcagCriterion: '1.1.1', issueMessage: 'Images must have alternative text', htmlContext } : htmlContext;
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_generate_fix', arguments: args } }),
    ...(patienceMs ? { signal: AbortSignal.timeout(patienceMs) } : {}),
  }).catch((err: Error) => err);
  if (res instanceof Error) return res.name === 'TimeoutError' ? `no answer within ${patienceMs! / 1000} s` : `no answer (${res.message})`;
  const body = (await res.json().catch((err: Error) => err)) as { result?: { isError?: boolean; content: { text: string }[] } } | Error | null;
  if (body instanceof Error) return body.name === 'TimeoutError' ? `no answer within ${patienceMs! / 1000} s` : `HTTP ${res.status}`;
  if (!body?.result) return `HTTP ${res.status}`;
  return body.result.isError ? (JSON.parse(body.result.content[0]!.text) as { error: string }).error : 'ok';
}

/** The worst /healthz latency (one probe at a time, every 20 ms) until `work` settles. */
async function worstHealth(url: string, work: Promise<unknown>): Promise<number> {
  let done = false;
  void work.finally(() => (done = true));
  let worst = 0;
  while (!done) {
    const t0 = performance.now();
    await fetch(`${url}/healthz`).then((r) => r.arrayBuffer()).catch(() => null);
    worst = Math.max(worst, performance.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  return worst;
}

const verdict = (worstMs: number) => `worst /healthz ${Math.round(worstMs)} ms${worstMs > HOLE_MS ? ' (hole)' : ''}`;
const tally = (outcomes: string[]) => [...new Set(outcomes)].map((o) => `${outcomes.filter((x) => x === o).length}× ${o}`).join(', ');

export default async function sharedServiceCpu(dist: string) {
  // A short compute limit so the runaway diff is judged in seconds (an older build ignores it).
  await withPactum(dist, { COMPUTE_TIMEOUT_MS: '5000' }, async ({ run, start }) => {
    run(['org', 'create', 'acme']);
    run(['user', 'create', 'mia', '--org', 'acme', '--role', 'member', '--password-stdin'], 'mia-password-123\n');
    const token = run(['token', '--user', 'mia']);
    const { url } = await start();
    await draft(url, token, '<img src="/warm.png">'); // the fix engine is loaded: only the flood is measured

    const outcomes: string[] = [];
    const flood = Promise.all(Array.from({ length: 8 }, () => draft(url, token, LARGE).then((o) => outcomes.push(o))));
    const worst = await worstHealth(url, flood);
    report('8 members draft fixes of 100 kB markup (6,000 <img>) at once', `${verdict(worst)}; calls: ${tally(outcomes)}`);

    let answer = '';
    const runaway = draft(url, token, RUNAWAY).then((o) => (answer = o));
    const worstRunaway = await worstHealth(url, runaway);
    report('a fix draft whose diff runs away (6,000 changed lines)', `${verdict(worstRunaway)}; call: ${answer}`);
  });
  await costlyMarkup(dist);
}

/** A one-page site with a few issues on loopback, for the bystander's scan. */
async function bystanderSite() {
  const page = '<!doctype html><html lang="en"><title>Opening hours</title><main><h1>Opening hours</h1><img src="/a.png"><img src="/b.png"><a href="/x">Read more</a><input name="q"></main></html>';
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
};
const ms = (x: number) => `${Math.round(x)} ms`;

/** GET `path` with the bystander's token: its status and how long it took. */
async function timedGet(url: string, path: string, token: string) {
  const t0 = performance.now();
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}`, accept: path.endsWith('.sarif') ? 'application/sarif+json' : 'text/html' } }).catch(() => null);
  await res?.arrayBuffer().catch(() => null);
  return { status: res?.status ?? 0, ms: performance.now() - t0 };
}

/** While `work` runs: /healthz probed every 20 ms, and the bystander's report page and export read one after the other. */
async function bystanderDuring(url: string, token: string, scanId: string, work: Promise<unknown>) {
  let done = false;
  void work.finally(() => (done = true));
  const health: number[] = [];
  const pages: { status: number; ms: number }[] = [];
  const exports: number[] = [];
  const probe = (async () => {
    while (!done) {
      const t0 = performance.now();
      await fetch(`${url}/healthz`).then((r) => r.arrayBuffer()).catch(() => null);
      health.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const read = (async () => {
    while (!done) {
      pages.push(await timedGet(url, `/reports/${scanId}`, token));
      exports.push((await timedGet(url, `/reports/${scanId}.sarif`, token)).status);
    }
  })();
  await Promise.all([work, probe, read]);
  return { health, pages, exports };
}

const statuses = (xs: number[]) => tally(xs.map((x) => (x === 0 ? 'no answer' : String(x))));

/** The bystander's experience beside its idle one: its report page's median within twice the idle median, /healthz p99 within 100 ms, nothing refused. */
function judged(idle: number[], seen: Awaited<ReturnType<typeof bystanderDuring>>): string {
  const pageMs = seen.pages.map((p) => p.ms);
  const [median, idleMedian, p99] = [quantile(pageMs, 0.5), quantile(idle, 0.5), quantile(seen.health, 0.99)];
  const holes = [
    ...(median > 2 * idleMedian ? ['report page over 2x its idle time'] : []),
    ...(p99 > 100 ? ['/healthz p99 over 100 ms'] : []),
    ...(seen.pages.some((p) => p.status !== 200) || seen.exports.some((x) => x !== 200) ? ['report refused'] : []),
  ];
  return (
    `other org's report page median ${ms(median)}, p95 ${ms(quantile(pageMs, 0.95))} (idle ${ms(idleMedian)}, p95 ${ms(quantile(idle, 0.95))}; ` +
    `${statuses(seen.pages.map((p) => p.status))}), export ${statuses(seen.exports)}; /healthz p99 ${ms(p99)}, worst ${ms(Math.max(...seen.health))}` +
    (holes.length ? ` (hole: ${holes.join(', ')})` : '')
  );
}

/**
 * An attacker keeps at it: `attack` again and again until `SUSTAIN_MS` have passed (once, when
 * it takes longer), so that a bystander beside an attack refused at once is judged on more than
 * the one or two requests it sends in that instant.
 */
const SUSTAIN_MS = 3000;
async function sustained(attack: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  let rounds = 0;
  do {
    await attack();
    rounds++;
  } while (performance.now() - t0 < SUSTAIN_MS);
  return rounds;
}

/** The markup whose drafting cost grew with its nesting or its fields, and one member's flood of it. */
export async function costlyMarkup(dist: string) {
  const site = await bystanderSite();
  try {
    // The build's own compute defaults; a local site for the bystander's scan.
    await withPactum(dist, { SCAN_ALLOW_PRIVATE_NETWORKS: 'true', SCAN_ENGINE: 'jsdom' }, async ({ run, start }) => {
      for (const org of ['acme', 'bystander']) {
        run(['org', 'create', org]);
        run(['user', 'create', `${org}-member`, '--org', org, '--role', 'member', '--password-stdin'], `${org}-password-123\n`);
      }
      const token = run(['token', '--user', 'acme-member']);
      const bystander = run(['token', '--user', 'bystander-member']);
      const { url } = await start();
      const b = await mcp(url, bystander);
      const started = await call(b, 'dashboard_scan_site', { siteUrl: `${site.origin}/`, scanMode: 'single' });
      const scanId = (JSON.parse(started.text) as { scanId: string }).scanId;
      for (let i = 0; i < 600; i++) {
        const p = JSON.parse((await call(b, 'dashboard_get_scan_progress', { scanId })).text) as { finished: boolean };
        if (p.finished) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await b.close();
      await draft(url, token, '<img src="/warm.png">'); // the fix engine is loaded
      const idle: number[] = [];
      for (let i = 0; i < 40; i++) idle.push((await timedGet(url, `/reports/${scanId}`, bystander)).ms);

      for (const [attack, args] of [
        ['dashboard_generate_fix, 700 nested <div> (3.5 kB) for 1.3.1', DEEP_FIX],
        ['dashboard_generate_fix, 2,000 <input> for 4.1.2', WIDE_FIX],
      ] as const) {
        let answer = '';
        let rounds = 0;
        const t0 = performance.now();
        const calls = sustained(() => draft(url, token, args, CLIENT_PATIENCE_MS).then((o) => (answer ||= `${o} after ${((performance.now() - t0) / 1000).toFixed(1)} s`)));
        const seen = await bystanderDuring(url, bystander, scanId, calls.then((n) => (rounds = n)));
        report(attack, `call: ${answer}${rounds > 1 ? ` (sent ${rounds} times over ${SUSTAIN_MS / 1000} s)` : ''}; ${judged(idle, seen)}`);
      }

      for (const [attack, args] of [
        ['one member sends 17 of the 700-<div> drafts at once', DEEP_FIX],
        ['one member sends 17 of the 2,000-<input> drafts at once', WIDE_FIX],
      ] as const) {
        const outcomes: string[] = [];
        let rounds = 0;
        const t0 = performance.now();
        const burst = () => Promise.all(Array.from({ length: 17 }, () => draft(url, token, args, CLIENT_PATIENCE_MS).then((o) => outcomes.push(o))));
        const seen = await bystanderDuring(url, bystander, scanId, sustained(burst).then((n) => (rounds = n)));
        report(attack, `calls: ${tally(outcomes)} (${rounds} burst${rounds > 1 ? 's' : ''}, all in ${((performance.now() - t0) / 1000).toFixed(1)} s); ${judged(idle, seen)}`);
      }
    });
  } finally {
    await site.close();
  }
}
