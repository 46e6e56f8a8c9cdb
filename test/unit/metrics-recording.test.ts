/**
 * Metrics are recorded only where they can be read (telemetry/metrics.ts): a server without METRICS_PORT
 * or METRICS_TOKEN keeps an empty registry, whatever its code counts.
 */
import { expect, it } from 'vitest';
import { createMetrics } from '../../src/telemetry/metrics.js';

const exercise = (m: ReturnType<typeof createMetrics>) => {
  m.http.requests.inc({ api: 'dashboard', operation: 'mcp.post', method: 'POST', status_class: '2xx' });
  m.http.duration.observe({ api: 'dashboard', operation: 'mcp.post' }, 0.002);
  m.http.inFlight.inc();
  m.mcp.calls.inc({ tool: 'dashboard_get_org', outcome: 'ok' });
  m.mcp.calls.inc({ tool: 'dashboard_get_org', outcome: 'ok' }, 2);
  m.mcp.calls.inc({ tool: 'dashboard_get_org', outcome: 'forbidden' });
  m.mcp.calls.inc({ tool: 'dashboard_list_orgs', outcome: 'ok' });
  m.mcp.auditRows.inc(3);
  m.http.inFlight.inc();
  m.http.cut.inc({ reason: 'body_rate' });
  const end = m.mcp.duration.startTimer({ tool: 'dashboard_get_org' });
  end();
};

it('records nothing when the metrics cannot be read', async () => {
  const m = createMetrics({ recording: false });
  // The gauges read from the services when scraped are not even registered.
  m.observe({ scanLoad: { load: () => Promise.resolve([]), maxRunningPerOrg: 1 }, freeBytes: () => Promise.resolve(0) });
  exercise(m);
  expect(m.registry.getMetricsAsArray()).toHaveLength(0);
  expect((await m.registry.metrics()).trim()).toBe('');
  expect((await m.http.cut.get()).values).toEqual([]);
});

it('records what its code counts when they can', async () => {
  const m = createMetrics();
  exercise(m);
  const text = await m.registry.metrics();
  expect(text).toMatch(/^pactum_http_requests_total\{api="dashboard",operation="mcp.post",method="POST",status_class="2xx"\} 1$/m);
  expect(text).toMatch(/^pactum_mcp_tool_calls_total\{tool="dashboard_get_org",outcome="ok"\} 3$/m);
  expect(text).toMatch(/^pactum_mcp_tool_calls_total\{tool="dashboard_get_org",outcome="forbidden"\} 1$/m);
  expect(text).toMatch(/^pactum_mcp_tool_calls_total\{tool="dashboard_list_orgs",outcome="ok"\} 1$/m);
  expect(text).toMatch(/^pactum_audit_rows_written_total 3$/m);
  expect(text).toMatch(/^pactum_http_requests_in_flight 2$/m);
  expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  // Scraped again: the same totals, not counted twice.
  const again = await m.registry.metrics();
  for (const line of text.split('\n').filter((l) => l.startsWith('pactum_'))) expect(again).toContain(line);
  // A histogram's buckets are cumulative, and +Inf, _sum and _count close each series.
  m.http.duration.observe({ api: 'dashboard', operation: 'mcp.post' }, 0.02);
  m.http.duration.observe({ api: 'dashboard', operation: 'mcp.post' }, 400);
  const h = (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('pactum_http_request_duration_seconds'));
  const series = '{api="dashboard",operation="mcp.post"';
  expect(h).toContain(`pactum_http_request_duration_seconds_bucket${series},le="0.005"} 1`);
  expect(h).toContain(`pactum_http_request_duration_seconds_bucket${series},le="0.01"} 1`);
  expect(h).toContain(`pactum_http_request_duration_seconds_bucket${series},le="0.025"} 2`);
  expect(h).toContain(`pactum_http_request_duration_seconds_bucket${series},le="300"} 2`);
  expect(h).toContain(`pactum_http_request_duration_seconds_bucket${series},le="+Inf"} 3`);
  expect(h).toContain(`pactum_http_request_duration_seconds_sum${series}} 400.022`);
  expect(h).toContain(`pactum_http_request_duration_seconds_count${series}} 3`);
  expect(text).toMatch(/^# TYPE pactum_http_request_duration_seconds histogram$/m);
});
