/**
 * What the fairness parts share: the latency a bystander sees on /healthz while a flood runs.
 */
import { median } from '../lib.js';

export interface Probe {
  /** Milliseconds per /healthz request, in order. */
  samples: number[];
  p50: number;
  p99: number;
  max: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;

/**
 * Asks `url`/healthz every `everyMs` until `until` resolves (one request at a time, as a load
 * balancer's health check does), and summarises the latencies.
 */
export async function probeHealth(url: string, until: Promise<unknown>, everyMs = 20): Promise<Probe> {
  const samples: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const t0 = performance.now();
    await fetch(`${url}/healthz`).then((r) => r.arrayBuffer()).catch(() => null);
    samples.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples, p50: median(samples), p99: quantile(sorted, 0.99), max: sorted[sorted.length - 1] ?? NaN };
}
