/**
 * /healthz latency while members draft fixes for large markup: 3, then 8, dashboard_generate_fix
 * calls at once, each with nearly the most markup a draft takes by default: 2,900 <img> without alt
 * (FIX_MAX_ELEMENTS is 3,000; about 55 kB of htmlContext). The drafting and its diff grow with the markup;
 * run on the event loop they would hold every other request behind them.
 *
 *   make build && npx tsx scripts/bench/fairness.ts --only fix-drafting [--quick]
 */
import { fmt, record } from '../lib.js';
import { startPactum, type Pactum } from '../pactum-process.js';
import { probeHealth, type Probe } from './lib.js';

const HTML = Array.from({ length: 2900 }, (_, i) => `<img src="/i${i}.png">`).join('');
const GOAL_MS = 50;

/** One tools/call as plain JSON-RPC; what it answered: ok, or the tool error's code. */
async function draftFix(p: Pactum, token: string): Promise<string> {
  const res = await fetch(`${p.url}/api/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dashboard_generate_fix', arguments: { wcagCriterion: '1.1.1', issueMessage: 'Images must have alternative text', htmlContext: HTML } } }),
  });
  if (!res.ok) return `HTTP ${res.status}`;
  const body = (await res.json()) as { result?: { isError?: boolean; content: { text: string }[] }; error?: { message: string } };
  if (!body.result) return `JSON-RPC error ${body.error?.message ?? ''}`;
  return body.result.isError ? (JSON.parse(body.result.content[0]!.text) as { error: string }).error : 'ok';
}

const line = (label: string, probe: Probe, extra = '') =>
  console.log(`${label.padEnd(34)} /healthz p50 ${fmt(probe.p50, 1).padStart(7)} ms  p99 ${fmt(probe.p99, 1).padStart(7)} ms  max ${fmt(probe.max, 1).padStart(7)} ms  (${probe.samples.length} probes)${extra}`);

const tally = (outcomes: string[]) => Object.entries(outcomes.reduce<Record<string, number>>((n, o) => ({ ...n, [o]: (n[o] ?? 0) + 1 }), {})).map(([o, n]) => `${n}× ${o}`).join(', ');

export default async function fixDrafting({ quick }: { quick: boolean }) {
  const p = await startPactum();
  try {
    const token = p.cli(['token', '--user', 'bench']).trim();
    const idle = await probeHealth(p.url, new Promise((r) => setTimeout(r, quick ? 1000 : 3000)));
    line('idle', idle);
    // One draft first, so neither build's figures include loading the fix engine.
    const warm = await draftFix(p, token);
    if (warm !== 'ok') throw new Error(`the warm-up draft answered ${warm}`);
    for (const calls of quick ? [3] : [3, 8]) {
      const outcomes: string[] = [];
      const flood = Promise.all(Array.from({ length: calls }, () => draftFix(p, token).then((o) => outcomes.push(o))));
      const probe = await probeHealth(p.url, flood);
      line(`${calls} concurrent generate_fix`, probe, `; calls: ${tally(outcomes)}`);
      record({ bench: 'fairness', measure: `/healthz p99 while ${calls} members draft fixes of 2,900 elements`, value: Math.round(probe.p99 * 10) / 10, unit: 'ms', baseline: { name: 'idle', value: Math.round(idle.p99 * 10) / 10 }, goal: `/healthz p99 under ${GOAL_MS} ms`, met: probe.p99 < GOAL_MS });
      record({ bench: 'fairness', measure: `/healthz max while ${calls} members draft fixes of 2,900 elements`, value: Math.round(probe.max * 10) / 10, unit: 'ms' });
    }
  } finally {
    await p.stop();
  }
}
