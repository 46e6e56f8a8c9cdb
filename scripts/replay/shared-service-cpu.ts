/**
 * CPU-heavy tools on a shared service: members drafting fixes for large markup must not stall
 * everyone else's requests. /healthz is probed throughout; its worst latency over 1 s is a hole
 * (a load balancer's health check gives up at about that).
 *
 *   make build && npx tsx scripts/security-replay.ts dist shared-service-cpu
 */
import { report, withPactum } from './harness.js';

const HOLE_MS = 1000;
/** 100 kB, 6,000 images without alt: about 1.5 s of drafting each. */
const LARGE = Array.from({ length: 6000 }, (_, i) => `<img src="/i${i}.png">`).join('').slice(0, 100_000);
/** 6,000 images one a line: every line of the diff changes, so the diff runs far longer than the draft. */
const RUNAWAY = Array.from({ length: 6000 }, (_, i) => `<img src="/i${i}.png">`).join('\n').slice(0, 100_000);

/** dashboard_generate_fix as plain JSON-RPC; ok, or the tool error's code. */
async function draft(url: string, token: string, htmlContext: string): Promise<string> {
  const res = await fetch(`${url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_generate_fix', arguments: { wcagCriterion: '1.1.1', issueMessage: 'Images must have alternative text', htmlContext } } }),
  }).catch((err: Error) => err);
  if (res instanceof Error) return `no answer (${res.message})`;
  const body = (await res.json().catch(() => null)) as { result?: { isError?: boolean; content: { text: string }[] } } | null;
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
}
