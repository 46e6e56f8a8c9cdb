/**
 * The operator's documents hold together with the code: the alerting rules pass `promtool check
 * rules` and their unit tests (`promtool test rules`), every metric the rules and the Grafana
 * dashboard name is one the server exports, and docs/operating.md lists every pactum_ metric.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/telemetry/metrics.js';

const PROMTOOL = '/usr/bin/promtool';
const read = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');

function exported(): Set<string> {
  const metrics = createMetrics();
  // Registers the gauges read when scraped (nothing is read here: no scrape happens).
  metrics.observe({ scanLoad: { load: () => Promise.resolve([]), maxRunningPerOrg: 1 }, freeBytes: () => Promise.resolve(0) });
  return new Set(metrics.registry.getMetricsAsArray().map((m) => m.name));
}

/** Metric names in PromQL text, histogram and summary series folded into their metric. */
const namesIn = (text: string) =>
  new Set([...text.matchAll(/\b((?:pactum|nodejs|process)_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_(bucket|count|sum)$/, '')));

describe('docs/observability', () => {
  it('alerts.yml passes promtool check rules', () => {
    const run = spawnSync(PROMTOOL, ['check', 'rules', 'docs/observability/alerts.yml'], { encoding: 'utf8' });
    expect(run.error).toBeUndefined();
    expect(run.stdout).toMatch(/SUCCESS: 5 rules found/);
    expect(run.status).toBe(0);
  });

  it('each alert fires on series that should fire it and not on healthy ones (promtool test rules)', () => {
    const run = spawnSync(PROMTOOL, ['test', 'rules', 'alerts.test.yml'], { encoding: 'utf8', cwd: 'test/fixtures/observability' });
    expect(run.error).toBeUndefined();
    expect(`${run.stdout}${run.stderr}`).toMatch(/SUCCESS/);
    expect(run.status).toBe(0);
  });

  it('names only metrics the server exports, in the rules and in the dashboard', () => {
    const have = exported();
    const dashboard = JSON.parse(read('docs/observability/grafana-dashboard.json')) as { panels: { targets: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)).join('\n');
    const used = new Set([...namesIn(exprs), ...namesIn(read('docs/observability/alerts.yml'))]);
    expect(used.size).toBeGreaterThan(15);
    expect([...used].filter((n) => !have.has(n))).toEqual([]);
  });

  it('docs/operating.md describes every pactum_ metric', () => {
    const doc = read('docs/operating.md');
    const missing = [...exported()].filter((n) => n.startsWith('pactum_') && !doc.includes(`\`${n}`));
    expect(missing).toEqual([]);
  });
});
