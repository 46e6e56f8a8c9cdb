/**
 * GET /metrics: where it is served (METRICS_TOKEN on the main port, METRICS_PORT on its own
 * listener), what it refuses, counters that move by what happened, labels from bounded sets only,
 * and an exposition that promtool's linter accepts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { lfsFixture } from '../helpers/git-lfs.js';
import { bearer, mcpClient } from '../helpers/mcp.js';
import { listed } from '../../src/compute/worker-pool.js';

const TOKEN = 'metrics-token-0123456789';
const GIT_LFS = 'application/vnd.git-lfs+json';
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const W = basic('wally', 'wally-password-1');

let s: TestServer;
let userId: string;
let orgId: string;

beforeAll(async () => {
  s = await startTestServer({ METRICS_TOKEN: TOKEN, METRICS_PORT: '0' });
  const { user, org } = await lfsFixture(s.services.db, { org: 'acme', repo: 'site', username: 'wally', password: 'wally-password-1', access: 'write' });
  userId = user.id;
  orgId = org.id;
});
afterAll(() => s.stop());
afterEach(() => s.expectConformant());

const scrape = async (url = `${s.directUrl}/metrics`, token: string | null = TOKEN) => {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(res.status).toBe(200);
  return res.text();
};

/** Parsed samples: name, labels, value. */
function samples(text: string) {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(l)!;
      const labels: Record<string, string> = {};
      for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

/** The value of one series (0 when absent), matched by name and a subset of its labels. */
function value(text: string, name: string, labels: Record<string, string> = {}) {
  return samples(text)
    .filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
    .reduce((n, x) => n + x.value, 0);
}

describe('where /metrics is served', () => {
  it('on the main port only with the bearer METRICS_TOKEN: 401 without it or with another', async () => {
    const none = await fetch(`${s.directUrl}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="pactum metrics"');
    expect((await none.json()).statusCode).toBe(401);
    expect((await fetch(`${s.directUrl}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456780' } })).status).toBe(401);
    expect((await fetch(`${s.directUrl}/metrics`, { headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(401);
    const ok = await fetch(`${s.directUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await ok.text()).toMatch(/^# HELP /m);
  });

  it('on METRICS_PORT, loopback by default, with the token required there too, beside /healthz (without it) and nothing else', async () => {
    expect(s.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${s.metricsUrl}/metrics`)).status).toBe(401);
    expect(await scrape(`${s.metricsUrl}/metrics`)).toMatch(/pactum_http_requests_total/);
    expect((await fetch(`${s.metricsUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${s.metricsUrl}/readyz`)).status).toBe(404);
  });

  it('answers 404 on the main port without METRICS_TOKEN, and a METRICS_PORT listener then needs no token', async () => {
    const plain = await startTestServer({ METRICS_PORT: '0' });
    try {
      const res = await fetch(`${plain.directUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(404);
      expect((await res.json()).message).toBe('Metrics are not served on this port');
      expect(await scrape(`${plain.metricsUrl}/metrics`, null)).toMatch(/pactum_http_requests_total/);
      plain.expectConformant();
    } finally {
      await plain.stop();
    }
  });

  it('refuses a METRICS_TOKEN too short to be a secret, at start', async () => {
    await expect(startTestServer({ METRICS_TOKEN: 'short' })).rejects.toThrow(/METRICS_TOKEN must have at least 16 characters/);
  });
});

describe('what the counters count', () => {
  it('object bytes and uploads by API and transfer, the batch size, and requests by operation and status class', async () => {
    const before = await scrape();
    const bytes = randomBytes(12345);
    const oid = createHash('sha256').update(bytes).digest('hex');
    const bad = randomBytes(100);
    const badOid = createHash('sha256').update(randomBytes(100)).digest('hex');
    const batch = await fetch(`${s.directUrl}/acme/site.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { authorization: W, accept: GIT_LFS, 'content-type': GIT_LFS },
      body: JSON.stringify({ operation: 'upload', transfers: ['basic'], objects: [{ oid, size: bytes.length }, { oid: badOid, size: 100 }] }),
    });
    expect(batch.status).toBe(200);
    const [good, wrong] = (await batch.json()).objects;
    expect((await fetch(good.actions.upload.href, { method: 'PUT', headers: good.actions.upload.header, body: bytes })).status).toBe(200);
    expect((await fetch(wrong.actions.upload.href, { method: 'PUT', headers: wrong.actions.upload.header, body: bad })).status).toBe(422);
    const download = await fetch(`${s.directUrl}/acme/site.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { authorization: W, accept: GIT_LFS, 'content-type': GIT_LFS },
      body: JSON.stringify({ operation: 'download', objects: [{ oid, size: bytes.length }] }),
    });
    const d = (await download.json()).objects[0].actions.download;
    expect(Buffer.from(await (await fetch(d.href, { headers: d.header })).arrayBuffer()).equals(bytes)).toBe(true);
    // A download is counted once the server sees its last write done, which may come a moment
    // after the client has the bytes: the scrape waits for it (bounded), then reads everything.
    let after = await scrape();
    for (let i = 0; i < 50 && value(after, 'pactum_object_downloaded_bytes_total', { api: 'objects', transfer: 'basic' }) - value(before, 'pactum_object_downloaded_bytes_total', { api: 'objects', transfer: 'basic' }) < 12345; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await scrape();
    }
    const delta = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);

    expect(delta('pactum_object_uploaded_bytes_total', { api: 'objects', transfer: 'basic' })).toBe(12345);
    expect(delta('pactum_object_downloaded_bytes_total', { api: 'objects', transfer: 'basic' })).toBe(12345);
    expect(delta('pactum_object_uploads_total', { api: 'objects', transfer: 'basic', outcome: 'verified' })).toBe(1);
    expect(delta('pactum_object_uploads_total', { api: 'objects', transfer: 'basic', outcome: 'refused_hash' })).toBe(1);
    expect(delta('pactum_object_batch_objects_count', { operation: 'upload' })).toBe(1);
    expect(delta('pactum_object_batch_objects_sum', { operation: 'upload' })).toBe(2);
    expect(delta('pactum_http_requests_total', { api: 'batch', operation: 'batch.batch', method: 'POST', status_class: '2xx' })).toBe(2);
    expect(delta('pactum_http_requests_total', { operation: 'objects.upload', status_class: '4xx' })).toBe(1);
    expect(delta('pactum_http_request_duration_seconds_count', { api: 'objects', operation: 'objects.download' })).toBe(1);
    // With STORAGE=s3 (the PostgreSQL + S3 pass) every S3 request is timed by command.
    if (s.services.config.storage.kind === 's3') expect(delta('pactum_s3_request_duration_seconds_count')).toBeGreaterThanOrEqual(2);
    // The scrape itself is in flight while it is collected; nothing else is.
    expect(value(after, 'pactum_http_requests_in_flight')).toBe(1);
    expect(value(after, 'pactum_object_transfers_in_flight', { direction: 'upload' })).toBe(0);
  });

  it('sign-ins by outcome, and MCP tool calls by tool and outcome with their latency and audit rows', async () => {
    const before = await scrape();
    const login = (password: string) =>
      fetch(`${s.directUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ username: 'wally', password }) });
    expect((await login('wrong-password-1')).status).toBe(401);
    expect((await login('wally-password-1')).status).toBe(200);
    const client = await mcpClient(s.url, bearer(await s.token()));
    await client.callTool({ name: 'dashboard_list_reports', arguments: {} });
    await client.callTool({ name: 'dashboard_list_reports', arguments: { limit: 'many' } });
    await client.close();
    await s.services.audit.flush();
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
    expect(delta('pactum_auth_sign_ins_total', { outcome: 'refused' })).toBe(1);
    expect(delta('pactum_auth_sign_ins_total', { outcome: 'ok' })).toBe(1);
    expect(delta('pactum_mcp_tool_calls_total', { tool: 'dashboard_list_reports', outcome: 'ok' })).toBe(1);
    expect(delta('pactum_mcp_tool_calls_total', { tool: 'dashboard_list_reports', outcome: 'invalid_arguments' })).toBe(1);
    expect(delta('pactum_mcp_tool_duration_seconds_count', { tool: 'dashboard_list_reports' })).toBe(2);
    expect(delta('pactum_audit_rows_written_total')).toBe(2);
  });

  it('reads pools and queues when scraped: the database pool, the worker pools, the runtime defaults', async () => {
    const text = await scrape();
    for (const name of ['pactum_db_pool_connections', 'pactum_scans_queued', 'pactum_object_tus_partial_bytes', 'pactum_audit_rows_pending', 'nodejs_eventloop_lag_seconds', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_gc_duration_seconds']) {
      expect(text, name).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    }
    expect(value(text, 'pactum_db_pool_connections', { state: 'used' }) + value(text, 'pactum_db_pool_connections', { state: 'free' })).toBeGreaterThanOrEqual(1);
  });
});

describe('the worker pools', () => {
  it('are read when scraped: running is what is pending and not queued', async () => {
    const pool = { queued: 2, pending: 5 };
    const set = listed('compute');
    set.add(pool);
    try {
      const text = await scrape();
      expect(value(text, 'pactum_worker_pool_tasks', { pool: 'compute', state: 'running' })).toBe(3);
      expect(value(text, 'pactum_worker_pool_tasks', { pool: 'compute', state: 'queued' })).toBe(2);
    } finally {
      set.delete(pool);
    }
  });
});

describe('labels', () => {
  it('come from bounded sets: never a user, org, oid, URL or path', async () => {
    const text = await scrape();
    const allowed = new Set(['api', 'operation', 'method', 'status_class', 'transfer', 'outcome', 'direction', 'tool', 'engine', 'org_class', 'state', 'pool', 'kind', 'what', 'reason', 'le', 'quantile', 'command',
      // prom-client's runtime defaults
      'version', 'major', 'minor', 'patch', 'space', 'type', 'gc']);
    for (const x of samples(text)) {
      for (const [k, v] of Object.entries(x.labels)) {
        expect(allowed.has(k), `${x.name} label ${k}`).toBe(true);
        expect(v).not.toMatch(/\/|[0-9a-f]{64}|^usr_|^org_/);
        expect([userId, orgId, 'acme', 'site', 'wally']).not.toContain(v);
      }
    }
  });
});

describe('the exposition', () => {
  it('passes promtool check metrics (names, types, units, help)', async () => {
    const text = await scrape();
    const run = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(run.error).toBeUndefined();
    expect({ status: run.status, out: `${run.stdout}${run.stderr}`.trim() }).toEqual({ status: 0, out: '' });
  });
});
